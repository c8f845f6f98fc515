// StableLM (transformers/models/stablelm/modeling_stablelm.py, StableLmConfig): the Llama layer
// with LayerNorm (with bias, layer_norm_eps); q/k/v bias per use_qkv_bias, o_proj without;
// qk_layernorm: one LayerNorm without bias per head (q_layernorm.norms.{h}); partial rotary
// (partial_rotary_factor, 0.25 when config.json has none); use_parallel_residual:
// h = x + attn(ln(x)) + mlp(ln(x)) on the one input_layernorm.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_stablelm(const HfConfig& c, DataType dtype) {
  DecoderSpec s = layernorm_decoder_sizes(c, dtype);
  if (c.bool_or("use_parallel_residual", false)) s.topology = LayerTopology::parallel_shared_norm;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  AttentionOptions& a = s.attention = read_attention(c, s.hidden_size, dtype, {.head_dim = nullptr});
  a.qkv_bias = c.bool_or("use_qkv_bias", false);
  a.norm_eps = s.norm_eps;
  if (c.bool_or("qk_layernorm", false))
    a.qk_norm = QKNorm{.kind = NormKind::LayerNorm, .layout = QKNormLayout::norm_per_head,
                       .q_name = "q_layernorm", .k_name = "k_layernorm"};
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "silu"),
           false, dtype};
  s.rope = RopeConfig::from_hf(c, a.head_dim, {.partial_rotary_factor = 0.25});
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
