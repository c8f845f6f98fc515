// BertGeneration's decoder (transformers/models/bert_generation/{modeling,configuration}_bert_generation.py,
// 5.23; BertGenerationDecoder with is_decoder): BERT's post-norm layers under a causal mask
//   x0 = bert.embeddings.LayerNorm(word_embeddings(ids) + position_embeddings(position_ids))
//   each layer (bert.encoder.layer.i): h = attention.output.LayerNorm(x + attention(x))
//                                      out = output.LayerNorm(h + output.dense(act(intermediate.dense(h))))
//     attention: self.query / self.key / self.value, multi-head of hidden_size / heads, output.dense;
//     every Linear with a bias, every LayerNorm of eps layer_norm_eps
//   no final norm -> lm_head.decoder: tied to word_embeddings by default with the bias lm_head.bias
//   (the decoder's bias is tied to it); untied, lm_head.decoder.weight and .bias.
// Without is_decoder the model attends bidirectionally and keeps no cache: refused.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_bert_generation(const HfConfig& c, DataType dtype) {
  if (!c.bool_or("is_decoder", false))
    c.fail("is_decoder", "must be true: BertGenerationDecoder without it attends bidirectionally (not a causal LM)");
  if (c.bool_or("add_cross_attention", false))
    c.fail("add_cross_attention", "cross-attention is not supported for text generation");
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, "hidden_size", "num_hidden_layers"),
            .positions = PositionEmbeddingSpec{"embeddings.position_embeddings", c.get_int("max_position_embeddings")},
            .embed_layernorm = "embeddings.LayerNorm"};
  DecoderSpec& s = g.decoder;
  s.norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  s.topology = LayerTopology::norm_after_residual;
  s.lm_head_bias = true;
  s.names = {.model = "bert", .embed_tokens = "embeddings.word_embeddings", .layers = "encoder.layer", .norm = "",
             .lm_head = s.tie_word_embeddings ? "lm_head" : "lm_head.decoder", .self_attn = "attention", .mlp = "",
             .input_layernorm = "attention.output.LayerNorm", .post_attention_layernorm = "output.LayerNorm"};
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  AttentionOptions& a = s.attention =
      read_attention(c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = nullptr});
  a.qkv_bias = a.o_bias = true;
  a.names.q_proj = "self.query";
  a.names.k_proj = "self.key";
  a.names.v_proj = "self.value";
  a.names.o_proj = "output.dense";
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "gelu"), true, dtype,
           /*gated=*/false, /*fused_gate_up=*/false, "intermediate.dense", "output.dense"};
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
