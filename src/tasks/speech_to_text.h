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

struct SpeechEncoderOutputs {
  Value* encoder_hidden_states;               // [batch, encoder_sequence_length, hidden_size]
  std::vector<std::vector<KVPair>> present;   // [layer][state]: the cross_kv states of decoder_states()
  Value* encoder_attention_mask = nullptr;    // int64 [batch, encoder_sequence_length]: waveform only
};

struct SpeechDecoderInputs {
  Value* input_ids;
  std::vector<std::vector<KVPair>> past;  // [layer][state], as decoder_states()
  Value* encoder_attention_mask = nullptr;  // int64 [batch, encoder_sequence_length]: waveform only
};

struct SpeechDecoderOutputs {
  Value* logits;
  std::vector<std::vector<KVPair>> present;  // [layer][state]: the self_kv states of decoder_states()
};

class SpeechToText : public Architecture {
 public:
  std::string task() const override { return "speech-to-text"; }
  // "encoder", then "decoder".
  std::vector<NamedGraph> build_graphs() const override;

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
  // One decoder step (prefill or decode) as the contract above says.
  virtual SpeechDecoderOutputs decode(Ops& op, const SpeechDecoderInputs& in) const = 0;

 private:
  Model build_encoder() const;
  Model build_decoder() const;
};

}  // namespace mobius
