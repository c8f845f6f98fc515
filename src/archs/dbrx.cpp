// DBRX (transformers/models/dbrx/{modeling,configuration}_dbrx.py, 5.23): transformer.wte ->
// blocks.{i}: norm_attn_norm.norm_1 -> norm_attn_norm.attn (Wqkv [q | k | v] clamped to
// [-clip_qkv, clip_qkv] when attn_config.clip_qkv is set (0 included), RoPE, out_proj, no bias)
// -> residual -> norm_attn_norm.norm_2 -> ffn (a sparse MoE) -> residual; norm_f -> lm_head.
// Every norm is a LayerNorm without bias (eps 1e-5, nn.LayerNorm's). The sizes: d_model, n_heads,
// n_layers, attn_config.kv_n_heads (default 1); head_dim = d_model / n_heads. RoPE from the
// top-level rope_parameters (DbrxRotaryEmbedding; attn_config.rope_theta is not read by the model).
// ffn: router.layer (softmax, top moe_top_k, the picked weights divided by their
// moe_normalize_expert_weights-norm unless it is null), experts.mlp.w1 / v1 / w2, each
// [moe_num_experts * ffn_hidden_size, d_model] (ExpertLayout::stacked_rows), activation
// ffn_act_fn.name (default silu). DbrxConfig refuses tie_word_embeddings.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/activation.h"

namespace mobius {

std::unique_ptr<Architecture> create_dbrx(const HfConfig& c, DataType dtype) {
  const HfConfig attn =
      c.sub("attn_config").value_or(HfConfig(nlohmann::json::object(), c.file(), "attn_config."));
  const HfConfig ffn = c.sub("ffn_config").value_or(HfConfig(nlohmann::json::object(), c.file(), "ffn_config."));
  if (c.bool_or("tie_word_embeddings", false))
    c.fail("tie_word_embeddings", "DBRX does not support tied embeddings (DbrxConfig)");
  DecoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("d_model");
  s.num_hidden_layers = c.get_int("n_layers");
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "full_attention");
  s.norm_kind = NormKind::LayerNorm;
  s.norm_bias = false;
  s.norm_eps = 1e-5f;
  s.names = {.model = "transformer", .embed_tokens = "wte", .layers = "blocks", .norm = "norm_f",
             .self_attn = "norm_attn_norm.attn", .mlp = "ffn", .input_layernorm = "norm_attn_norm.norm_1",
             .post_attention_layernorm = "norm_attn_norm.norm_2"};

  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_attention_heads = "n_heads", .num_key_value_heads = nullptr, .head_dim = nullptr});
  a.num_key_value_heads = attn.int_or("kv_n_heads", 1);
  if (a.num_key_value_heads <= 0 || a.num_attention_heads % a.num_key_value_heads != 0)
    attn.fail("kv_n_heads", std::to_string(a.num_key_value_heads) + " must divide n_heads " +
                                std::to_string(a.num_attention_heads));
  a.fused_qkv = FusedQKV{.name = "Wqkv"};
  if (auto clip = attn.opt_float("clip_qkv")) {  // clamp(min=-clip_qkv, max=clip_qkv) whenever set
    if (*clip < 0) attn.fail("clip_qkv", "must not be negative");
    a.fused_qkv->clip = static_cast<float>(*clip);
  }
  a.names.o_proj = "out_proj";
  s.rope = RopeConfig::from_hf(c, a.head_dim);

  MoEOptions m{.hidden_size = s.hidden_size, .intermediate_size = ffn.int_or("ffn_hidden_size", 3584), .dtype = dtype};
  const HfConfig act =
      ffn.sub("ffn_act_fn").value_or(HfConfig(nlohmann::json::object(), c.file(), "ffn_config.ffn_act_fn."));
  m.hidden_act = read_activation(act, "name", "silu");
  m.router.num_experts = ffn.int_or("moe_num_experts", 4);
  m.router.top_k = ffn.int_or("moe_top_k", 1);
  if (m.router.top_k < 1 || m.router.top_k > m.router.num_experts)
    ffn.fail("moe_top_k", "must be in [1, moe_num_experts = " + std::to_string(m.router.num_experts) + "]");
  // DbrxFFNConfig: 1.0 when absent; null: the softmax weights as they are
  const bool absent = !ffn.json().contains("moe_normalize_expert_weights");
  if (absent || ffn.has("moe_normalize_expert_weights")) {
    const double p = absent ? 1.0 : ffn.get_float("moe_normalize_expert_weights");
    if (p <= 0) ffn.fail("moe_normalize_expert_weights", "must be positive");
    m.router.norm_topk_prob = true;
    m.router.norm_topk_p = static_cast<float>(p);
  }
  m.router_name = "router.layer";
  m.layout = ExpertLayout::stacked_rows;
  m.gate_name = "experts.mlp.w1";
  m.up_name = "experts.mlp.v1";
  m.down_name = "experts.mlp.w2";
  s.mlp = {s.hidden_size, m.intermediate_size, m.hidden_act, false, dtype};
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return make_decoder(s);
}

}  // namespace mobius
