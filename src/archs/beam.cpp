// Beam (transformers/models/beam/{modular,modeling,configuration}_beam.py, BeamConfig, 5.23):
//   attention  BeamAttention (Qwen3MoeAttention): q/k/v/o bias per attention_bias, per-head q_norm /
//              k_norm RMSNorms before RoPE, softmax scale head_dim**-0.5, the heads' output times
//              sigmoid(gate_proj(x) + gate_bias[head]) (no bias in gate_proj; gate_bias broadcast over
//              head_dim) before o_proj; the window sliding_window (512) on the "sliding_attention"
//              layers (layer_types; default: every 6th layer and the last full, the others sliding)
//   RoPE       per layer type (rope_parameters nested by layer type, kept as given; a null entry: no
//              RoPE): default sliding layers RoPE of theta 10000 (default_theta) over the whole head,
//              full layers none. A layer without RoPE scales its queries after the q norm by
//              (1 + (position + 1) / 2048) ** 0.1 (compute_attention_scaling)
//   layer      DeepseekV32DecoderLayer's with Gemma-style sandwich norms (post_attention_layernorm
//              on the attention output, pre_feedforward_layernorm, post_feedforward_layernorm) and
//              depth-scaled residual adds: with k = 2 * (layer + 1), h = attn / sqrt(k) + x *
//              sqrt((k - 1) / k), out = mlp / sqrt(k + 1) + h * sqrt(k / (k + 1))
//   mlp        per mlp_layer_types (default: the first min(3, layers) "dense", the others
//              "sparse"): a gated MLP of intermediate_size (no bias), or BeamMoE: DeepSeek-V3's
//              router (sigmoid + gate.e_score_correction_bias over n_group (8) groups, topk_group
//              (4) kept, norm_topk_prob) over num_experts experts of moe_intermediate_size
//              (DeepseekV4Experts with a float32 gate, saved per expert), the sum times
//              routed_scaling_factor (2.5), no shared experts
//   logits     final_logit_softcapping (30; null: none): c * tanh(logits / c)
#include <algorithm>
#include <cmath>

#include "archs/archs.h"
#include "archs/gemma.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_beam(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // Qwen3MoeMLP
  AttentionOptions& a = s.attention;
  a.qk_norm = QKNorm{};
  a.output_gate = "gate_proj";
  a.output_gate_bias = "gate_bias";
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attention_layernorm";
  s.names.post_attention_layernorm = "pre_feedforward_layernorm";
  s.names.mlp_output_norm = "post_feedforward_layernorm";
  const int64_t n = s.num_hidden_layers;
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < n; ++i) fallback.push_back((i + 1) % 6 != 0 && i != n - 1 ? "sliding_attention" : "full_attention");
  s.layer_types = read_layer_types(c, n, fallback);
  if (std::find(s.layer_types.begin(), s.layer_types.end(), "sliding_attention") != s.layer_types.end()) {
    if (c.json().contains("sliding_window") && !c.has("sliding_window"))
      c.fail("sliding_window", "is null, which a sliding_attention layer needs");
    s.sliding_window = c.int_or("sliding_window", 512);
    if (s.sliding_window < 1) c.fail("sliding_window", "must be positive");
  }
  // RoPE per layer type; a null entry (the class default's full_attention) runs without
  std::map<std::string, bool> uses_rope;
  const std::optional<HfConfig> rope = c.sub("rope_parameters");
  for (const std::string type : {"full_attention", "sliding_attention"}) {
    if (std::find(s.layer_types.begin(), s.layer_types.end(), type) == s.layer_types.end()) continue;
    std::optional<HfConfig> params;
    if (rope) {
      if (!rope->json().contains(type))
        c.fail("rope_parameters", "expected an entry (or null) for each layer type (\"" + type + "\")");
      params = rope->sub(type);
    } else if (type == "sliding_attention") {  // BeamConfig.__post_init__: {"rope_type": "default", "rope_theta": default_theta}
      params = HfConfig(nlohmann::json::object(), c.file(), "default rope_parameters.sliding_attention.");
    }
    uses_rope[type] = params.has_value();
    if (!params) continue;
    // the class default_theta (a top-level rope_theta is not read: convert_rope_params_to_dict keeps kwargs as given)
    RopeConfig r = RopeConfig::from_params(c, params, a.head_dim, {.rope_theta = 10000.0});
    if (type == "full_attention") s.rope = r;
    else s.layer_type_rope[type] = r;
  }
  for (const auto& t : s.layer_types) s.layer_uses_rope.push_back(uses_rope[t]);
  s.nope_position_scale_exponent = 0.1f;  // compute_attention_scaling
  s.nope_position_scale_length = 2048.0;
  for (int64_t i = 0; i < n; ++i) {  // depth_scaled_residual_add
    const double k = 2.0 * static_cast<double>(i + 1);
    s.layer_scales.push_back({.attn_residual = static_cast<float>(std::sqrt((k - 1) / k)),
                              .attn_output = static_cast<float>(1 / std::sqrt(k)),
                              .mlp_residual = static_cast<float>(std::sqrt(k / (k + 1))),
                              .mlp_output = static_cast<float>(1 / std::sqrt(k + 1))});
  }
  s.final_logit_softcapping = read_softcap(c, "final_logit_softcapping", 30.0);
  std::vector<std::string> mlp_fallback(static_cast<size_t>(n), "sparse");
  std::fill_n(mlp_fallback.begin(), std::min<int64_t>(3, n), "dense");
  std::vector<bool> sparse;
  for (const auto& t : read_layer_list(c, "mlp_layer_types", n, {"dense", "sparse"}, mlp_fallback))
    sparse.push_back(t == "sparse");
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "num_experts", "moe_intermediate_size");
  m.router.routed_scaling_factor = static_cast<float>(c.float_or("routed_scaling_factor", 2.5));
  read_v3_router(c, m, true);
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
