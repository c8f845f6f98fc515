// OLMo-Hybrid (transformers/models/olmo_hybrid/modeling_olmo_hybrid.py OlmoHybridForCausalLM;
// configuration_olmo_hybrid.py OlmoHybridConfig): OLMo 2 attention layers interleaved with gated
// DeltaNet linear-attention layers, a SwiGLU MLP (no bias) on every layer:
//   model.embed_tokens -> model.layers.{i} -> model.norm -> lm_head (untied by default)
//   "full_attention" layers (OlmoHybridAttentionDecoderLayer), OLMo 2's post-norm layer
//     (archs/olmo.cpp): h = x + post_attention_layernorm(self_attn(x));
//     out = h + post_feedforward_layernorm(mlp(h)) (the first norm saved as feedforward_layer_norm,
//     below); q_norm / k_norm RMSNorms over the whole q / k
//     projection width before RoPE; RoPE from rope_parameters, or none at all (NoPE, as the
//     released checkpoints) when its rope_theta is null (OlmoHybridModel builds no rotary_emb)
//   "linear_attention" layers (OlmoHybridLinearAttentionDecoderLayer), Llama's pre-norm layer:
//     h = x + linear_attn(input_layernorm(x)); out = h + mlp(post_attention_layernorm(h)) (saved as
//     attention_layer_norm and feedforward_layer_norm: conversion_mapping.py renames them on load), with
//     linear_attn the gated DeltaNet (blocks/gated_delta_net.h; OlmoHybridGatedDeltaNet): separate
//     q/k/v/g/b/a projections and q/k/v convs (GatedDeltaNetProjections::unfused), beta = 2 sigmoid(b) when
//     linear_allow_neg_eigval (default true), its gated output norm o_norm of eps 1e-5 (FLA's
//     default, not rms_norm_eps), conv activation hidden_act
// The q/k/v convs are read at the released checkpoints' sizes (key dim, key dim, value dim).
// transformers 5.23's save_pretrained writes them by cutting its concatenated conv1d into three
// equal parts (the reverse of conversion_mapping.py's Concatenate), which are those sizes only when
// the key and value widths are equal; another split is refused, naming the tensor and its shape
// (reading any split needs a Concat along the first axis in weights/transform.h).
// OlmoHybridConfig.__post_init__: without layer_types, layer i is "full_attention" when i % 4 == 3
// (and the last layer when that leaves none), "linear_attention" elsewhere; linear_num_key_heads and
// linear_num_value_heads default to num_attention_heads, linear_key_head_dim to
// int(0.75 * hidden_size / linear_num_key_heads), linear_value_head_dim to twice that;
// validate_architecture refuses a list without either kind.
// States: an attention layer past_key_values.{i}.key|value; a linear-attention layer
// past_key_values.{i}.conv_state [batch_size, 2 * key heads * key dim + value heads * value dim,
// linear_conv_kernel_dim - 1] and past_key_values.{i}.recurrent_state [batch_size, value heads,
// key dim, value dim] (docs/design.md "The state model"), as Qwen3-Next's.
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "blocks/gated_delta_net.h"

namespace mobius {

namespace {

// Whether the RoPE dict transformers ends with has rope_theta None (convert_rope_params_to_dict:
// the dict's own rope_theta, else config.json's top-level one, null included): then NoPE.
bool olmo_hybrid_nope(const HfConfig& c) {
  const std::optional<HfConfig> p = RopeConfig::params(c);
  if (p && p->json().contains("rope_theta")) return p->json().at("rope_theta").is_null();
  return c.json().contains("rope_theta") && c.json().at("rope_theta").is_null();
}

}  // namespace

std::unique_ptr<Architecture> create_olmo_hybrid(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // OlmoHybridMLP (mlp_bias not read)
  const int64_t n = s.num_hidden_layers;
  std::vector<std::string> fallback(static_cast<size_t>(n), "linear_attention");
  for (int64_t i = 3; i < n; i += 4) fallback[static_cast<size_t>(i)] = "full_attention";
  if (std::find(fallback.begin(), fallback.end(), "full_attention") == fallback.end()) fallback.back() = "full_attention";
  s.layer_types = read_layer_list(c, "layer_types", n, {"linear_attention", "full_attention"}, fallback);
  for (const char* kind : {"linear_attention", "full_attention"})
    if (std::find(s.layer_types.begin(), s.layer_types.end(), kind) == s.layer_types.end())
      c.fail("layer_types", std::string("OLMo-Hybrid expects at least one '") + kind + "' layer");

  // the norms as save_pretrained writes them (conversion_mapping.py "olmo_hybrid" renames
  // input_layernorm and post_attention_layernorm on load): the linear-attention layers'
  s.names.input_layernorm = "attention_layer_norm";
  s.names.post_attention_layernorm = "feedforward_layer_norm";
  // the attention layers: OLMo 2's (archs/olmo.cpp olmo2_spec), their post_attention_layernorm
  // saved as feedforward_layer_norm too
  s.attention.qk_norm = QKNorm{.layout = QKNormLayout::full_width};
  DecoderNames post_norm = s.names;
  post_norm.input_layernorm = post_norm.post_attention_layernorm = "";
  post_norm.attn_output_norm = "feedforward_layer_norm";
  post_norm.mlp_output_norm = "post_feedforward_layernorm";
  s.layer_type_layout["full_attention"] = {LayerTopology::sandwich, post_norm};
  if (olmo_hybrid_nope(c)) s.layer_uses_rope.assign(static_cast<size_t>(n), false);

  const int64_t heads = s.attention.num_attention_heads;
  const int64_t key_heads = c.int_or("linear_num_key_heads", heads);
  if (key_heads <= 0) c.fail("linear_num_key_heads", "must be positive");
  const auto default_key_dim = static_cast<int64_t>(0.75 * static_cast<double>(s.hidden_size) / static_cast<double>(key_heads));
  const int64_t key_dim = c.int_or("linear_key_head_dim", default_key_dim);
  const GatedDeltaNetOptions delta{.hidden_size = s.hidden_size,
                                   .num_key_heads = key_heads,
                                   .num_value_heads = c.int_or("linear_num_value_heads", heads),
                                   .key_head_dim = key_dim,
                                   .value_head_dim = c.int_or("linear_value_head_dim", 2 * key_dim),
                                   .conv_kernel = c.int_or("linear_conv_kernel_dim", 4),
                                   .hidden_act = s.mlp.hidden_act,
                                   .norm_eps = 1e-5f,
                                   .dtype = dtype,
                                   .projections = GatedDeltaNetProjections::unfused,
                                   .beta_scale = c.bool_or("linear_allow_neg_eigval", true) ? 2.0f : 1.0f};
  s.make_mixer = [delta, types = s.layer_types](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "linear_attention") return LayerMixer{};
    return LayerMixer{"linear_attn", std::make_unique<GatedDeltaNetMixer>(delta)};
  };
  return make_decoder(s);
}

}  // namespace mobius
