// LFM2 (transformers/models/lfm2/modeling_lfm2.py Lfm2ForCausalLM; configuration_lfm2.py): a
// hybrid of gated short-convolution layers (blocks/short_conv.h) and attention layers, each
// followed by a SwiGLU MLP:
//   model.embed_tokens -> model.layers.{i}: h = x + op(operator_norm(x));
//     out = h + feed_forward(ffn_norm(h)) (w1 gate, w3 up, w2 down, silu) -> model.embedding_norm
//   -> lm_head (tied to the embeddings unless tie_word_embeddings / tie_embedding is false)
// op is conv (Lfm2ShortConv, kernel conv_L_cache, conv_bias) on the layers whose layer_types entry
// is "conv", else self_attn (Lfm2Attention: q_layernorm / k_layernorm RMSNorm per head before RoPE,
// out_proj, no bias; head_dim = hidden_size / num_attention_heads unless config.json sets one).
// Lfm2Config: layer_types, else "full_attention" at full_attn_idxs (default: every layer) and
// "conv" elsewhere; norm_eps of every RMSNorm; intermediate_size (alias block_ff_dim) adjusted as
// Lfm2MLP does with block_auto_adjust_ff_dim: int(2 * I / 3), times block_ffn_dim_multiplier,
// rounded up to block_multiple_of; RoPE rope_parameters (default_theta 1e6).
// States: an attention layer past_key_values.{i}.key|value, a conv layer
// past_key_values.{i}.conv_state [batch_size, hidden_size, conv_L_cache - 1] (docs/design.md "The
// state model"); onnxruntime-genai 0.18 runs it as its "lfm2" type (layer_types "conv" /
// "full_attention", conv_cache_size, package/genai_config.cpp).
#include "archs/lfm2.h"

#include <cmath>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "blocks/short_conv.h"

