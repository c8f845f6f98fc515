// Phi (transformers/models/phi/modeling_phi.py, PhiConfig): attention and MLP in parallel on one
// input_layernorm, h = x + attn(ln(x)) + mlp(ln(x)); LayerNorm with bias (layer_norm_eps);
// q/k/v and dense with bias; partial rotary (partial_rotary_factor, 0.5 when config.json has
// none); optional qk_layernorm (LayerNorm over head_dim with bias, shared by the heads); MLP
// fc1 -> hidden_act (gelu_new) -> fc2 with bias; model.final_layernorm; lm_head with bias.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_phi(const HfConfig& c, DataType dtype) {
  DecoderSpec s = layernorm_decoder_sizes(c, dtype);
  s.topology = LayerTopology::parallel_shared_norm;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  s.lm_head_bias = true;
  s.names.norm = "final_layernorm";
  AttentionOptions& a = s.attention = read_attention(c, s.hidden_size, dtype);
  a.qkv_bias = a.o_bias = true;
  a.names.o_proj = "dense";
  a.norm_eps = s.norm_eps;
  if (c.bool_or("qk_layernorm", false))
    a.qk_norm = QKNorm{.kind = NormKind::LayerNorm, .bias = true, .q_name = "q_layernorm",
                       .k_name = "k_layernorm"};
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "gelu_new"),
           true, dtype, /*gated=*/false};
  s.rope = RopeConfig::from_hf(c, a.head_dim, {.partial_rotary_factor = 0.5});
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
