// Task text-generation: a causal LM with its layers' states under ONNX Runtime GenAI's default names.
//   inputs : input_ids [batch_size, sequence_length] int64
//            attention_mask [batch_size, total_sequence_length] int64
//            position_ids [batch_size, sequence_length] int64
//            past_key_values.{i}.{name}: each state tensor of layer i (tasks/layer_state.h), e.g.
//              past_key_values.{i}.key|value [batch_size, num_key_value_heads, past_sequence_length, head_dim]
//              past_key_values.{i}.conv_state [batch_size, channels, kernel - 1] (a Mamba layer)
//              past_key_values.{i}.recurrent_state [batch_size, channels, d_state]
//   outputs: logits [batch_size, sequence_length, vocab_size]
//            present.{i}.{name}: the same tensors after the step (an appended state's sequence axis
//              is total_sequence_length: present.{i}.key|value [batch_size, num_key_value_heads,
//              total_sequence_length, head_dim]; a replaced state keeps its shape)
// Float tensors are in the model dtype unless the state tensor names its own. The state inputs and
// outputs are derived from the layers' states (layer_states(), state_tensors: a self-attention
// layer's self_kv or sliding_kv, its heads and head sizes; a sliding layer's cache holds every
// position too, its mask applying the window; the values' last axis is LayerState::value_head_dim
// where it differs from the keys', DeepSeek multi-head latent attention, blocks/mla.h; a recurrent
// layer's own tensors). The names are onnxruntime-genai's: it reads past_key_values.%d.key|value
// and, for its recurrent models, past_key_values.%d.conv_state|recurrent_state (transformers'
// cache attributes conv_states / recurrent_states).
#pragma once

#include <vector>

#include "tasks/architecture.h"
#include "tasks/layer_state.h"

namespace mobius {

// The state tensors of every layer: [layer][tensor], each layer's in the order of state_tensors()
// over its LayerStates (a self-attention layer: {key, value}).
using LayerStateValues = std::vector<std::vector<Value*>>;

struct CausalLMInputs {
  Value* input_ids;
  Value* attention_mask;
  Value* position_ids;
  LayerStateValues past;
  // [batch, sequence_length, hidden_size] in the model dtype: the decoder starts from these
  // embeddings instead of looking up input_ids (null then; tasks/image_text_to_text.h)
  Value* inputs_embeds = nullptr;
  // bool, broadcastable to [batch, 1, sequence_length, total_sequence_length]: pairs every
  // layer's mask also allows beyond causality (blocks/attention.h causal_mask's overlay; the
  // image-text-to-text task's hook, tasks/image_text_to_text.h attention_overlay); null: causal
  Value* attention_overlay = nullptr;
};

struct CausalLMOutputs {
  Value* logits;
  LayerStateValues present;
};

// Whether a layer's state is the {conv_state, recurrent_state} pair onnxruntime-genai 0.18 reads
// by name in a hybrid (past_conv_names, past_recurrent_names: package/genai_config.cpp).
bool is_genai_recurrent(const LayerStates& layer);
// Whether a layer's state is the one {conv_state} window onnxruntime-genai 0.18's "lfm2" type
// reads by name (past_conv_names; layer type "conv", LFM2's short convolution).
bool is_genai_conv(const LayerStates& layer);

// The one cache layout every KV layer shares (a hybrid's is_genai_recurrent / is_genai_conv layers have none; a
// model whose layers are all is_genai_recurrent, Mamba, has 0 heads of size 0), as
// onnxruntime-genai's config and the --try-generic self-check describe a cache
// (CausalLM::cache_layout).
struct CacheLayout {
  int64_t num_layers;
  int64_t num_key_value_heads;
  int64_t head_dim;        // of the keys
  int64_t v_head_dim = 0;  // of the values, when it differs from head_dim; 0 = head_dim
};

// The graph inputs past_key_values.{i}.{name} of the layers' state tensors (state_tensors), in
// their dtype (the model dtype `dt` where they name none).
LayerStateValues past_inputs(GraphBuilder& b, DataType dt, const std::vector<LayerStates>& states);
// The graph outputs present.{i}.{name}: `present` holds one value per state tensor of each layer.
void present_outputs(GraphBuilder& b, const LayerStateValues& present, const std::vector<LayerStates>& states);

class CausalLM : public Architecture {
 public:
  std::string task() const override { return "text-generation"; }
  std::vector<NamedGraph> build_graphs() const override {
    return single_graph(build_model(), GraphLowering::causal_lm);
  }
  // The one graph, "model".
  Model build_model() const;
  // genai_config.json (tasks/genai_config.h) for --runtime ort-genai, of type ctx.genai_type.
  void write_runtime_files(const RuntimeFilesContext& ctx, const std::string& dir) const override;

  virtual DataType dtype() const = 0;
  virtual int64_t vocab_size() const = 0;
  // Each layer's states (a self_kv or sliding_kv; a recurrent state), from which the state
  // inputs and outputs and the runtime config (tasks/genai_config.h) are derived.
  virtual std::vector<LayerStates> layer_states() const = 0;
  // The layout all KV layers share; throws mobius::Error when their caches differ or a layer
  // carries a state other than one self-attention cache or {conv_state, recurrent_state}.
  CacheLayout cache_layout() const;
  virtual CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const = 0;
};

}  // namespace mobius
