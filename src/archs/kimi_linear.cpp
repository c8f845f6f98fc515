// Kimi Linear (transformers/models/kimi_linear/modeling_kimi_linear.py KimiLinearForCausalLM;
// configuration_kimi_linear.py KimiLinearConfig, 5.23): Kimi Delta Attention layers and multi-head
// latent attention layers, Llama's pre-norm layer, a DeepSeek-V3 MoE or a dense MLP:
//   model.embed_tokens -> model.layers.{i}: h = x + self_attn(input_layernorm(x));
//     out = h + mlp(post_attention_layernorm(h)) -> model.norm -> lm_head (untied by default)
//   "linear_attention" layers: self_attn is KimiLinearDeltaAttention, the gated delta rule with a
//     per-key-channel forget gate (blocks/gated_delta_net.h GatedDeltaNetProjections::kimi):
//     linear_num_heads heads of linear_head_dim for q, k and v, short convs of
//     linear_conv_kernel_dim (activation hidden_act), the sigmoid-gated output norm of eps
//     rms_norm_eps (OutputGate::sigmoid)
//   "full_attention" layers: self_attn is KimiLinearAttention, DeepSeek's MLA (blocks/mla.h) without
//     RoPE: its qk_rope_head_dim channels (k's shared by every head) are used as they are; softmax
//     scale (qk_nope_head_dim + qk_rope_head_dim) ** -0.5, the lora norms' eps 1e-6
//   mlp: on the "sparse" layers of mlp_layer_types KimiLinearMoE, DeepSeek-V3's (sigmoid scores +
//     e_score_correction_bias over n_group groups, topk_group kept, norm_topk_prob,
//     * routed_scaling_factor; shared_experts n_shared_experts * moe_intermediate_size wide), else
//     KimiLinearMLP of intermediate_size; no bias
// As save_pretrained writes the checkpoint (conversion_mapping.py "kimi_linear", reversed): the MoE
// and the dense MLP as block_sparse_moe (the released checkpoints name the dense layers' mlp), the
// experts as experts.{e}.w1 / w3 / w2, the KDA's forget gate tensors beside its projections
// (f_a_proj, f_b_proj, dt_bias, A_log) and its convs as q_conv1d / k_conv1d / v_conv1d.
// KimiLinearConfig.__post_init__: linear_attn_config (the released config.json's dict) overrides
// linear_head_dim (head_dim), linear_num_heads (num_heads) and linear_conv_kernel_dim
// (short_conv_kernel_size); without layer_types, its 1-based full_attn_layers / kda_layers give them
// when both are there, else layer i is "full_attention" when i > 0 and i % 4 == 0; without
// mlp_layer_types, the first first_k_dense_replace (default 1) layers are "dense", the rest "sparse".
// States: an MLA layer past_key_values.{i}.key|value (the expanded heads, blocks/mla.h); a KDA layer
// past_key_values.{i}.conv_state [batch_size, 3 * heads * head_dim, linear_conv_kernel_dim - 1] and
// past_key_values.{i}.recurrent_state [batch_size, heads, head_dim, head_dim] (docs/design.md
// "The state model").
//
// Ling 3.0 (transformers/models/bailing_hybrid/modeling_bailing_hybrid.py BailingHybridForCausalLM;
// configuration_bailing_hybrid.py BailingHybridConfig, 5.23; create_bailing_hybrid): Kimi Linear's
// layer (KimiLinearDecoderLayer) and MoE with its own mixers:
//   "linear_attention" layers: BailingHybridDeltaAttention, the Kimi Delta Attention above with the
//     forget gate's input f_proj(x) and the output gate g_proj(x) (GatedDeltaNetProjections::bailing);
//     kda_safe_gate (default true): g = kda_lower_bound (default -5) * sigmoid(exp(A_log) * (f +
//     dt_bias)), else Kimi's -exp(A_log) * softplus(f + dt_bias); linear_num_heads
//     (num_attention_heads), linear_head_dim (head_dim, default 128), linear_conv_kernel_dim
//     (short_conv_kernel_size, default 4): __post_init__ sets them, a saved config.json's own win
//   "full_attention" layers: BailingHybridAttention, MLA through q_proj (no q_lora_rank) with
//     DeepSeek-V3's interleaved RoPE over qk_rope_head_dim channels (rope_parameters, rope_theta
//     default 6e6), softmax scale as DeepSeek's, each head's output times sigmoid(g_proj(x))
//   without layer_types, layer i is "full_attention" when (i + 1) % layer_group_size == 0; without
//     mlp_layer_types the first first_k_dense_replace (default 2) layers are "dense"
// As save_pretrained writes it (conversion_mapping.py "bailing_hybrid", reversed): model.
// word_embeddings, each layer's mixer as attention (o_proj as dense), the forget gate's f_proj,
// dt_bias and A_log beside the projections, the convs as q_conv1d / k_conv1d / v_conv1d, the
// router's correction bias as gate.expert_bias, the experts as experts.{e}.gate_proj / up_proj /
// down_proj. States as Kimi Linear's.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/deepseek.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/gated_delta_net.h"
#include "config/rope_config.h"
#include "registry/config_defaults.h"

