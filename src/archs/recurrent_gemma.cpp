// RecurrentGemma (Griffin; transformers/models/recurrent_gemma/modeling_recurrent_gemma.py
// RecurrentGemmaForCausalLM, configuration_recurrent_gemma.py): Gemma's decoder whose layers hold,
// as their temporal block, either the RG-LRU recurrent block (blocks/rg_lru.h) or a local
// (sliding-window) self-attention:
//   model.embed_tokens * normalizer -> model.layers.{i}: h = x + temporal_block(temporal_pre_norm(x));
//     out = h + mlp_block(channel_pre_norm(h)) -> model.final_norm -> lm_head (tied by default)
//   -> 30 * tanh(logits / 30) (logits_soft_cap)
// RMSNorms scale by (1 + weight) in float32 (rms_norm_eps); normalizer = hidden_size**0.5 rounded
// to bfloat16 (a bfloat16 buffer, cast to the model dtype); mlp_block gate_proj / up_proj /
// down_proj with bias, width intermediate_size // 2, hidden_activation (gelu_pytorch_tanh).
// Layer i is block_types[i % len] ("recurrent": the recurrent block; any other name: attention),
// as RecurrentGemmaConfig.layers_block_type; default (recurrent, recurrent, attention).
// The attention: num_attention_heads of head_dim (hidden_size // heads unless config.json sets it),
// num_key_value_heads (default: heads), q/k/v bias per attention_bias, o_proj always with bias,
// RoPE (rope_type default only) on partial_rotary_factor (default 0.5) of each head, scale
// head_dim**-0.5, a query sees the last attention_window_size (alias sliding_window) positions,
// itself included (transformers' sliding-window cache keeps window - 1 past positions; the graph's
// cache keeps them all and the mask applies the window).
// States: an attention layer past_key_values.{i}.key|value, a recurrent layer
// past_key_values.{i}.conv_state [batch_size, lru_width, conv1d_width - 1] and
// past_key_values.{i}.recurrent_state [batch_size, lru_width] (float32), present.{i}.* likewise;
// the recurrent blocks read position_ids (the recurrence restarts at 0). onnxruntime-genai 0.18
// runs it as its generic "decoder" with layer_types (genai_config.json).
#include <cmath>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/rg_lru.h"
#include "util/error.h"
#include "util/float16.h"

namespace mobius {

namespace {

// RecurrentGemmaConfig.layers_block_type: (block_types * 100)[:num_hidden_layers], "recurrent" ->
// the recurrent block, anything else -> attention.
std::vector<std::string> recurrent_gemma_layer_types(const HfConfig& c, int64_t layers) {
  std::vector<std::string> pattern = {"recurrent", "recurrent", "attention"};
  if (c.has("block_types")) {
    const nlohmann::json& list = c.json()["block_types"];
    if (!list.is_array() || list.empty() || list.size() > kMaxConfigList)
      c.fail("block_types", "expected a non-empty list of block names");
    pattern.clear();
    for (const nlohmann::json& t : list) {
      if (!t.is_string()) c.fail("block_types", "expected a list of block names");
      pattern.push_back(t.get<std::string>());
    }
  }
  if (static_cast<size_t>(layers) > 100 * pattern.size())
    c.fail("num_hidden_layers", "exceeds 100 repetitions of block_types (RecurrentGemmaConfig's layers_block_type)");
  std::vector<std::string> types;
  for (int64_t i = 0; i < layers; ++i)
    types.push_back(pattern[static_cast<size_t>(i) % pattern.size()] == "recurrent" ? "recurrent" : "sliding_attention");
  return types;
}

}  // namespace

std::unique_ptr<Architecture> create_recurrent_gemma(const HfConfig& c, DataType dtype) {
  DecoderSpec s = decoder_sizes(c, dtype);
  if (s.num_hidden_layers < 1 || s.num_hidden_layers > kMaxLayers)
    c.fail("num_hidden_layers", "expected 1 to " + std::to_string(kMaxLayers));
  if (s.hidden_size < 1 || s.hidden_size > kMaxHiddenSize)
    c.fail("hidden_size", "expected 1 to " + std::to_string(kMaxHiddenSize));
  s.norm_weight_offset_one = true;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.names.norm = "final_norm";
  s.names.input_layernorm = "temporal_pre_norm";
  s.names.post_attention_layernorm = "channel_pre_norm";
  s.names.self_attn = "temporal_block";
  s.names.mlp = "mlp_block";
  // RecurrentGemmaModel.normalizer: torch.tensor(hidden_size**0.5, dtype=torch.bfloat16)
  s.embed_scale = bf16_to_f32(f64_to_bf16(std::sqrt(static_cast<double>(s.hidden_size))));
  const double cap = c.float_or("logits_soft_cap", 30.0);
  if (!(cap > 0.0)) c.fail("logits_soft_cap", "must be positive (the logits are divided by it)");
  s.final_logit_softcapping = static_cast<float>(cap);

  AttentionOptions& a = s.attention = read_attention(c, s.hidden_size, dtype);
  a.qkv_bias = c.bool_or("attention_bias", false);
  a.o_bias = true;
  s.layer_types = recurrent_gemma_layer_types(c, s.num_hidden_layers);
  s.sliding_window = c.has("sliding_window") ? c.get_int("sliding_window") : c.int_or("attention_window_size", 2048);
  if (s.sliding_window < 1 || s.sliding_window > kMaxPositions)
    c.fail("attention_window_size", "expected 1 to " + std::to_string(kMaxPositions));
  s.rope = RopeConfig::from_hf(c, a.head_dim, RopeDefaults{.partial_rotary_factor = 0.5});
  if (s.rope.rope_type != "default")  // RecurrentGemmaRotaryEmbedding raises on any other
    c.fail("rope_parameters", "RecurrentGemma supports rope_type 'default' only, got '" + s.rope.rope_type + "'");

  const std::string act = read_activation(c, "hidden_activation", "gelu_pytorch_tanh");
  const int64_t width = c.int_or("intermediate_size", 3 * 2560) / 2;  // RecurrentGemmaMlp
  if (width < 1 || width > kMaxFfnSize) c.fail("intermediate_size", "expected 2 to " + std::to_string(2 * kMaxFfnSize));
  s.mlp = {.hidden_size = s.hidden_size, .intermediate_size = width, .hidden_act = act, .bias = true, .dtype = dtype};

  const RgLruBlockOptions block{.hidden_size = s.hidden_size,
                                .lru_width = c.opt_int("lru_width").value_or(s.hidden_size),
                                .num_heads = a.num_attention_heads,
                                .conv_kernel = c.int_or("conv1d_width", 4),
                                .hidden_activation = act,
                                .dtype = dtype};
  s.make_mixer = [block, types = s.layer_types](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "recurrent") return LayerMixer{};
    return LayerMixer{"temporal_block", std::make_unique<RgLruBlock>(block)};
  };
  return make_decoder(s);
}

}  // namespace mobius
