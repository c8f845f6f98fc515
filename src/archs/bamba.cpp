// Bamba (transformers/models/bamba/modular_bamba.py BambaForCausalLM): a hybrid of Mamba-2 and
// Llama attention layers, each followed by a SwiGLU MLP:
//   model.embed_tokens -> model.layers.{i}: h = x + mixer(input_layernorm(x));
//     out = h + feed_forward(pre_ff_layernorm(h)) -> model.final_layernorm -> lm_head
// The mixer of layer i is self_attn (LlamaAttention, RoPE on the first half of each head:
// BambaConfig hard-codes partial_rotary_factor 0.5 unless rope_parameters sets one) where i is in
// attn_layer_indices, else mamba (the Mamba-2 mixer, blocks/mamba2.h, archs/bamba.h). An attention
// layer carries past_key_values.{i}.key|value, a Mamba layer
// past_key_values.{i}.conv_state|recurrent_state (docs/design.md "The state model");
// onnxruntime-genai 0.18 has no model type for it: build with --runtime none.
#include "archs/bamba.h"

#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

Mamba2Options bamba_mamba_options(const HfConfig& c, const DecoderSpec& s) {
  const int64_t expand = c.int_or("mamba_expand", 2);
  const int64_t heads = c.int_or("mamba_n_heads", 128);
  if (heads < 1) c.fail("mamba_n_heads", "expected a positive number of heads, got " + std::to_string(heads));
  const nlohmann::json* d_head = c.json().contains("mamba_d_head") ? &c.json()["mamba_d_head"] : nullptr;
  const bool auto_head = !d_head || (d_head->is_string() && d_head->get<std::string>() == "auto");
  Mamba2Options m{.hidden_size = s.hidden_size, .num_heads = heads,
                  .head_dim = auto_head ? expand * s.hidden_size / heads : c.int_or("mamba_d_head", 64),
                  .n_groups = c.int_or("mamba_n_groups", 1), .state_size = c.int_or("mamba_d_state", 256),
                  .conv_kernel = c.int_or("mamba_d_conv", 4), .chunk_size = c.int_or("mamba_chunk_size", 256),
                  .use_bias = c.bool_or("mamba_proj_bias", false), .use_conv_bias = c.bool_or("mamba_conv_bias", true),
                  .hidden_act = s.mlp.hidden_act, .layer_norm_epsilon = s.norm_eps, .dtype = s.dtype};
  check_mamba2_fields(c, m, expand,
                      {.num_heads = "mamba_n_heads", .head_dim = "mamba_d_head", .n_groups = "mamba_n_groups",
                       .state_size = "mamba_d_state", .conv_kernel = "mamba_d_conv",
                       .chunk_size = "mamba_chunk_size", .expand = "mamba_expand"});
  read_time_step_limit(c, m);
  return m;
}

LayerMixerFactory mamba_on_linear_attention(std::vector<std::string> layer_types, const Mamba2Options& m) {
  return [m, types = std::move(layer_types)](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "linear_attention") return LayerMixer{};
    return LayerMixer{"mamba", std::make_unique<Mamba2Mixer>(m)};
  };
}

std::unique_ptr<Architecture> create_bamba(const HfConfig& c, DataType dtype) {
  // BambaConfig.__post_init__ passes partial_rotary_factor=0.5 to convert_rope_params_to_dict,
  // which a top-level partial_rotary_factor does not override (only rope_parameters' own does)
  RopeDefaults rope{.rope_theta = c.float_or("rope_theta", 10000.0), .partial_rotary_factor = 0.5};
  DecoderSpec s = llama_spec(c, dtype, rope);
  s.rope = RopeConfig::from_params(c, RopeConfig::params(c, rope), s.attention.head_dim, rope);
  s.names.norm = "final_layernorm";
  s.names.post_attention_layernorm = "pre_ff_layernorm";
  s.names.mlp = "feed_forward";
  // BambaConfig.layers_block_type: "full_attention" at attn_layer_indices, "linear_attention" elsewhere
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "linear_attention");
  if (c.has("attn_layer_indices")) {
    const nlohmann::json& list = c.json()["attn_layer_indices"];
    if (!list.is_array()) c.fail("attn_layer_indices", "expected a list of layer indices");
    for (const nlohmann::json& i : list) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= s.num_hidden_layers)
        c.fail("attn_layer_indices", "expected layer indices below num_hidden_layers");
      s.layer_types[static_cast<size_t>(i.get<int64_t>())] = "full_attention";
    }
  }
  s.make_mixer = mamba_on_linear_attention(s.layer_types, bamba_mamba_options(c, s));
  return make_decoder(s);
}

}  // namespace mobius
