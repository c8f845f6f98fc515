// BLOOM (transformers/models/bloom/modeling_bloom.py): transformer.word_embeddings ->
// word_embeddings_layernorm -> h.{i}: input_layernorm -> self_attention (query_key_value per head
// [q | k | v], dense) -> post_attention_layernorm -> mlp (dense_h_to_4h -> tanh GELU ->
// dense_4h_to_h, 4 * hidden_size) -> ln_f -> lm_head tied to word_embeddings by default; biases
// everywhere. Positions: ALiBi only (blocks/alibi.h, from the attention mask's cumulative
// positions). apply_residual_connection_post_layernorm takes each residual after its norm.
// pretraining_tp > 1 with slow_but_exact splits the output projections into slices; the sum is
// the same product.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"

namespace mobius {
namespace {

// BloomConfig: n_embed (older configs) or hidden_size; n_head / n_layer or their
// num_attention_heads / num_hidden_layers aliases (attribute_map).
const char* present(const HfConfig& c, const char* key, const char* alias) {
  return c.has(key) ? key : alias;
}

}  // namespace

std::unique_ptr<Architecture> create_bloom(const HfConfig& c, DataType dtype) {
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, present(c, "n_embed", "hidden_size"),
                                          present(c, "n_layer", "num_hidden_layers")),
            .embed_layernorm = "word_embeddings_layernorm"};
  DecoderSpec& s = g.decoder;
  s.names = {.model = "transformer", .embed_tokens = "word_embeddings", .layers = "h",
             .norm = "ln_f", .self_attn = "self_attention"};
  if (c.bool_or("apply_residual_connection_post_layernorm", false)) s.topology = LayerTopology::residual_from_norm;
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype,
      {.num_attention_heads = present(c, "n_head", "num_attention_heads"),
       .num_key_value_heads = nullptr, .head_dim = nullptr});
  a.qkv_bias = a.o_bias = true;
  a.fused_qkv = FusedQKV{.name = "query_key_value", .groups = a.num_attention_heads};
  a.names.o_proj = "dense";
  g.alibi = AlibiOptions{.slopes = alibi_slopes(a.num_attention_heads),
                         .positions = AlibiPositions::MaskCumsum};
  s.mlp = {s.hidden_size, 4 * s.hidden_size, "gelu_pytorch_tanh", true, dtype, /*gated=*/false,
           /*fused_gate_up=*/false, "dense_h_to_4h", "dense_4h_to_h"};
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