namespace mobius {

namespace {

// KimiLinearConfig declares the aliases of its attribute_map as its fields, so that save_pretrained
// writes the names they map to (moe_renormalize, num_experts, ...) while the class defaults are
// filled under the aliases: a mapped name in config.json wins. Then the class defaults of the
// fields that the shared readers require (read_mla_options, read_deepseek_experts, read_groups).
// The class defaults filled for the fields that the shared readers require.
using FieldDefaults = std::vector<std::pair<const char*, int64_t>>;

HfConfig kimi_linear_fields(const HfConfig& config, const FieldDefaults& defaults) {
  const HfConfig mapped = with_attribute_map(config, {{"model_max_length", "max_position_embeddings"},
                                                      {"moe_renormalize", "norm_topk_prob"},
                                                      {"num_expert_group", "n_group"},
                                                      {"num_experts", "num_local_experts"},
                                                      {"num_experts_per_token", "num_experts_per_tok"},
                                                      {"num_shared_experts", "n_shared_experts"}});
  nlohmann::json j = mapped.json();
  for (const auto& [key, value] : defaults)
    if (!j.contains(key)) j[key] = value;
  return HfConfig(std::move(j), config.file(), config.prefix());
}

// layer_types, else linear_attn_config's 1-based full_attn_layers / kda_layers, else the class'
// pattern. Throws mobius::Error naming the field on a layer number out of range or a layer in
// neither list.
std::vector<std::string> kimi_linear_layer_types(const HfConfig& c, const std::optional<HfConfig>& linear, int64_t n) {
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < n; ++i) fallback.push_back(i > 0 && i % 4 == 0 ? "full_attention" : "linear_attention");
  if (linear && linear->has("full_attn_layers") && linear->has("kda_layers")) {
    std::vector<std::string> types(static_cast<size_t>(n));
    for (const auto& [key, type] : {std::pair<const char*, const char*>{"full_attn_layers", "full_attention"},
                                    {"kda_layers", "linear_attention"}}) {
      const nlohmann::json& list = linear->json().at(key);
      if (!list.is_array()) linear->fail(key, "expected a list of 1-based layer numbers");
      for (const auto& layer : list) {
        if (!layer.is_number_integer() || layer.get<int64_t>() < 1 || layer.get<int64_t>() > n)
          linear->fail(key, "expected layer numbers from 1 to num_hidden_layers (" + std::to_string(n) + ")");
        types[static_cast<size_t>(layer.get<int64_t>() - 1)] = type;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      if (types[static_cast<size_t>(i)].empty())
        linear->fail("kda_layers", "layer " + std::to_string(i + 1) + " is in neither full_attn_layers nor kda_layers");
    fallback = types;
  }
  return read_layer_list(c, "layer_types", n, {"linear_attention", "full_attention"}, fallback);
}

// A Kimi Delta Attention layer of `heads` heads of `dim` key and value channels, q/k/v convs of
// `kernel` taps, the sigmoid-gated output norm, the checkpoint's `projections` (Kimi's or Bailing's).
GatedDeltaNetOptions delta_attention_options(const DecoderSpec& s, int64_t heads, int64_t dim, int64_t kernel,
                                             GatedDeltaNetProjections projections) {
  return GatedDeltaNetOptions{.hidden_size = s.hidden_size,
                              .num_key_heads = heads,
                              .num_value_heads = heads,
                              .key_head_dim = dim,
                              .value_head_dim = dim,
                              .conv_kernel = kernel,
                              .hidden_act = s.mlp.hidden_act,
                              .norm_eps = s.norm_eps,
                              .dtype = s.dtype,
                              .projections = projections,
                              .output_gate = OutputGate::sigmoid};
}

// The Kimi Delta Attention sizes: linear_num_heads, linear_head_dim, linear_conv_kernel_dim, each
// overridden by linear_attn_config's num_heads, head_dim, short_conv_kernel_size.
GatedDeltaNetOptions kimi_delta_attention(const HfConfig& c, const std::optional<HfConfig>& linear,
                                          const DecoderSpec& s) {
  auto size = [&](const char* key, int64_t fallback, const char* linear_key) {
    const bool nested = linear && linear->has(linear_key);
    const int64_t v = nested ? linear->get_int(linear_key) : c.int_or(key, fallback);
    if (v < 1) nested ? linear->fail(linear_key, "must be positive") : c.fail(key, "must be positive");
    return v;
  };
  const int64_t heads = size("linear_num_heads", 32, "num_heads");
  const int64_t dim = size("linear_head_dim", 128, "head_dim");
  const int64_t kernel = size("linear_conv_kernel_dim", 4, "short_conv_kernel_size");
  if (kernel < 2) c.fail("linear_conv_kernel_dim", "must be at least 2");
  return delta_attention_options(s, heads, dim, kernel, GatedDeltaNetProjections::kimi);
}

// Per layer whether it holds the MoE: mlp_layer_types, else all but the first first_k_dense_replace
// (default `first_dense`). Throws mobius::Error naming the field.
std::vector<bool> kimi_sparse_layers(const HfConfig& c, int64_t n, int64_t first_dense) {
  first_dense = c.int_or("first_k_dense_replace", first_dense);
  std::vector<std::string> plan;
  for (int64_t i = 0; i < n; ++i) plan.push_back(i < first_dense ? "dense" : "sparse");
  plan = read_layer_list(c, "mlp_layer_types", n, {"dense", "sparse"}, plan);
  std::vector<bool> sparse;
  for (const auto& t : plan) sparse.push_back(t == "sparse");
  return sparse;
}

}  // namespace

std::unique_ptr<Architecture> create_kimi_linear(const HfConfig& config, DataType dtype) {
  const HfConfig c = kimi_linear_fields(config, {{"num_local_experts", 256},
                                                 {"n_shared_experts", 1},
                                                 {"n_group", 1},
                                                 {"topk_group", 1},
                                                 {"kv_lora_rank", 512},
                                                 {"qk_nope_head_dim", 128},
                                                 {"qk_rope_head_dim", 64},
                                                 {"v_head_dim", 128}});
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // KimiLinearMLP (mlp_bias not read)
  s.names.mlp = "block_sparse_moe";
  const int64_t n = s.num_hidden_layers;
  const std::optional<HfConfig> linear = c.sub("linear_attn_config");
  s.layer_types = kimi_linear_layer_types(c, linear, n);
  s.layer_uses_rope.assign(static_cast<size_t>(n), false);  // KimiLinearAttention: no RoPE

  MLAOptions mla = read_mla_options(c, s);
  mla.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(mla.qk_nope_head_dim + mla.qk_rope_head_dim)));
  s.make_attention = latent_attention(mla);
  s.make_mixer = [delta = kimi_delta_attention(c, linear, s), types = s.layer_types](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "linear_attention") return LayerMixer{};
    return LayerMixer{"self_attn", std::make_unique<GatedDeltaNetMixer>(delta)};
  };

  const std::vector<bool> sparse = kimi_sparse_layers(c, n, 1);  // first_k_dense_replace: a kwarg of __post_init__
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_deepseek_experts(c, s, "num_local_experts");
  read_v3_router(c, m, true);
  m.gate_name = "w1";
  m.up_name = "w3";
  m.down_name = "w2";
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

