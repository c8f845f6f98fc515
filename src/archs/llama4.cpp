// Llama 4's text decoder (transformers/models/llama4/{modeling,configuration}_llama4.py,
// Llama4TextConfig, 5.23): the Llama pre-norm layer (input_layernorm, self_attn,
// post_attention_layernorm, feed_forward) with
//   attention: Llama4TextAttention, q/k/v/o bias per attention_bias; on the layers no_rope_layers
//     marks 1 (default: all but every no_rope_layer_interval-th) interleaved RoPE (pairs 2i, 2i+1:
//     apply_rotary_emb's complex view) then, with use_qk_norm, Llama4TextL2Norm (an RMSNorm without
//     weight, eps rms_norm_eps) on q and k; on the others (NoPE) no RoPE and, with
//     attn_temperature_tuning, q *= 1 + attn_scale * log1p(floor((t + 1) / floor_scale)), t the
//     query's cache index
//   mask: per layer_types (default: "chunked_attention" on the RoPE layers, "full_attention" on the
//     NoPE ones); a chunked layer attends within its chunk of attention_chunk_size tokens
//     (create_chunked_causal_mask)
//   feed_forward: Llama4TextMoe on the moe_layers (default every interleave_moe_layer_step-th):
//     Llama4Router (router, no bias) takes the top num_experts_per_tok logits, each weighted by its
//     sigmoid, and the weight scales the expert's INPUT; the experts (Llama4TextExperts,
//     experts.gate_up_proj [E, hidden, 2 * intermediate_size] gate | up, experts.down_proj) plus
//     shared_expert, a gated MLP of intermediate_size; the other layers a gated MLP of
//     intermediate_size_mlp (Llama4TextMLP, no bias).
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/spec_check.h"

namespace mobius {

namespace {

// The per-layer 0 / 1 list `key` (at least num_hidden_layers integers; longer lists are read up to
// num_hidden_layers, as Llama4TextAttention indexes them), or `fallback` when absent, null or empty.
std::vector<bool> read_layer_flags(const HfConfig& c, const std::string& key, int64_t layers,
                                   std::vector<bool> fallback) {
  if (!c.has(key) || (c.json()[key].is_array() && c.json()[key].empty())) return fallback;
  const auto& list = c.json()[key];
  if (!list.is_array() || list.size() < static_cast<size_t>(layers))
    c.fail(key, "expected a list of at least num_hidden_layers integers");
  std::vector<bool> out;
  for (int64_t i = 0; i < layers; ++i) {
    const auto& v = list[static_cast<size_t>(i)];
    if (!v.is_number_integer() && !v.is_boolean()) c.fail(key, "expected integers 0 or 1");
    out.push_back(v.is_boolean() ? v.get<bool>() : v.get<int64_t>() != 0);
  }
  return out;
}

}  // namespace

std::unique_ptr<Architecture> create_llama4_text(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype, RopeDefaults{.rope_theta = 500000.0}, "intermediate_size_mlp");
  s.names.mlp = "feed_forward";
  s.mlp.bias = false;  // Llama4TextMLP (mlp_bias not read)
  s.attention.rope_interleaved = true;
  const int64_t n = s.num_hidden_layers;
  const int64_t interval = c.int_or("no_rope_layer_interval", 4);
  if (interval < 1) c.fail("no_rope_layer_interval", "must be positive");
  std::vector<bool> fallback_rope;
  for (int64_t i = 0; i < n; ++i) fallback_rope.push_back((i + 1) % interval != 0);
  s.layer_uses_rope = read_layer_flags(c, "no_rope_layers", n, fallback_rope);
  std::vector<std::string> fallback_types;
  for (bool rope : s.layer_uses_rope) fallback_types.push_back(rope ? "chunked_attention" : "full_attention");
  s.layer_types = read_layer_list(c, "layer_types", n, {"full_attention", "chunked_attention"}, fallback_types);
  if (std::find(s.layer_types.begin(), s.layer_types.end(), "chunked_attention") != s.layer_types.end()) {
    if (c.json().contains("attention_chunk_size") && !c.has("attention_chunk_size"))
      c.fail("attention_chunk_size", "is null, which a chunked_attention layer needs");
    s.attention_chunk_size = c.int_or("attention_chunk_size", 8192);
    if (s.attention_chunk_size < 1) c.fail("attention_chunk_size", "must be positive");
  }
  if (c.bool_or("attn_temperature_tuning", true)) {
    s.nope_floor_scale = c.int_or("floor_scale", 8192);
    if (s.nope_floor_scale < 1) c.fail("floor_scale", "must be positive");
    s.nope_attn_scale = static_cast<float>(c.float_or("attn_scale", 0.1));
  }
  check_attention(s.attention);
  const bool qk_norm = c.bool_or("use_qk_norm", true);
  const AttentionOptions attention = s.attention;
  const std::vector<bool> uses_rope = s.layer_uses_rope;
  s.make_attention = [attention, uses_rope, qk_norm](int64_t layer) {
    AttentionOptions a = attention;
    // Llama4TextL2Norm(rms_norm_eps) after RoPE, on the RoPE layers only
    if (qk_norm && uses_rope[static_cast<size_t>(layer)])
      a.qk_norm = QKNorm{.after_rope = true, .elementwise_affine = false};
    return std::make_unique<Attention>(a);
  };

  std::vector<bool> sparse(static_cast<size_t>(n), false);
  if (c.has("moe_layers")) {
    const auto& list = c.json()["moe_layers"];
    if (!list.is_array()) c.fail("moe_layers", "expected a list of layer indices");
    for (const auto& i : list) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= n)
        c.fail("moe_layers", "expected layer indices below num_hidden_layers");
      sparse[static_cast<size_t>(i.get<int64_t>())] = true;
    }
  } else {
    const int64_t step = c.int_or("interleave_moe_layer_step", 1);
    if (step < 1) c.fail("interleave_moe_layer_step", "must be positive");
    for (int64_t i = step - 1; i < n; i += step) sparse[static_cast<size_t>(i)] = true;
  }
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.kind = RouterKind::topk_sigmoid;  // Llama4Router: no renormalization
  m.router_name = "router";
  m.layout = ExpertLayout::stacked_in_out;
  m.stacked_gate_up_name = "experts.gate_up_proj";
  m.stacked_down_name = "experts.down_proj";
  m.routing_applied = RoutingApplied::inputs;
  add_shared_experts(m, s.mlp, 1, "shared_expert");  // Llama4TextMLP(intermediate_size)
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
