#include "tasks/text2text_generation.h"

#include "blocks/cross_attention.h"
#include "util/error.h"

namespace mobius {

namespace {

// The cache tensors' names and sequence-axis names of one state kind.
struct StateNames {
  const char* part;  // ".decoder" / ".encoder" in past_key_values.{i}<part>.key
  const char* past_length;
  const char* present_length;
};

StateNames state_names(StateKind kind) {
  switch (kind) {
    case StateKind::self_kv:
      return {"decoder", "past_decoder_sequence_length", "total_decoder_sequence_length"};
    case StateKind::cross_kv:
      return {"encoder", "past_encoder_sequence_length", "encoder_sequence_length"};
    case StateKind::sliding_kv:  // no encoder-decoder layer has a window
    case StateKind::recurrent:   // nor a recurrent state
    case StateKind::attention_side:
      break;
  }
  MOBIUS_ASSERT(false, "a text2text-generation decoder layer carries self_kv and cross_kv states");
  return {};
}

}  // namespace

Seq2SeqStepMasks seq2seq_step_masks(Ops& op, const Seq2SeqDecoderInputs& in, DataType dtype) {
  Value* past = op.Shape(in.past[0][0].key, {.start = 2, .end = 3});
  return {past, decoder_causal_mask(op, in.input_ids, past, dtype),
          cross_attention_mask(op, in.encoder_attention_mask, in.input_ids, dtype)};
}

std::vector<NamedGraph> Seq2SeqLM::build_graphs() const {
  std::vector<NamedGraph> graphs;
  graphs.emplace_back(GraphPath{"encoder", hf_graph::encoder}, build_encoder(), GraphLowering::attention);
  graphs.emplace_back(GraphPath{"decoder", hf_graph::decoder}, build_decoder(), GraphLowering::attention);
  return graphs;
}

Model Seq2SeqLM::build_encoder() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const Shape tokens{"batch_size", "encoder_sequence_length"};
  Value* ids = b.input("input_ids", DataType::INT64, tokens);
  Value* mask = b.input("attention_mask", DataType::INT64, tokens);
  b.output(encode(op, ids, mask), "last_hidden_state", {"batch_size", "encoder_sequence_length", hidden_size()});
  return model;
}

Model Seq2SeqLM::build_decoder() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const DataType dt = dtype();
  const std::vector<LayerStates> states = decoder_states();
  Seq2SeqDecoderInputs in;
  in.input_ids = b.input("input_ids", DataType::INT64, {"batch_size", "decoder_sequence_length"});
  in.encoder_attention_mask =
      b.input("encoder_attention_mask", DataType::INT64, {"batch_size", "encoder_sequence_length"});
  in.encoder_hidden_states =
      b.input("encoder_hidden_states", dt, {"batch_size", "encoder_hidden_sequence_length", hidden_size()});
  for (size_t i = 0; i < states.size(); ++i) {
    in.past.emplace_back();
    for (const LayerState& s : states[i]) {
      const StateNames n = state_names(s.kind);
      const std::string p = "past_key_values." + std::to_string(i) + "." + n.part;
      const Shape shape{"batch_size", s.num_heads, n.past_length, s.head_dim};
      in.past.back().push_back({b.input(p + ".key", dt, shape), b.input(p + ".value", dt, shape)});
    }
  }
  Seq2SeqDecoderOutputs out = decode(op, in);
  MOBIUS_ASSERT(out.present.size() == states.size(), "one present per decoder layer");
  b.output(out.logits, "logits", {"batch_size", "decoder_sequence_length", vocab_size()});
  for (size_t i = 0; i < states.size(); ++i) {
    MOBIUS_ASSERT(out.present[i].size() == states[i].size(), "one present per layer state");
    for (size_t j = 0; j < states[i].size(); ++j) {
      const LayerState& s = states[i][j];
      const StateNames n = state_names(s.kind);
      const std::string p = "present." + std::to_string(i) + "." + n.part;
      const Shape shape{"batch_size", s.num_heads, n.present_length, s.head_dim};
      b.output(out.present[i][j].key, p + ".key", shape);
      b.output(out.present[i][j].value, p + ".value", shape);
    }
  }
  return model;
}

}  // namespace mobius
