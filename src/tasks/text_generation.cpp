#include "tasks/text_generation.h"

#include "util/error.h"

namespace mobius {

namespace {

// The one self-attention cache state (self_kv or sliding_kv) of layer `i`.
const LayerState& self_kv(const std::vector<LayerStates>& states, size_t i) {
  if (states[i].size() != 1 || !is_self_attention_cache(states[i][0]))
    throw Error("onnxruntime-genai cannot run this model: layer " + std::to_string(i) + " carries a state other than "
                "one self-attention cache (a recurrent or convolutional state); build with --runtime none (the "
                "package runs in onnxruntime with the I/O of docs/design.md \"The state model\")");
  return states[i][0];
}

int64_t value_head_dim(const LayerState& s) { return s.value_head_dim ? s.value_head_dim : s.head_dim; }

}  // namespace

bool is_genai_recurrent(const LayerStates& layer) {
  if (layer.size() != 1 || layer[0].kind != StateKind::recurrent) return false;
  const std::vector<StateTensor>& t = layer[0].tensors;
  return t.size() == 2 && t[0].name == "conv_state" && t[1].name == "recurrent_state";
}

bool is_genai_conv(const LayerStates& layer) {
  return layer.size() == 1 && layer[0].kind == StateKind::recurrent && layer[0].tensors.size() == 1 &&
         layer[0].tensors[0].name == "conv_state";
}

namespace {

std::string layer_name(const char* prefix, size_t i, const StateTensor& t) {
  return prefix + std::to_string(i) + "." + t.name;
}

// The tensors of layer i's states, in order; their names are unique within the layer.
std::vector<StateTensor> layer_tensors(const LayerStates& states, size_t i) {
  std::vector<StateTensor> out;
  for (const LayerState& s : states)
    for (StateTensor& t : state_tensors(s)) {
      for (const StateTensor& u : out)
        MOBIUS_ASSERT(u.name != t.name, "layer " + std::to_string(i) + " declares state tensor " + t.name + " twice");
      out.push_back(std::move(t));
    }
  return out;
}

}  // namespace

LayerStateValues past_inputs(GraphBuilder& b, DataType dt, const std::vector<LayerStates>& states) {
  LayerStateValues past(states.size());
  for (size_t i = 0; i < states.size(); ++i)
    for (const StateTensor& t : layer_tensors(states[i], i))
      past[i].push_back(b.input(layer_name("past_key_values.", i, t),
                                t.dtype == DataType::UNDEFINED ? dt : t.dtype, t.shape));
  return past;
}

void present_outputs(GraphBuilder& b, const LayerStateValues& present, const std::vector<LayerStates>& states) {
  MOBIUS_ASSERT(present.size() == states.size(), "present count");
  for (size_t i = 0; i < states.size(); ++i) {
    const std::vector<StateTensor> tensors = layer_tensors(states[i], i);
    MOBIUS_ASSERT(present[i].size() == tensors.size(), "layer " + std::to_string(i) + "'s present count");
    for (size_t j = 0; j < tensors.size(); ++j) {
      Shape shape = tensors[j].shape;
      if (tensors[j].update == StateUpdate::append) shape.at(static_cast<size_t>(tensors[j].axis)) = "total_sequence_length";
      b.output(present[i][j], layer_name("present.", i, tensors[j]), shape);
    }
  }
}

CacheLayout CausalLM::cache_layout() const {
  const std::vector<LayerStates> states = layer_states();
  MOBIUS_ASSERT(!states.empty(), "a causal LM has layers");
  // a hybrid's recurrent layers (conv_state, recurrent_state, or conv_state alone: the names
  // onnxruntime-genai reads, package/genai_config.cpp) carry no KV cache; the others one each, of
  // one layout
  std::vector<size_t> kv;
  for (size_t i = 0; i < states.size(); ++i)
    if (!is_genai_recurrent(states[i]) && !is_genai_conv(states[i])) kv.push_back(i);
  if (kv.empty()) return {static_cast<int64_t>(states.size()), 0, 0};  // a state-space model: no KV cache
  const LayerState& first = self_kv(states, kv[0]);
  for (size_t i : kv) {
    const LayerState& s = self_kv(states, i);
    if (s.num_heads != first.num_heads || s.head_dim != first.head_dim || value_head_dim(s) != value_head_dim(first))
      throw Error("layer " + std::to_string(i) + "'s cache differs from layer " + std::to_string(kv[0]) +
                  "'s: one cache layout for every layer is what onnxruntime-genai reads; build with --runtime none");
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
