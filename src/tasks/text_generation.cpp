#include "tasks/text_generation.h"

#include "util/error.h"

namespace mobius {

namespace {

// The one self-attention cache state (self_kv or sliding_kv) of layer `i`.
const LayerState& self_kv(const std::vector<LayerStates>& states, size_t i) {
  MOBIUS_ASSERT(states[i].size() == 1 && is_self_attention_cache(states[i][0]),
                "text-generation layer " + std::to_string(i) + " carries one self-attention cache");
  return states[i][0];
}

int64_t value_head_dim(const LayerState& s) { return s.value_head_dim ? s.value_head_dim : s.head_dim; }

}  // namespace

KVCache past_inputs(GraphBuilder& b, DataType dt, const std::vector<LayerStates>& states) {
  KVCache past;
  for (size_t i = 0; i < states.size(); ++i) {
    const LayerState& s = self_kv(states, i);
    const std::string p = "past_key_values." + std::to_string(i);
    past.key.push_back(b.input(p + ".key", dt, {"batch_size", s.num_heads, "past_sequence_length", s.head_dim}));
    past.value.push_back(
        b.input(p + ".value", dt, {"batch_size", s.num_heads, "past_sequence_length", value_head_dim(s)}));
  }
  return past;
}

void present_outputs(GraphBuilder& b, const KVCache& present, const std::vector<LayerStates>& states) {
  MOBIUS_ASSERT(present.key.size() == states.size() && present.value.size() == states.size(), "present count");
  for (size_t i = 0; i < states.size(); ++i) {
    const LayerState& s = self_kv(states, i);
    const std::string p = "present." + std::to_string(i);
    b.output(present.key[i], p + ".key", {"batch_size", s.num_heads, "total_sequence_length", s.head_dim});
    b.output(present.value[i], p + ".value", {"batch_size", s.num_heads, "total_sequence_length", value_head_dim(s)});
  }
}

CacheLayout CausalLM::cache_layout() const {
  const std::vector<LayerStates> states = layer_states();
  MOBIUS_ASSERT(!states.empty(), "a causal LM has layers");
  const LayerState& first = self_kv(states, 0);
  for (size_t i = 1; i < states.size(); ++i) {
    const LayerState& s = self_kv(states, i);
    if (s.num_heads != first.num_heads || s.head_dim != first.head_dim || value_head_dim(s) != value_head_dim(first))
      throw Error("layer " + std::to_string(i) + "'s cache differs from layer 0's: one cache layout for every layer "
                  "is what onnxruntime-genai reads; build with --runtime none");
  }
  return {static_cast<int64_t>(states.size()), first.num_heads, first.head_dim, first.value_head_dim};
}

Model CausalLM::build_model() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const std::vector<LayerStates> states = layer_states();
  CausalLMInputs in;
  in.input_ids = b.input("input_ids", DataType::INT64, {"batch_size", "sequence_length"});
  in.attention_mask =
      b.input("attention_mask", DataType::INT64, {"batch_size", "total_sequence_length"});
  in.position_ids = b.input("position_ids", DataType::INT64, {"batch_size", "sequence_length"});
  in.past = past_inputs(b, dtype(), states);
  CausalLMOutputs out = forward(op, in);
  b.output(out.logits, "logits", {"batch_size", "sequence_length", vocab_size()});
  present_outputs(b, out.present, states);
  return model;
}

}  // namespace mobius
