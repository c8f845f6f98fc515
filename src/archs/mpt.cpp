// MPT (transformers/models/mpt/modeling_mpt.py): transformer.wte -> blocks.{i}: norm_1 ->
// attn (Wqkv [q | k | v], optional clip_qkv clamp, out_proj) -> norm_2 -> ffn (up_proj -> GELU
// (erf) -> down_proj, 4 * d_model) -> norm_f -> lm_head tied to wte by default. Every projection
// and LayerNorm without bias, whatever no_bias says (MptBlock / MptAttention / MptMLP build them
// so). Positions: ALiBi (blocks/alibi.h) with alibi_bias_max 8, whatever attn_config.alibi and
// attn_config.alibi_bias_max say (MptModel always calls build_mpt_alibi_tensor with its default
// alibi_bias_max). Scale attn_config.softmax_scale, default 1/sqrt(head_dim). transformers also
// ignores attn_config.qk_ln, attn_type and expansion_ratio.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_mpt(const HfConfig& c, DataType dtype) {
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, "d_model", "n_layers")};
  DecoderSpec& s = g.decoder;
  const HfConfig attn =
      c.sub("attn_config").value_or(HfConfig(nlohmann::json::object(), c.file(), "attn_config."));
  s.norm_bias = false;
  s.names = {.model = "transformer", .embed_tokens = "wte", .layers = "blocks", .norm = "norm_f",
             .self_attn = "attn", .mlp = "ffn", .input_layernorm = "norm_1",
             .post_attention_layernorm = "norm_2"};
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype,
      {.num_attention_heads = "n_heads", .num_key_value_heads = nullptr, .head_dim = nullptr});
  if (auto scale = attn.opt_float("softmax_scale")) a.scale = static_cast<float>(*scale);
  a.fused_qkv = FusedQKV{.name = "Wqkv"};
  if (auto clip = attn.opt_float("clip_qkv"); clip && *clip != 0)  // `if self.clip_qkv:`
    a.fused_qkv->clip = static_cast<float>(*clip);
  a.names.o_proj = "out_proj";
  g.alibi = AlibiOptions{.slopes = mpt_alibi_slopes(a.num_attention_heads, 8),
                         .positions = AlibiPositions::KeyIndex};
  s.mlp = {s.hidden_size, 4 * s.hidden_size, "gelu", false, dtype, /*gated=*/false,
           /*fused_gate_up=*/false, "up_proj", "down_proj"};
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
