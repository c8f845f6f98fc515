// The pre-norm decoder stack of Llama-like models (transformers/models/llama/modeling_llama.py):
//   h = x + self_attn(input_layernorm(x)); out = h + mlp(post_attention_layernorm(h))
// DecoderCausalLM = model.embed_tokens -> model.layers.* -> model.norm -> lm_head (or the tied
// embedding), with one RoPE table and one causal mask shared by all layers.
#pragma once

#include "blocks/attention.h"
#include "blocks/mlp.h"
#include "tasks/text_generation.h"

namespace mobius {

struct DecoderSpec {
  int64_t vocab_size;
  int64_t hidden_size;
  int64_t num_hidden_layers;
  float rms_norm_eps = 1e-6f;
  bool tie_word_embeddings = false;
  int64_t sliding_window = 0;           // window of "sliding_attention" layers
  std::vector<std::string> layer_types;  // per layer: "full_attention" | "sliding_attention"
  AttentionOptions attention;
  MLPOptions mlp;
  RopeConfig rope;
  DataType dtype = DataType::FLOAT;
};

class DecoderLayer : public Module {
 public:
  explicit DecoderLayer(const DecoderSpec& s);
  // Returns the layer output and the layer's present key/value.
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const;
  RMSNorm *input_layernorm, *post_attention_layernorm;
  Attention* self_attn;
  GatedMLP* mlp;
};

class TextDecoder : public Module {
 public:
  explicit TextDecoder(const DecoderSpec& s);
  Embedding* embed_tokens;
  std::vector<DecoderLayer*> layers;
  RMSNorm* norm;
};

class DecoderCausalLM : public CausalLM {
 public:
  explicit DecoderCausalLM(const DecoderSpec& s);
  DataType dtype() const override { return spec_.dtype; }
  int64_t vocab_size() const override { return spec_.vocab_size; }
  CacheLayout cache_layout() const override;
  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override;

  TextDecoder* model;
  Linear* lm_head = nullptr;  // null when tied to model.embed_tokens

 private:
  DecoderSpec spec_;
};

}  // namespace mobius
