#include "tasks/speech_to_text.h"

#include "util/error.h"

namespace mobius {

namespace {

// past_key_self_{i} / present_value_cross_{i}: onnxruntime-genai's whisper names.
std::string cache_name(const char* io, const char* kv, StateKind kind, size_t layer) {
  return std::string(io) + "_" + kv + (kind == StateKind::self_kv ? "_self_" : "_cross_") + std::to_string(layer);
}

}  // namespace

std::vector<NamedGraph> SpeechToText::build_graphs() const {
  std::vector<NamedGraph> graphs;
  graphs.emplace_back("encoder", build_encoder(), GraphLowering::attention);
  graphs.emplace_back("decoder", build_decoder(), GraphLowering::attention);
  return graphs;
}

Model SpeechToText::build_encoder() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const std::vector<LayerStates> states = decoder_states();
  const bool waveform = speech_input() == SpeechInput::waveform;
  Value* audio = waveform ? b.input("input_values", dtype(), {"batch_size", "sequence_length"})
                          : b.input("audio_features", dtype(), {"batch_size", num_mel_bins(), num_frames()});
  Value* mask = waveform ? b.input("attention_mask", DataType::INT64, {"batch_size", "sequence_length"}) : nullptr;
  SpeechEncoderOutputs out = encode(op, audio, mask);
  MOBIUS_ASSERT(out.present.size() == states.size(), "one cross present per decoder layer");
  MOBIUS_ASSERT(waveform == (out.encoder_attention_mask != nullptr), "an encoder_attention_mask for waveform input");
  b.output(out.encoder_hidden_states, "encoder_hidden_states",
           {"batch_size", encoder_sequence_length(), hidden_size()});
  if (waveform)
    b.output(out.encoder_attention_mask, "encoder_attention_mask", {"batch_size", encoder_sequence_length()});
  for (size_t i = 0; i < states.size(); ++i) {
    size_t j = 0;
    for (const LayerState& s : states[i]) {
      if (s.kind != StateKind::cross_kv) continue;
      MOBIUS_ASSERT(j < out.present[i].size(), "one present per cross state");
      const Shape shape{"batch_size", s.num_heads, encoder_sequence_length(), s.head_dim};
      b.output(out.present[i][j].key, cache_name("present", "key", s.kind, i), shape);
      b.output(out.present[i][j].value, cache_name("present", "value", s.kind, i), shape);
      ++j;
    }
  }
  return model;
}

Model SpeechToText::build_decoder() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const DataType dt = dtype();
  const std::vector<LayerStates> states = decoder_states();
  SpeechDecoderInputs in;
  in.input_ids = b.input("input_ids", DataType::INT64, {"batch_size", "sequence_length"});
  if (speech_input() == SpeechInput::waveform)
    in.encoder_attention_mask =
        b.input("encoder_attention_mask", DataType::INT64, {"batch_size", encoder_sequence_length()});
  for (size_t i = 0; i < states.size(); ++i) {
    in.past.emplace_back();
    for (const LayerState& s : states[i]) {
      const bool self = s.kind == StateKind::self_kv;
      const Shape shape{"batch_size", s.num_heads, self ? Dim("past_sequence_length") : encoder_sequence_length(),
                        s.head_dim};
      in.past.back().push_back({b.input(cache_name("past", "key", s.kind, i), dt, shape),
                                b.input(cache_name("past", "value", s.kind, i), dt, shape)});
    }
  }
  SpeechDecoderOutputs out = decode(op, in);
  MOBIUS_ASSERT(out.present.size() == states.size(), "one present per decoder layer");
  b.output(out.logits, "logits", {"batch_size", "sequence_length", vocab_size()});
  for (size_t i = 0; i < states.size(); ++i) {
    size_t j = 0;
    for (const LayerState& s : states[i]) {
      if (s.kind != StateKind::self_kv) continue;
      MOBIUS_ASSERT(j < out.present[i].size(), "one present per self state");
      const Shape shape{"batch_size", s.num_heads, "total_sequence_length", s.head_dim};
      b.output(out.present[i][j].key, cache_name("present", "key", s.kind, i), shape);
      b.output(out.present[i][j].value, cache_name("present", "value", s.kind, i), shape);
      ++j;
    }
  }
  return model;
}

}  // namespace mobius
