#include "tasks/speech_to_text.h"

#include "util/error.h"

namespace mobius {

namespace {

// past_key_self_{i} / present_value_cross_{i}: onnxruntime-genai's whisper names;
// past_key_values.{i}.decoder.key / present.{i}.encoder.value: Optimum's (as text2text-generation).
std::string cache_name(SpeechContract c, bool past, const char* kv, StateKind kind, size_t layer) {
  const bool self = kind == StateKind::self_kv;
  if (c == SpeechContract::optimum)
    return std::string(past ? "past_key_values." : "present.") + std::to_string(layer) + (self ? ".decoder." : ".encoder.") + kv;
  return std::string(past ? "past_" : "present_") + kv + (self ? "_self_" : "_cross_") + std::to_string(layer);
}

}  // namespace

std::vector<NamedGraph> SpeechToText::build_graphs() const {
  std::vector<NamedGraph> graphs;
  graphs.emplace_back(GraphPath{"encoder", hf_graph::encoder}, build_encoder(), GraphLowering::attention);
  graphs.emplace_back(GraphPath{"decoder", hf_graph::decoder}, build_decoder(), GraphLowering::attention);
  return graphs;
}

Model SpeechToText::build_encoder() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const bool optimum = contract_ == SpeechContract::optimum;
  const std::vector<LayerStates> states = decoder_states();
  const bool waveform = speech_input() == SpeechInput::waveform;
  Value* audio = waveform ? b.input("input_values", dtype(), {"batch_size", "sequence_length"})
                          : b.input(optimum ? "input_features" : "audio_features", dtype(),
                                    {"batch_size", num_mel_bins(), num_frames()});
  Value* mask = waveform ? b.input("attention_mask", DataType::INT64, {"batch_size", "sequence_length"}) : nullptr;
  SpeechEncoderOutputs out = encode(op, audio, mask);
  MOBIUS_ASSERT(waveform == (out.encoder_attention_mask != nullptr), "an encoder_attention_mask for waveform input");
  const Shape hidden{"batch_size", encoder_sequence_length(), hidden_size()};
  if (optimum) {
    b.output(out.encoder_hidden_states, "last_hidden_state", hidden);
    return model;
  }
  b.output(out.encoder_hidden_states, "encoder_hidden_states", hidden);
  if (waveform)
    b.output(out.encoder_attention_mask, "encoder_attention_mask", {"batch_size", encoder_sequence_length()});
  const std::vector<std::vector<KVPair>> cross = project_cross(op, out.encoder_hidden_states);
  MOBIUS_ASSERT(cross.size() == states.size(), "one cross present per decoder layer");
  for (size_t i = 0; i < states.size(); ++i) {
    size_t j = 0;
    for (const LayerState& s : states[i]) {
      if (s.kind != StateKind::cross_kv) continue;
      MOBIUS_ASSERT(j < cross[i].size(), "one present per cross state");
      const Shape shape{"batch_size", s.num_heads, encoder_sequence_length(), s.head_dim};
      b.output(cross[i][j].key, cache_name(contract_, false, "key", s.kind, i), shape);
      b.output(cross[i][j].value, cache_name(contract_, false, "value", s.kind, i), shape);
      ++j;
    }
  }
  return model;
}

Model SpeechToText::build_decoder() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const bool optimum = contract_ == SpeechContract::optimum;
  const DataType dt = dtype();
  const std::vector<LayerStates> states = decoder_states();
  SpeechDecoderInputs in;
  in.input_ids = b.input("input_ids", DataType::INT64, {"batch_size", optimum ? "decoder_sequence_length" : "sequence_length"});
  const bool waveform = speech_input() == SpeechInput::waveform;
  Value* samples_mask = waveform && optimum
                            ? b.input("encoder_attention_mask", DataType::INT64, {"batch_size", "audio_sequence_length"})
                            : nullptr;
  if (waveform && !optimum)
    in.encoder_attention_mask =
        b.input("encoder_attention_mask", DataType::INT64, {"batch_size", encoder_sequence_length()});
  if (optimum)
    in.encoder_hidden_states =
        b.input("encoder_hidden_states", dt, {"batch_size", "encoder_hidden_sequence_length", hidden_size()});
  if (samples_mask) {
    in.encoder_attention_mask = frame_mask(op, samples_mask, in.encoder_hidden_states);
    MOBIUS_ASSERT(in.encoder_attention_mask, "a waveform model gives its frame_mask");
  }
  for (size_t i = 0; i < states.size(); ++i) {
    in.past.emplace_back();
    for (const LayerState& s : states[i]) {
      const bool self = s.kind == StateKind::self_kv;
      const Dim past = optimum ? Dim(self ? "past_decoder_sequence_length" : "past_encoder_sequence_length")
                               : self ? Dim("past_sequence_length") : encoder_sequence_length();
      const Shape shape{"batch_size", s.num_heads, past, s.head_dim};
      in.past.back().push_back({b.input(cache_name(contract_, true, "key", s.kind, i), dt, shape),
                                b.input(cache_name(contract_, true, "value", s.kind, i), dt, shape)});
    }
  }
  SpeechDecoderOutputs out = decode(op, in);
  MOBIUS_ASSERT(out.present.size() == states.size(), "one present per decoder layer");
  b.output(out.logits, "logits", {"batch_size", optimum ? "decoder_sequence_length" : "sequence_length", vocab_size()});
  for (size_t i = 0; i < states.size(); ++i) {
    size_t j = 0;
    for (const LayerState& s : states[i]) {
      if (s.kind != StateKind::self_kv && !optimum) continue;
      MOBIUS_ASSERT(j < out.present[i].size(), "one present per state");
      const Dim total = s.kind != StateKind::self_kv ? encoder_sequence_length()
                        : optimum                    ? Dim("total_decoder_sequence_length")
                                                     : Dim("total_sequence_length");
      const Shape shape{"batch_size", s.num_heads, total, s.head_dim};
      b.output(out.present[i][j].key, cache_name(contract_, false, "key", s.kind, i), shape);
      b.output(out.present[i][j].value, cache_name(contract_, false, "value", s.kind, i), shape);
      ++j;
    }
  }
  return model;
}

}  // namespace mobius
