// Task speech-to-text: an encoder-decoder over audio (transformers AutoModelForSpeechSeq2Seq:
// Whisper, Moonshine). For Whisper, the two graphs of onnxruntime-genai's "whisper" model type
// (src/models/whisper.cpp; the names its 0.18 model builder writes, docs/speech.md):
//   encoder: audio_features [batch_size, num_mel_bins, num_frames] float (num_frames = 3000 for
//            Whisper: 30 s of 10 ms frames)
//         -> encoder_hidden_states [batch_size, encoder_sequence_length, hidden_size]
//            present_key_cross_{i}, present_value_cross_{i}
//              [batch_size, num_heads, encoder_sequence_length, head_dim]
//   decoder: input_ids [batch_size, sequence_length] int64
//            past_key_self_{i}, past_value_self_{i} [batch_size, num_heads, past_sequence_length, head_dim]
//            past_key_cross_{i}, past_value_cross_{i} (the encoder's present_*_cross_{i})
//         -> logits [batch_size, sequence_length, vocab_size]
//            present_key_self_{i}, present_value_self_{i}
//              [batch_size, num_heads, total_sequence_length, head_dim]
// A model on the raw waveform (SpeechInput::waveform: Moonshine, which onnxruntime-genai 0.18 has
// no model type for) reads instead
//   encoder: input_values [batch_size, sequence_length] float, attention_mask [batch_size,
//            sequence_length] int64 (1 = sample, 0 = padding)
// and the encoder also outputs encoder_attention_mask [batch_size, encoder_sequence_length] int64
// (1 = a frame of the row's audio), which the decoder takes as an input of the same name (the
// cross-attention's padding mask); encoder_sequence_length is then symbolic.
// The encoder computes every decoder layer's cross-attention keys and values once; the decoder
// reads them at every step and never outputs them. The decoder has no attention_mask and no
// position_ids: its input is never padded (every row starts with the same forced prompt), and query
// row j sits at position past_sequence_length + j. Float tensors are in the model dtype.
// The cache inputs and outputs are derived from decoder_states(): a self_kv state is "self", a
// cross_kv state "cross" (tasks/layer_state.h).
// With SpeechContract::optimum (--runtime optimum), the two graphs of Optimum's
// ORTModelForSpeechSeq2Seq and transformers.js (optimum-onnx exporters/onnx/model_configs.py
// WhisperOnnxConfig, MoonshineOnnxConfig; the names of the text2text-generation decoder):
//   encoder: input_features [batch_size, num_mel_bins, num_frames] (log_mel), or input_values
//            and attention_mask (waveform) -> last_hidden_state [batch_size,
//            encoder_sequence_length, hidden_size]
//   decoder: input_ids, encoder_attention_mask (waveform: the samples' attention_mask, reduced to
//            the frames as the encoder does), encoder_hidden_states [batch_size,
//            encoder_sequence_length, hidden_size], past_key_values.{i}.decoder|encoder.key|value
//         -> logits, present.{i}.decoder|encoder.key|value
//            The cross cache is projected from encoder_hidden_states while it is empty and carried
//            once filled, encoder_hidden_states then ignored (CrossAttention::forward): the clients
//            pass it at every step.
#pragma once

#include <vector>

#include "tasks/architecture.h"
#include "tasks/layer_state.h"

namespace mobius {

// What the encoder graph reads.
enum class SpeechInput {
  log_mel,   // audio_features [batch, num_mel_bins, num_frames] (Whisper)
  waveform,  // input_values [batch, samples] + attention_mask (Moonshine)
};

// The I/O contract of the two graphs (above).
enum class SpeechContract { ort_genai, optimum };

struct SpeechEncoderOutputs {
  Value* encoder_hidden_states;               // [batch, encoder_sequence_length, hidden_size]
  Value* encoder_attention_mask = nullptr;    // int64 [batch, encoder_sequence_length]: waveform only
};

struct SpeechDecoderInputs {
  Value* input_ids;
  std::vector<std::vector<KVPair>> past;  // [layer][state], as decoder_states()
  Value* encoder_attention_mask = nullptr;  // int64 [batch, encoder_sequence_length]: waveform only
  // [batch, encoder_sequence_length, hidden_size] (optimum): the cross states' source while their
  // cache is empty; null (ort_genai): the cross caches are the encoder's.
  Value* encoder_hidden_states = nullptr;
};

struct SpeechDecoderOutputs {
  Value* logits;
  // [layer][state]: the self_kv states of decoder_states(), and with encoder_hidden_states the
  // cross_kv states too, in decoder_states() order
  std::vector<std::vector<KVPair>> present;
};

class SpeechToText : public Architecture {
 public:
  std::string task() const override { return "speech-to-text"; }
  // "encoder", then "decoder".
  std::vector<NamedGraph> build_graphs() const override;
  // onnxruntime-genai's files (tasks/genai_config.h) for --runtime ort-genai: genai_config.json and audio_processor_config.json for the "whisper" type (nothing for a type genai has none for: moonshine, docs/speech.md)
  void write_runtime_files(const RuntimeFilesContext& ctx, const std::string& dir) const override;
  // The contract build_graphs() writes (default ort_genai).
  void set_contract(SpeechContract c) { contract_ = c; }

  virtual DataType dtype() const = 0;
  virtual int64_t hidden_size() const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual SpeechInput speech_input() const { return SpeechInput::log_mel; }
  virtual int64_t num_mel_bins() const { return 0; }  // of audio_features (log_mel)
  virtual int64_t num_frames() const { return 0; }    // of audio_features (log_mel)
  virtual Dim encoder_sequence_length() const = 0;    // of encoder_hidden_states
  // The states of each decoder layer, in the order of its cache inputs.
  virtual std::vector<LayerStates> decoder_states() const = 0;
  // audio: audio_features [batch, num_mel_bins, num_frames] (log_mel; attention_mask null) or
  // input_values [batch, samples] with attention_mask int64 [batch, samples] (waveform)
  // -> the encoder's outputs.
  virtual SpeechEncoderOutputs encode(Ops& op, Value* audio, Value* attention_mask) const = 0;
  // Every decoder layer's cross-attention keys and values of encoder_hidden_states [batch,
  // encoder_sequence_length, hidden_size]: [layer][state], the cross_kv states of decoder_states().
  virtual std::vector<std::vector<KVPair>> project_cross(Ops& op, Value* encoder_hidden_states) const = 0;
  // waveform: the frame mask int64 [batch, encoder_sequence_length] of the samples' attention_mask
  // [batch, samples] for encoder_hidden_states (what encode() outputs as encoder_attention_mask).
  virtual Value* frame_mask(Ops& op, Value* attention_mask, Value* encoder_hidden_states) const { return nullptr; }
  // One decoder step (prefill or decode) as the contract above says.
  virtual SpeechDecoderOutputs decode(Ops& op, const SpeechDecoderInputs& in) const = 0;

 private:
  Model build_encoder() const;
  Model build_decoder() const;
  SpeechContract contract_ = SpeechContract::ort_genai;
};

}  // namespace mobius
