// Zamba causal LMs: state-space layers with a shared transformer block applied every few layers
// on the concatenation of the hidden states and the original embeddings
// (transformers/models/zamba/modeling_zamba.py ZambaForCausalLM, models/zamba2/modeling_zamba2.py
// Zamba2ForCausalLM, arXiv:2405.16712 fig. 2):
//   model.embed_tokens -> e; h = e
//   model.layers.{i} ("linear_attention"): h = h + mamba(input_layernorm(h))
//   model.layers.{i} ("hybrid"), the a-th hybrid layer (its application a of the shared block
//   a % num_mem_blocks):
//     t = shared(h, e) = feed_forward(pre_ff_layernorm(self_attn(input_layernorm(concat(h, e)))))
//     h = h + mamba_decoder.mamba(mamba_decoder.input_layernorm(h + linear(t)))
//   -> model.final_layernorm -> lm_head (tied to the embeddings where configured)
// The shared block (ZambaSharedBlock) has no residual of its own; its attention reads the 2 H
// wide input with heads of head_dim = 2 H / heads and scores scaled by (head_dim / 2)^-0.5.
// Shared weights: block b is stored under the b-th hybrid layer, model.layers.{i}.<shared_name>
// (save_pretrained drops the tied copies of the others); without tie_word_embeddings transformers
// ties nothing and every hybrid layer holds its own copy (ZambaSpec::share_blocks). Zamba2's blocks also hold the low-rank
// adapters of each of their applications a, e.g. self_attn.linear_q_adapter_list.{a}.0 / .1
// (blocks/low_rank_adapter.h).
// States (tasks/layer_state.h): a Mamba layer carries its mixer's past_key_values.{i}.conv_state
// and .recurrent_state; a hybrid layer the shared attention's .key and .value as well.
// onnxruntime-genai 0.18 has no model type for a layer with both (its "decoder" reads one kind
// per layer): build with --runtime none.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blocks/attention.h"
#include "blocks/linear.h"
#include "blocks/low_rank_adapter.h"
#include "blocks/norms.h"
#include "config/rope_config.h"
#include "tasks/text_generation.h"

namespace mobius {

struct ZambaSharedOptions {
  int64_t hidden_size;  // H: the block reads 2 H (concat(hidden, embeddings)) and returns H
  int64_t num_attention_heads;
  int64_t num_key_value_heads;
  int64_t head_dim;
  int64_t intermediate_size;
  std::string hidden_act = "gelu";  // of the gated MLP
  float rms_norm_eps = 1e-5f;
  bool mlp_bias = false;        // Zamba2's add_bias_linear on gate_up_proj / down_proj
  bool fused_gate_up = false;   // Zamba2MLP's gate_up_proj (gate = first half); else ZambaMLP's gate_proj, up_proj
  // Zamba2: the applications of this block (indices among the model's hybrid layers) that own
  // low-rank adapters of rank adapter_rank, on gate_up_proj and, with attention_adapters, on
  // q_proj, k_proj and v_proj (each path 2 H -> rank -> 2 H); empty: none
  std::vector<int64_t> adapted_applications = {};
  bool attention_adapters = false;
  int64_t adapter_rank = 0;
  DataType dtype = DataType::FLOAT;
};

// The shared transformer block (ZambaAttentionDecoderLayer, Zamba2AttentionDecoderLayer).
class ZambaSharedBlock : public Module {
 public:
  // Throws mobius::FieldError for sizes out of range.
  explicit ZambaSharedBlock(const ZambaSharedOptions& o);
  LayerState state() const;  // the attention's KV cache (self_kv)
  // h, e: [batch, seq, H]; ctx: the causal mask and, with RoPE (Zamba2's use_mem_rope), its
  // tables; past_key / past_value [batch, kv_heads, past_seq, head_dim]; application: which hybrid
  // layer applies the block (its adapters). Returns the block's output [batch, seq, H] and the cache.
  AttentionResult forward(Ops& op, Value* h, Value* e, const AttentionContext& ctx, Value* past_key,
                          Value* past_value, int64_t application) const;

 private:
  class SelfAttn;
  class FeedForward;
  ZambaSharedOptions o_;
  RMSNorm *input_layernorm, *pre_ff_layernorm;
  SelfAttn* self_attn;
  FeedForward* feed_forward;
};

struct ZambaSpec {
  int64_t vocab_size;
  int64_t hidden_size;
  std::vector<std::string> layer_types;  // "linear_attention" or "hybrid", one per layer
  float rms_norm_eps = 1e-5f;
  bool tie_word_embeddings = true;
  std::string shared_name;  // the block's child name: "shared_transf" (Zamba), "shared_transformer" (Zamba2)
  int64_t num_mem_blocks = 1;  // the blocks, applied in turn by the hybrid layers
  // the hybrid layers applying one block share its weights (under the first of them); false: each
  // holds its own copy (transformers ties the blocks, like the LM head, only with
  // tie_word_embeddings: PreTrainedModel.get_expanded_tied_weights_keys)
  bool share_blocks = true;
  // block b (below num_mem_blocks); it checks its own sizes
  std::function<std::unique_ptr<ZambaSharedBlock>(int64_t block)> make_shared_block = {};
  // layer i's Mamba mixer (model.layers.{i}.mamba, or .mamba_decoder.mamba on a hybrid layer)
  std::function<std::unique_ptr<TokenMixer>(int64_t layer)> make_mixer = {};
  std::optional<RopeConfig> rope = std::nullopt;  // the shared attention's RoPE (Zamba2's use_mem_rope); none: no position encoding
  DataType dtype = DataType::FLOAT;
};

class ZambaCausalLM : public CausalLM {
 public:
  // Throws mobius::FieldError for vocab_size or the layer count out of range, and what the
  // factories throw.
  explicit ZambaCausalLM(const ZambaSpec& s);
  DataType dtype() const override { return s_.dtype; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> layer_states() const override;
  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override;

 private:
  class MambaLayer;
  class HybridLayer;
  class Backbone;
  ZambaSpec s_;
  Backbone* model_;
  LMHead* lm_head_;
};

// The layer types of a Zamba config: layers_block_type (alias layer_types), with
// remap_legacy_layer_types' names ("mamba" -> "linear_attention"), each "linear_attention" or
// "hybrid"; `fallback` when absent or null. Throws mobius::Error naming the field.
std::vector<std::string> zamba_layer_types(const HfConfig& c, std::vector<std::string> fallback);

}  // namespace mobius