namespace mobius {

namespace {

// Lfm2MLP's width: intermediate_size (block_ff_dim wins, as Lfm2Config.__post_init__ pops it),
// adjusted when block_auto_adjust_ff_dim.
int64_t lfm2_mlp_width(const HfConfig& c) {
  int64_t width = c.has("block_ff_dim") ? c.get_int("block_ff_dim") : c.get_int("intermediate_size");
  if (width < 1 || width > kMaxFfnSize) c.fail("intermediate_size", "expected 1 to " + std::to_string(kMaxFfnSize));
  if (!c.bool_or("block_auto_adjust_ff_dim", true)) return width;
  width = 2 * width / 3;  // int(2 * I / 3): both positive, truncation is the floor
  if (!c.has("block_ffn_dim_multiplier")) return width;  // None: no multiplier, no rounding
  const double multiplier = c.float_or("block_ffn_dim_multiplier", 1.0);
  const int64_t multiple = c.int_or("block_multiple_of", 256);
  if (multiple < 1 || multiple > kMaxFfnSize) c.fail("block_multiple_of", "expected 1 to " + std::to_string(kMaxFfnSize));
  const double scaled = std::trunc(multiplier * static_cast<double>(width));
  if (!(scaled >= 1.0 && scaled <= static_cast<double>(kMaxFfnSize)))
    c.fail("block_ffn_dim_multiplier", "gives an MLP width outside 1 to " + std::to_string(kMaxFfnSize));
  width = static_cast<int64_t>(scaled);
  return multiple * ((width + multiple - 1) / multiple);
}

}  // namespace

DecoderSpec lfm2_spec(const HfConfig& c, DataType dtype, std::vector<std::string> layer_types) {
  DecoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = static_cast<int64_t>(layer_types.size());
  s.norm_eps = static_cast<float>(c.float_or("norm_eps", 1e-5));
  // the configs' __post_init__: tie_embedding, where config.json has it, wins
  s.tie_word_embeddings = c.has("tie_embedding") ? c.get_bool("tie_embedding") : c.bool_or("tie_word_embeddings", true);
  s.names.norm = "embedding_norm";
  s.names.input_layernorm = "operator_norm";
  s.names.post_attention_layernorm = "ffn_norm";
  s.names.mlp = "feed_forward";

  const int64_t heads = c.get_int("num_attention_heads");
  if (heads < 1 || heads > kMaxHeads || (s.hidden_size % heads != 0 && !c.has("head_dim")))
    c.fail("num_attention_heads", "expected 1 to " + std::to_string(kMaxHeads) + ", dividing hidden_size " +
                                      std::to_string(s.hidden_size) + " when head_dim is not set");
  AttentionOptions& a = s.attention;
  a.hidden_size = s.hidden_size;
  a.num_attention_heads = heads;
  a.num_key_value_heads = c.int_or("num_key_value_heads", 8);
  if (a.num_key_value_heads < 1 || heads % a.num_key_value_heads != 0)
    c.fail("num_key_value_heads", std::to_string(a.num_key_value_heads) + " must divide num_attention_heads " +
                                       std::to_string(heads));
  a.head_dim = c.int_or("head_dim", s.hidden_size / heads);  // getattr(config, "head_dim", ...)
  a.qk_norm = QKNorm{.q_name = "q_layernorm", .k_name = "k_layernorm"};
  a.norm_eps = s.norm_eps;
  a.names.o_proj = "out_proj";
  a.dtype = dtype;
  s.rope = RopeConfig::from_hf(c, a.head_dim, RopeDefaults{.rope_theta = c.float_or("rope_theta", 1e6)});

  s.layer_types = std::move(layer_types);
  set_short_conv_layers(c, s, 3);
  return s;
}

void set_short_conv_layers(const HfConfig& c, DecoderSpec& s, int64_t default_kernel) {
  const ShortConvOptions conv{.hidden_size = s.hidden_size, .kernel = c.int_or("conv_L_cache", default_kernel),
                              .bias = c.bool_or("conv_bias", false), .dtype = s.dtype};
  if (conv.kernel < 2 || conv.kernel > kMaxSmallSize)
    c.fail("conv_L_cache", "expected 2 to " + std::to_string(kMaxSmallSize));
  s.make_mixer = [conv, types = s.layer_types](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "conv") return LayerMixer{};
    return LayerMixer{"conv", std::make_unique<ShortConvMixer>(conv)};
  };
}

std::unique_ptr<Architecture> create_lfm2(const HfConfig& c, DataType dtype) {
  const int64_t layers = c.get_int("num_hidden_layers");
  if (layers < 1 || layers > kMaxLayers) c.fail("num_hidden_layers", "expected 1 to " + std::to_string(kMaxLayers));
  // Lfm2Config.__post_init__: without layer_types, "full_attention" at full_attn_idxs (default
  // every layer), "conv" elsewhere
  std::vector<std::string> fallback(static_cast<size_t>(layers), "full_attention");
  if (c.has("full_attn_idxs")) {
    const nlohmann::json& list = c.json()["full_attn_idxs"];
    if (!list.is_array()) c.fail("full_attn_idxs", "expected a list of layer indices");
    fallback.assign(fallback.size(), "conv");
    for (const nlohmann::json& i : list) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= layers)
        c.fail("full_attn_idxs", "expected layer indices below num_hidden_layers");
      fallback[static_cast<size_t>(i.get<int64_t>())] = "full_attention";
    }
  }
  DecoderSpec s = lfm2_spec(c, dtype, read_layer_list(c, "layer_types", layers, {"full_attention", "conv"}, fallback));
  s.mlp = {.hidden_size = s.hidden_size, .intermediate_size = lfm2_mlp_width(c), .hidden_act = "silu",
           .dtype = dtype, .gate_name = "w1", .gated_up_name = "w3", .gated_down_name = "w2"};
  return make_decoder(s);
}

}  // namespace mobius
