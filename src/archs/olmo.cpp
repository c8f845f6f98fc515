// OLMo and OLMo 2 (transformers/models/olmo/modeling_olmo.py, olmo2/modeling_olmo2.py).
//   olmo   Llama with parameter-free LayerNorms (OlmoLayerNorm, eps fixed at 1e-5) and the q/k/v
//          projections clamped to [-clip_qkv, clip_qkv] when clip_qkv is set; MLP without bias
//   olmo2  post-norm layers (post_attention_layernorm after self_attn, post_feedforward_layernorm
//          after mlp, no norm before either) and q_norm / k_norm RMSNorms over the whole q / k
//          projection width, before RoPE; MLP without bias
//   olmo3  (olmo3/modular_olmo3.py) olmo2 with layer_types (default: every 4th layer full, the
//          others sliding_window) and RoPE per layer type: rope_parameters
//          {"full_attention": …, "sliding_attention": …}, or in older configs rope_theta (default
//          500000) and rope_scaling (only when it names a rope_type) for full attention and the
//          default rope with theta 500000 for sliding attention (the class pops rope_theta once)
//   flex_olmo  (flex_olmo/modular_flex_olmo.py) olmo2's layers (FlexOlmoAttention is
//          Olmo2Attention; every layer full attention, default_theta 500000) with OLMoE's sparse
//          MoE as every layer's mlp: softmax top-k of num_experts (norm_topk_prob), experts of
//          intermediate_size, no shared expert
#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "registry/config_defaults.h"

namespace mobius {

std::unique_ptr<Architecture> create_olmo(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.norm_kind = NormKind::LayerNorm;
  s.norm_elementwise_affine = false;
  s.norm_eps = 1e-5f;
  if (auto clip = c.opt_float("clip_qkv")) s.attention.clip_qkv = static_cast<float>(*clip);
  s.mlp.bias = false;
  return make_decoder(s);
}

namespace {

// OLMo 2's layer: the spec OLMo 3 starts from too.
DecoderSpec olmo2_spec(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.names.input_layernorm = s.names.post_attention_layernorm = "";
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attention_layernorm";
  s.names.mlp_output_norm = "post_feedforward_layernorm";
  s.attention.qk_norm = QKNorm{.layout = QKNormLayout::full_width};
  s.mlp.bias = false;
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_olmo2(const HfConfig& c, DataType dtype) {
  return make_decoder(olmo2_spec(c, dtype));
}

std::unique_ptr<Architecture> create_olmo3(const HfConfig& c, DataType dtype) {
  DecoderSpec s = olmo2_spec(c, dtype);
  if (!c.has("layer_types"))
    for (size_t i = 0; i < s.layer_types.size(); ++i)
      if ((i + 1) % 4 != 0) s.layer_types[i] = "sliding_attention";
  read_layer_types(c, s);
  for (const auto& t : s.layer_types)
    if (t == "sliding_attention") s.sliding_window = c.int_or("sliding_window", 4096);
  // Olmo3Config.convert_rope_params_to_dict
  auto [full, sliding] = read_layer_type_rope_params(c);
  if (!c.sub("rope_parameters") && full && !full->has("rope_type"))
    full.reset();  // {"rope_type": "default"}.update(rope_scaling): a legacy "type" key is ignored
  const double default_theta = 500000.0;
  s.rope = RopeConfig::from_params(c, full, s.attention.head_dim, {.rope_theta = c.float_or("rope_theta", default_theta)});
  s.layer_type_rope["sliding_attention"] =
      RopeConfig::from_params(c, sliding, s.attention.head_dim, {.rope_theta = default_theta});
  return make_decoder(s);
}

std::unique_ptr<Architecture> create_flex_olmo(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig c = with_attribute_map(config, {{"num_local_experts", "num_experts"}});
  DecoderSpec s = olmo2_spec(c, dtype);
  MoEOptions m = read_moe_options(c, s, "num_experts", "intermediate_size");
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", false);
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return make_decoder(s);
}

}  // namespace mobius
