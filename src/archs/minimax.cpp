// MiniMax-Text-01 (transformers/models/minimax/modeling_minimax.py MiniMaxForCausalLM;
// configuration_minimax.py MiniMaxConfig, 5.23): softmax attention layers (Mixtral's
// MiniMaxAttention: q/k/v/o without bias, RoPE from rope_parameters, default_theta 1e6; every such
// layer slides by sliding_window when it is set) interleaved with lightning attention layers
// (blocks/lightning_attention.h, under self_attn as well), Mixtral's sparse MoE on every layer:
//   model.embed_tokens -> model.layers.{i} -> model.norm -> lm_head (untied by default)
//   MiniMaxDecoderLayer, the residual taken after each norm (LayerTopology::residual_from_norm)
//   and weighted (ResidualScales):
//     r = input_layernorm(x);  h = alpha * r + beta * self_attn(r)
//       (alpha, beta: full_attn_alpha_factor / full_attn_beta_factor on "full_attention" layers,
//        linear_attn_alpha_factor / linear_attn_beta_factor on "linear_attention" layers; default 1)
//     r' = post_attention_layernorm(h);  out = mlp_alpha_factor * r' + mlp_beta_factor * mlp(r')
//   mlp: MiniMaxSparseMoeBlock (softmax top-k of num_local_experts, renormalized), saved as Mixtral's
//     block_sparse_moe.gate / experts.{e}.w1 (gate) / w3 (up) / w2 (down) (conversion_mapping.py
//     "minimax": "mixtral"); hidden_act in the experts and after the lightning qkv_proj
// MiniMaxConfig.__post_init__: without layer_types, layer i is "full_attention" when i is even,
// "linear_attention" when odd. block_size is not read: the lightning layers' closed form holds for
// any block (blocks/lightning_attention.h).
// Checkpoint tensors not read: each lightning layer's slope_rate, query_decay, key_decay and
// diagonal_decay buffers, functions of the config that the graph computes (not reported unused).
// States: an attention layer past_key_values.{i}.key|value; a lightning layer
// past_key_values.{i}.linear_cache [batch_size, num_attention_heads, head_dim, head_dim]
// (transformers' MiniMaxCache.linear_cache; docs/design.md "The state model"). onnxruntime-genai
// 0.18 reads no such state (its "decoder" type takes a linear-attention layer's conv_state and
// recurrent_state): no genai model type.
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/lightning_attention.h"

namespace mobius {

namespace {

class MiniMaxCausalLM : public DecoderCausalLM {
 public:
  using DecoderCausalLM::DecoderCausalLM;
  // the lightning layers' decay buffers (blocks/lightning_attention.h), computed from the config
  bool training_only(const std::string& key) const override {
    for (const char* buffer : {".slope_rate", ".query_decay", ".key_decay", ".diagonal_decay"})
      if (key.ends_with(buffer)) return true;
    return DecoderCausalLM::training_only(key);
  }
};

// The residual weights `alpha_key` / `beta_key` of a layer type's attention and the MLP's.
ResidualScales minimax_scales(const HfConfig& c, const std::string& alpha_key, const std::string& beta_key) {
  return {.attn_residual = static_cast<float>(c.float_or(alpha_key, 1.0)),
          .attn_output = static_cast<float>(c.float_or(beta_key, 1.0)),
          .mlp_residual = static_cast<float>(c.float_or("mlp_alpha_factor", 1.0)),
          .mlp_output = static_cast<float>(c.float_or("mlp_beta_factor", 1.0))};
}

}  // namespace

std::unique_ptr<Architecture> create_minimax(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qkv_bias = s.attention.o_bias = false;  // MiniMaxAttention (attention_bias not read)
  s.mlp.bias = false;                                 // MiniMaxExperts (mlp_bias not read)
  const int64_t n = s.num_hidden_layers;
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < n; ++i) fallback.push_back(i % 2 == 0 ? "full_attention" : "linear_attention");
  s.layer_types = read_layer_list(c, "layer_types", n, {"full_attention", "linear_attention"}, fallback);
  if (c.has("sliding_window")) {  // MiniMaxModel: the "full_attention" layers' mask slides
    s.sliding_window = c.get_int("sliding_window");
    if (s.sliding_window <= 0) c.fail("sliding_window", "must be positive");
    std::replace(s.layer_types.begin(), s.layer_types.end(), std::string("full_attention"),
                 std::string("sliding_attention"));
  }

  s.names.mlp = "block_sparse_moe";
  s.topology = LayerTopology::residual_from_norm;
  const ResidualScales full = minimax_scales(c, "full_attn_alpha_factor", "full_attn_beta_factor");
  s.layer_type_layout["full_attention"] = {s.topology, s.names, full};
  s.layer_type_layout["sliding_attention"] = {s.topology, s.names, full};
  s.layer_type_layout["linear_attention"] = {s.topology, s.names,
                                             minimax_scales(c, "linear_attn_alpha_factor", "linear_attn_beta_factor")};

  const LightningAttentionOptions lightning{.hidden_size = s.hidden_size,
                                            .num_heads = s.attention.num_attention_heads,
                                            .head_dim = s.attention.head_dim,
                                            .layer_index = 0,
                                            .num_hidden_layers = n,
                                            .hidden_act = s.mlp.hidden_act,
                                            .dtype = dtype};
  s.make_mixer = [lightning, types = s.layer_types](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "linear_attention") return LayerMixer{};
    LightningAttentionOptions o = lightning;
    o.layer_index = layer;
    return LayerMixer{"self_attn", std::make_unique<LightningAttention>(o)};
  };

  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.norm_topk_prob = true;  // MiniMaxTopKRouter: the top-k renormalized
  m.gate_name = "w1";
  m.up_name = "w3";
  m.down_name = "w2";
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return std::make_unique<MiniMaxCausalLM>(s);
}

}  // namespace mobius
