// Falcon (transformers/models/falcon/modeling_falcon.py): transformer.word_embeddings ->
// h.{i} -> ln_f -> lm_head tied by default. Each layer: self_attention (query_key_value, dense)
// and mlp (dense_h_to_4h -> activation -> dense_4h_to_h, ffn_hidden_size), bias per `bias`:
//   new_decoder_architecture: num_kv_heads key/value heads, query_key_value in groups
//     [num_attention_heads / num_kv_heads queries | key | value]; attention and MLP in parallel
//     on ln_attn / ln_mlp (num_ln_in_parallel_attn 2, the default) or one input_layernorm (1)
//   old layout, multi_query: one key/value head, query_key_value [q | k | v];
//     not multi_query: per head [q | k | v]; then parallel_attn: attention and MLP in parallel
//     on one input_layernorm, else sequential pre-norm with post_attention_layernorm.
// Positions: RoPE (rope_parameters), or ALiBi when `alibi` (blocks/alibi.h: Bloom's slopes and
// positions rounded to bfloat16, divided by sqrt(head_dim)) as FalconModel folds it into the
// mask for SDPA, transformers' default attention for Falcon. (Its eager path, in 5.23, adds the
// bias a second time inside FalconAttention; that is not what the model was trained with.)
// The KV cache keeps num_kv_heads heads (transformers expands them to num_attention_heads).
#include <cmath>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_falcon(const HfConfig& c, DataType dtype) {
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, c.has("n_embed") ? "n_embed" : "hidden_size",
                                          "num_hidden_layers")};
  DecoderSpec& s = g.decoder;
  const bool new_arch = c.bool_or("new_decoder_architecture", false);
  const bool multi_query = c.bool_or("multi_query", true);
  const bool parallel = c.bool_or("parallel_attn", true);
  const int64_t num_ln = c.int_or("num_ln_in_parallel_attn", new_arch ? 2 : 1);
  if (num_ln != 1 && num_ln != 2) c.fail("num_ln_in_parallel_attn", "must be 1 or 2");
  // The combinations transformers' FalconDecoderLayer can run.
  if (new_arch && !parallel) c.fail("parallel_attn", "must be true with new_decoder_architecture");
  if (!new_arch && parallel && num_ln == 2)
    c.fail("num_ln_in_parallel_attn", "2 requires new_decoder_architecture");
  s.names = {.model = "transformer", .embed_tokens = "word_embeddings", .layers = "h",
             .norm = "ln_f", .self_attn = "self_attention"};
  if (parallel) s.topology = num_ln == 1 ? LayerTopology::parallel_shared_norm : LayerTopology::parallel;
  if (parallel && num_ln == 2) {
    s.names.input_layernorm = "ln_attn";
    s.names.post_attention_layernorm = "ln_mlp";
  }
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = nullptr});
  if (new_arch) {
    a.num_key_value_heads = c.int_or("num_kv_heads", a.num_attention_heads);
    if (a.num_key_value_heads <= 0 || a.num_attention_heads % a.num_key_value_heads != 0)
      c.fail("num_kv_heads", "must divide num_attention_heads");
  } else if (multi_query) {
    a.num_key_value_heads = 1;
  } else if (c.int_or("num_kv_heads", a.num_attention_heads) != a.num_attention_heads) {
    c.fail("num_kv_heads", "must equal num_attention_heads without multi_query or "
                           "new_decoder_architecture");
  }
  a.qkv_bias = a.o_bias = c.bool_or("bias", false);
  a.fused_qkv = FusedQKV{.name = "query_key_value", .groups = a.num_key_value_heads};
  a.names.o_proj = "dense";
  if (c.bool_or("alibi", false)) {
    s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
    g.alibi = AlibiOptions{.slopes = alibi_slopes(a.num_attention_heads),
                           .positions = AlibiPositions::MaskCumsum,
                           .scale = 1.0f / std::sqrt(static_cast<float>(a.head_dim)),
                           .bfloat16_product = true};
  } else {
    s.rope = RopeConfig::from_hf(c, a.head_dim);
  }
  s.mlp = {s.hidden_size, c.int_or("ffn_hidden_size", 4 * s.hidden_size),
           read_activation(c, "activation", "gelu"), a.qkv_bias, dtype, /*gated=*/false,
           /*fused_gate_up=*/false, "dense_h_to_4h", "dense_4h_to_h"};
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
