// Cohere and Cohere2 (transformers/models/{cohere,cohere2}/modeling_*.py, CohereConfig /
// Cohere2Config): attention and gated MLP in parallel on one input_layernorm,
// h = x + attn(ln(x)) + mlp(ln(x)); LayerNorm without bias (layer_norm_eps); q/k/v/o bias per
// attention_bias; interleaved rotary over the whole head (the default rope ignores
// partial_rotary_factor, a scaled one fails on it: refused); logits * logit_scale (0.0625); tied embeddings by default.
//   cohere   use_qk_norm: LayerNorm without bias over head_dim with a [heads, head_dim] weight;
//            rope_theta 500000 by default
//   cohere2  layer_types (default: every 4th layer full attention, the others sliding with
//            sliding_window 4096); RoPE only on the sliding layers (none if sliding_window is null)
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "archs/layer_types.h"
#include "blocks/decoder.h"

namespace mobius {
namespace {

DecoderSpec cohere_spec(const HfConfig& c, DataType dtype, double default_theta) {
  DecoderSpec s = layernorm_decoder_sizes(c, dtype);
  s.norm_bias = false;
  s.topology = LayerTopology::parallel_shared_norm;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.logit_scale = static_cast<float>(c.float_or("logit_scale", 0.0625));
  AttentionOptions& a = s.attention = read_attention(c, s.hidden_size, dtype);
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", false);
  a.rope_interleaved = true;
  a.norm_eps = s.norm_eps;
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "silu"),
           false, dtype};
  s.rope = RopeConfig::from_hf(c, a.head_dim, {.rope_theta = default_theta});
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_cohere(const HfConfig& c, DataType dtype) {
  DecoderSpec s = cohere_spec(c, dtype, 500000.0);
  if (c.bool_or("use_qk_norm", false))
    s.attention.qk_norm = QKNorm{.kind = NormKind::LayerNorm, .layout = QKNormLayout::weight_per_head};
  return std::make_unique<DecoderCausalLM>(s);
}

std::unique_ptr<Architecture> create_cohere2(const HfConfig& c, DataType dtype) {
  DecoderSpec s = cohere_spec(c, dtype, 10000.0);
  std::vector<std::string> pattern;
  const int64_t every = c.int_or("sliding_window_pattern", 4);
  if (every <= 0) c.fail("sliding_window_pattern", "must be positive");
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    pattern.push_back((i + 1) % every ? "sliding_attention" : "full_attention");
  s.layer_types = read_layer_types(c, s.num_hidden_layers, pattern);
  // Cohere2Attention: sliding_window = config.sliding_window on sliding layers, else None; RoPE
  // only where it is not None (so nowhere when config.json sets it to null)
  const bool absent = !c.json().contains("sliding_window");
  s.sliding_window = absent ? 4096 : c.int_or("sliding_window", 0);
  for (const std::string& t : s.layer_types)
    s.layer_uses_rope.push_back(t == "sliding_attention" && s.sliding_window > 0);
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