std::unique_ptr<Architecture> create_bailing_hybrid(const HfConfig& config, DataType dtype) {
  const HfConfig c = kimi_linear_fields(config, {{"num_local_experts", 512},
                                                 {"n_shared_experts", 1},
                                                 {"n_group", 8},
                                                 {"topk_group", 4},
                                                 {"kv_lora_rank", 512},
                                                 {"qk_nope_head_dim", 128},
                                                 {"qk_rope_head_dim", 64},
                                                 {"v_head_dim", 128}});
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // BailingHybridMLP (mlp_bias not read)
  s.names.embed_tokens = "word_embeddings";
  s.names.self_attn = "attention";
  const int64_t n = s.num_hidden_layers;
  const int64_t group = c.int_or("layer_group_size", 6);
  if (group < 1) c.fail("layer_group_size", "must be positive");
  std::vector<std::string> pattern;
  for (int64_t i = 0; i < n; ++i) pattern.push_back((i + 1) % group == 0 ? "full_attention" : "linear_attention");
  s.layer_types = read_layer_list(c, "layer_types", n, {"linear_attention", "full_attention"}, pattern);

  MLAOptions mla = read_mla_options(c, s);
  mla.q_lora_rank = std::nullopt;  // BailingHybridAttention: q_proj (q_lora_rank not a field)
  if (mla.qk_rope_head_dim % 2 != 0) c.fail("qk_rope_head_dim", "must be even");
  s.rope = RopeConfig::from_hf(c, mla.qk_rope_head_dim, {.rope_theta = 6000000.0});
  mla.scale = mla_softmax_scale(mla, s.rope);
  mla.rope_interleave = true;  // apply_rotary_pos_emb_interleave
  mla.head_gate = true;
  mla.o_proj_name = "dense";
  s.make_attention = latent_attention(mla);

  // __post_init__'s linear_* from num_attention_heads, head_dim, short_conv_kernel_size, unless given
  auto size = [&](const char* key, int64_t fallback) {
    const int64_t v = c.int_or(key, fallback);
    if (v < 1) c.fail(key, "must be positive");
    return v;
  };
  const int64_t heads = size("linear_num_heads", s.attention.num_attention_heads);
  const int64_t dim = size("linear_head_dim", size("head_dim", 128));
  const int64_t kernel = size("linear_conv_kernel_dim", size("short_conv_kernel_size", 4));
  if (kernel < 2) c.fail("linear_conv_kernel_dim", "must be at least 2");
  GatedDeltaNetOptions delta = delta_attention_options(s, heads, dim, kernel, GatedDeltaNetProjections::bailing);
  if (c.bool_or("kda_safe_gate", true)) delta.forget_lower_bound = static_cast<float>(c.float_or("kda_lower_bound", -5.0));
  s.make_mixer = [delta, types = s.layer_types](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "linear_attention") return LayerMixer{};
    return LayerMixer{"attention", std::make_unique<GatedDeltaNetMixer>(delta)};
  };

  const std::vector<bool> sparse = kimi_sparse_layers(c, n, 2);
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_deepseek_experts(c, s, "num_local_experts");
  read_v3_router(c, m, true);
  m.score_bias_name = "gate.expert_bias";
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
