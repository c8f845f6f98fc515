// GLM and GLM-4 (transformers/models/{glm,glm4}/modeling_*.py, GlmConfig / Glm4Config): the Llama
// layer with RMSNorm (rms_norm_eps); q/k/v bias per attention_bias (default true), o_proj
// without; num_key_value_heads 2 and head_dim 128 by default; interleaved rotary on the first
// head_dim * partial_rotary_factor channels (0.5 when config.json has none); mlp.gate_up_proj =
// [gate | up], split in the graph.
//   glm4  post_self_attn_layernorm and post_mlp_layernorm on the attention and MLP outputs,
//         before their residual adds
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/decoder.h"

namespace mobius {
namespace {

DecoderSpec glm_spec(const HfConfig& c, DataType dtype) {
  DecoderSpec s = decoder_sizes(c, dtype, 1.5625e-07);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.default_num_key_value_heads = 2, .default_head_dim = 128});
  a.qkv_bias = c.bool_or("attention_bias", true);
  a.rope_interleaved = true;
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "silu"),
           false, dtype};
  s.mlp.fused_gate_up = true;
  s.rope = RopeConfig::from_hf(c, a.head_dim, {.partial_rotary_factor = 0.5});
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_glm(const HfConfig& c, DataType dtype) {
  return std::make_unique<DecoderCausalLM>(glm_spec(c, dtype));
}

std::unique_ptr<Architecture> create_glm4(const HfConfig& c, DataType dtype) {
  DecoderSpec s = glm_spec(c, dtype);
  s.topology = LayerTopology::sandwich;  // names.attn_output_norm / mlp_output_norm: post_self_attn / post_mlp_layernorm
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
