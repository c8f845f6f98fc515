// MiMo-V2-Flash (transformers/models/mimo_v2_flash/{modular,modeling,configuration}_mimo_v2_flash.py,
// MiMoV2FlashConfig, 5.23): Laguna's pre-norm decoder (RMSNorm, rms_norm_eps 1e-5) with
//   attention  MiMoV2FlashAttention: q/k/v bias per attention_bias, o_proj without; q and k heads of
//              head_dim (192), v heads of v_head_dim (128), the values times attention_value_scale
//              (0.707; null: 1) before the cache, softmax scale head_dim**-0.5. The
//              "sliding_attention" layers (layer_types; default: layer 0 and every 6th full, the
//              others sliding) have twice num_key_value_heads, a learned sink logit per head
//              (blocks/attention_sinks.h; saved as attention_sink_bias) and the window
//              sliding_window (129; sliding_window_size + 1 when config.json has that)
//   RoPE       per layer type (rope_parameters nested by layer type, kept as given; without it the
//              class default: full layers theta 5e6, sliding ones 1e4), rotate_half on the first
//              int(head_dim * partial_rotary_factor) channels (0.334 for a default-rope entry
//              without the field, MiMoV2FlashRotaryEmbedding.compute_default_rope_parameters)
//   mlp        per mlp_layer_types (default: layer 0 "dense", the others "sparse"): a gated MLP of
//              intermediate_size (Glm4MoeMLP, no bias), or DeepSeek-V3's router (sigmoid + the
//              gate's e_score_correction_bias over n_group groups, topk_group kept, norm_topk_prob,
//              * routed_scaling_factor, null: 1) over n_routed_experts experts of
//              moe_intermediate_size (saved per expert), without shared experts.
// The multi-token prediction layers real checkpoints carry (model.mtp.*) are not part of the forward.
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/spec_check.h"

namespace mobius {

namespace {

// The RoPE of layer type `type`: rope_parameters[type], or the class default (theta `theta`) without
// rope_parameters. A default-rope entry rotates int(head_dim * partial_rotary_factor) channels, 0.334
// when it has no partial_rotary_factor; the other rope types' init functions read 1.0 then.
RopeConfig mimo_layer_type_rope(const HfConfig& c, const std::string& type, int64_t head_dim, double theta) {
  std::optional<HfConfig> params;
  if (const std::optional<HfConfig> rope = c.sub("rope_parameters")) {
    params = rope->sub(type);
    if (!params) c.fail("rope_parameters", "expected an entry for each layer type (\"" + type + "\")");
  }
  RopeConfig r = RopeConfig::from_params(c, params, head_dim, {.rope_theta = theta, .partial_rotary_factor = 0.334});
  if (r.rope_type != "default")
    r = RopeConfig::from_params(c, params, head_dim, {.rope_theta = theta, .partial_rotary_factor = 1.0});
  return r;
}

}  // namespace

std::unique_ptr<Architecture> create_mimo_v2_flash(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.o_bias = false;
  s.mlp.bias = false;  // Glm4MoeMLP
  const int64_t n = s.num_hidden_layers;
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < n; ++i)
    fallback.push_back(i == 0 || (i + 1) % 6 == 0 ? "full_attention" : "sliding_attention");
  s.layer_types = read_layer_types(c, n, fallback);
  const bool slides = std::find(s.layer_types.begin(), s.layer_types.end(), "sliding_attention") != s.layer_types.end();
  if (slides) {
    s.sliding_window = c.has("sliding_window_size") ? c.get_int("sliding_window_size") + 1 : c.int_or("sliding_window", 129);
    if (s.sliding_window < 1) c.fail(c.has("sliding_window_size") ? "sliding_window_size" : "sliding_window", "must be positive");
  }
  const int64_t head_dim = s.attention.head_dim;
  s.rope = mimo_layer_type_rope(c, "full_attention", head_dim, 5000000.0);
  if (slides) s.layer_type_rope["sliding_attention"] = mimo_layer_type_rope(c, "sliding_attention", head_dim, 10000.0);
  const int64_t v_head_dim = c.int_or("v_head_dim", 128);
  if (v_head_dim < 1 || v_head_dim > kMaxHeadDim) c.fail("v_head_dim", "expected 1 to " + std::to_string(kMaxHeadDim));
  s.attention.v_head_dim = v_head_dim;
  // null: MiMoV2FlashAttention's 1.0
  s.attention.value_scale = static_cast<float>(c.opt_float("attention_value_scale").value_or(1.0));
  AttentionOptions full = s.attention, sliding = s.attention;
  sliding.num_key_value_heads *= 2;
  if (sliding.num_attention_heads % sliding.num_key_value_heads != 0)
    c.fail("num_key_value_heads", "twice it (the sliding layers' key/value heads) must divide num_attention_heads");
  sliding.sinks = true;
  sliding.names.sinks = "attention_sink_bias";  // as save_pretrained writes MiMoV2FlashAttention.sinks
  sliding.sliding_window = s.sliding_window;
  check_attention(full);
  if (slides) check_attention(sliding);
  const std::vector<std::string> types = s.layer_types;
  s.make_attention = [full, sliding, types](int64_t layer) {
    return std::make_unique<Attention>(types[static_cast<size_t>(layer)] == "sliding_attention" ? sliding : full);
  };
  std::vector<std::string> mlp_fallback(static_cast<size_t>(n), "sparse");
  if (!mlp_fallback.empty()) mlp_fallback[0] = "dense";
  std::vector<bool> sparse;
  for (const auto& t : read_layer_list(c, "mlp_layer_types", n, {"dense", "sparse"}, mlp_fallback))
    sparse.push_back(t == "sparse");
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "n_routed_experts", "moe_intermediate_size");
  m.router.routed_scaling_factor = static_cast<float>(c.float_or("routed_scaling_factor", 1.0));
  read_v3_router(c, m, true);
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
