// DBRX (transformers/models/dbrx/modeling_dbrx.py, configuration_dbrx.py, 5.23): transformer.wte ->
// blocks.{i}: norm_attn_norm.norm_1 (LayerNorm without bias, nn.LayerNorm's eps 1e-5) ->
// norm_attn_norm.attn (Wqkv [q | k | v], clamped to [-clip_qkv, clip_qkv] before the split:
// attn_config.clip_qkv, required, as transformers fails without it; RoPE over whole heads, out_proj; no bias; attn_config.kv_n_heads
// key/value heads, default 1) -> norm_attn_norm.norm_2 -> ffn: router.layer (no bias) softmax,
// top moe_top_k, the picked weights divided by their moe_normalize_expert_weights-norm (None: not
// normalized); experts.mlp.w1 / v1 / w2 [moe_num_experts * ffn_hidden_size, d_model] as
// save_pretrained writes them (DbrxExpertGLU: act(x w1_e^T) * (x v1_e^T) @ w2_e, act
// ffn_act_fn.name, its other keys ignored as there) -> norm_f -> lm_head (never tied: DbrxConfig refuses tie_word_embeddings).
// RoPE from the top-level rope_parameters (default theta 10000): transformers 5.23 reads no
// attn_config.rope_theta.
#include <cmath>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "archs/llama.h"
#include "blocks/activation.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_dbrx(const HfConfig& c, DataType dtype) {
  DecoderSpec s = gpt_decoder_sizes(c, dtype, "d_model", "n_layers");
  if (c.bool_or("tie_word_embeddings", false))
    c.fail("tie_word_embeddings", "is not supported for DBRX models (DbrxConfig.validate_architecture)");
  s.tie_word_embeddings = false;
  s.norm_bias = false;
  s.norm_eps = 1e-5f;  // nn.LayerNorm's default: DbrxConfig has no epsilon field
  s.names = {.model = "transformer", .embed_tokens = "wte", .layers = "blocks", .norm = "norm_f",
             .self_attn = "norm_attn_norm.attn", .mlp = "ffn", .input_layernorm = "norm_attn_norm.norm_1",
             .post_attention_layernorm = "norm_attn_norm.norm_2"};
  const HfConfig attn = c.sub("attn_config").value_or(HfConfig(nlohmann::json::object(), c.file(), "attn_config."));
  const HfConfig ffn = c.sub("ffn_config").value_or(HfConfig(nlohmann::json::object(), c.file(), "ffn_config."));
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_attention_heads = "n_heads", .num_key_value_heads = nullptr, .head_dim = nullptr});
  a.num_key_value_heads = attn.int_or("kv_n_heads", 1);
  if (a.num_key_value_heads < 1 || a.num_attention_heads % a.num_key_value_heads != 0)
    attn.fail("kv_n_heads", std::to_string(a.num_key_value_heads) + " must divide n_heads " +
                                std::to_string(a.num_attention_heads));
  a.fused_qkv = FusedQKV{.name = "Wqkv"};
  // DbrxAttention clamps by clip_qkv always: torch.clamp fails on None (the class default)
  if (!attn.has("clip_qkv") || attn.json()["clip_qkv"].is_null())
    attn.fail("clip_qkv", "is required: DbrxAttention clamps q/k/v by it (transformers fails without)");
  a.fused_qkv->clip = static_cast<float>(attn.get_float("clip_qkv"));
  if (*a.fused_qkv->clip <= 0) attn.fail("clip_qkv", "must be positive");
  a.names.o_proj = "out_proj";
  s.rope = RopeConfig::from_hf(c, a.head_dim);

  MoEOptions m;
  m.hidden_size = s.hidden_size;
  m.dtype = dtype;
  m.intermediate_size = ffn.int_or("ffn_hidden_size", 3584);
  if (m.intermediate_size < 1 || m.intermediate_size > kMaxFfnSize)
    ffn.fail("ffn_hidden_size", "must be 1 .. " + std::to_string(kMaxFfnSize));
  m.hidden_act = "silu";
  if (ffn.has("ffn_act_fn") && !ffn.json()["ffn_act_fn"].is_null()) {  // {"name": ..., ...}
    const nlohmann::json& act = ffn.json()["ffn_act_fn"];
    if (!act.is_object() || (act.contains("name") && !act["name"].is_string()))
      ffn.fail("ffn_act_fn", "expected {\"name\": <activation>}");
    m.hidden_act = act.value("name", "silu");
    if (!is_known_activation(m.hidden_act)) ffn.fail("ffn_act_fn", "unsupported activation '" + m.hidden_act + "'");
  }
  RouterOptions& r = m.router;
  r.kind = RouterKind::softmax_topk;
  r.num_experts = ffn.int_or("moe_num_experts", 4);
  if (r.num_experts < 1 || r.num_experts > kMaxSmallSize)
    ffn.fail("moe_num_experts", "must be 1 .. " + std::to_string(kMaxSmallSize));
  r.top_k = ffn.int_or("moe_top_k", 1);
  if (r.top_k < 1 || r.top_k > r.num_experts)
    ffn.fail("moe_top_k", "must be between 1 and moe_num_experts (" + std::to_string(r.num_experts) + ")");
  const nlohmann::json& fj = ffn.json();  // null: not normalized (absent: the default 1.0)
  if (!(fj.contains("moe_normalize_expert_weights") && fj["moe_normalize_expert_weights"].is_null())) {
    r.norm_topk_prob = true;
    r.norm_topk_p = ffn.float_or("moe_normalize_expert_weights", 1.0);
    if (!(r.norm_topk_p > 0) || !std::isfinite(r.norm_topk_p))
      ffn.fail("moe_normalize_expert_weights", "must be a positive finite norm order (or null)");
  }
  m.router_name = "router.layer";
  m.layout = ExpertLayout::stacked_rows;
  m.gate_name = "experts.mlp.w1";
  m.up_name = "experts.mlp.v1";
  m.down_name = "experts.mlp.w2";
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return make_decoder(s);
}

}  // namespace mobius
