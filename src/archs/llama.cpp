// Llama-like decoders: llama, mistral, qwen2, qwen3. One DecoderSpec filled from config.json;
// the types differ only in fields (transformers/models/{llama,mistral,qwen2,qwen3}/modeling_*.py):
//   llama   attention_bias (q/k/v/o), mlp_bias, optional head_dim
//   mistral sliding_window on every layer when set; no bias (attention_bias, mlp_bias not read)
//   qwen2   q/k/v bias always, o_proj and MLP without; per-layer sliding via layer_types
//   qwen3   per-head q/k RMSNorm, attention_bias (q/k/v/o), MLP without bias; per-layer sliding
//           via layer_types
#include "archs/llama.h"

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "blocks/activation.h"
#include "util/error.h"

namespace mobius {

DecoderSpec decoder_sizes(const HfConfig& c, DataType dtype, double default_rms_norm_eps) {
  DecoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = c.get_int("num_hidden_layers");
  s.norm_eps = static_cast<float>(c.float_or("rms_norm_eps", default_rms_norm_eps));
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "full_attention");
  return s;
}

DecoderSpec layernorm_decoder_sizes(const HfConfig& c, DataType dtype) {
  DecoderSpec s = decoder_sizes(c, dtype);
  s.norm_kind = NormKind::LayerNorm;
  s.norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-5));
  return s;
}

DecoderSpec llama_spec(const HfConfig& c, DataType dtype, const RopeDefaults& rope,
                       const std::string& intermediate_key) {
  DecoderSpec s = decoder_sizes(c, dtype);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  const int64_t heads = c.get_int("num_attention_heads");
  if (heads <= 0 || (s.hidden_size % heads != 0 && !c.has("head_dim")))
    c.fail("num_attention_heads", std::to_string(heads) + " must divide hidden_size " + std::to_string(s.hidden_size) +
                                       " when head_dim is not set");
  AttentionOptions& a = s.attention;
  a.hidden_size = s.hidden_size;
  a.num_attention_heads = heads;
  a.num_key_value_heads = c.int_or("num_key_value_heads", heads);
  if (a.num_key_value_heads <= 0 || heads % a.num_key_value_heads != 0)
    c.fail("num_key_value_heads", std::to_string(a.num_key_value_heads) + " must divide num_attention_heads " +
                                       std::to_string(heads));
  a.head_dim = c.int_or("head_dim", s.hidden_size / heads);
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", false);
  a.norm_eps = s.norm_eps;
  a.dtype = dtype;
  s.mlp = {s.hidden_size, c.get_int(intermediate_key), c.string_or("hidden_act", "silu"),
           c.bool_or("mlp_bias", false), dtype};
  if (!is_known_activation(s.mlp.hidden_act))
    c.fail("hidden_act", "unsupported activation '" + s.mlp.hidden_act + "'");
  s.rope = RopeConfig::from_hf(c, a.head_dim, rope);
  return s;
}

// Per-layer attention types from `layer_types` (qwen2, qwen3), with their sliding_window.
void read_layer_types(const HfConfig& c, DecoderSpec& s, std::optional<int64_t> default_sliding_window) {
  s.layer_types = mobius::read_layer_types(c, s.num_hidden_layers, s.layer_types);
  for (const auto& t : s.layer_types)
    if (t == "sliding_attention")
      s.sliding_window = default_sliding_window ? c.int_or("sliding_window", *default_sliding_window)
                                                : c.get_int("sliding_window");
}

std::unique_ptr<Architecture> make_decoder(const DecoderSpec& s) {
  return std::make_unique<DecoderCausalLM>(s);
}

std::unique_ptr<Architecture> create_llama(const HfConfig& c, DataType dtype) {
  return make_decoder(llama_spec(c, dtype));
}

// IQuestCoder (transformers/models/iquestcoder/configuration_iquestcoder.py): Llama; its config
// class' validate_architecture refuses clip_qkv and use_sliding_window.
std::unique_ptr<Architecture> create_iquestcoder(const HfConfig& c, DataType dtype) {
  if (c.has("clip_qkv")) c.fail("clip_qkv", "IQuestCoder does not support clip_qkv (IQuestCoderConfig)");
  if (c.bool_or("use_sliding_window", false))
    c.fail("use_sliding_window", "IQuestCoder does not support sliding windows (IQuestCoderConfig)");
  return make_decoder(llama_spec(c, dtype));
}

DecoderSpec mistral_spec(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qkv_bias = s.attention.o_bias = s.mlp.bias = false;  // MistralAttention / MistralMLP: no bias
  // MistralConfig: sliding_window defaults to 4096 when absent; null means full attention.
  const bool absent = !c.json().contains("sliding_window");
  if (absent || c.has("sliding_window")) {
    s.sliding_window = absent ? 4096 : c.get_int("sliding_window");
    s.layer_types.assign(s.layer_types.size(), "sliding_attention");
  }
  return s;
}

std::unique_ptr<Architecture> create_mistral(const HfConfig& c, DataType dtype) {
  return make_decoder(mistral_spec(c, dtype));
}

DecoderSpec qwen2_spec(const HfConfig& c, DataType dtype, const RopeDefaults& rope) {
  DecoderSpec s = llama_spec(c, dtype, rope);
  s.attention.qkv_bias = true;
  s.attention.o_bias = s.mlp.bias = false;  // Qwen2MLP has no bias (mlp_bias is not read)
  // Qwen2Config.__post_init__: without layer_types, the layers from max_window_layers (28) on slide
  // when use_sliding_window
  if (c.bool_or("use_sliding_window", false))
    for (int64_t i = c.int_or("max_window_layers", 28); i < s.num_hidden_layers; ++i)
      s.layer_types[static_cast<size_t>(i)] = "sliding_attention";
  read_layer_types(c, s, 4096);  // Qwen2Config.sliding_window
  return s;
}

std::unique_ptr<Architecture> create_qwen2(const HfConfig& c, DataType dtype) {
  return make_decoder(qwen2_spec(c, dtype));
}

std::unique_ptr<Architecture> create_qwen3(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qk_norm = QKNorm{};  // RMSNorm q_norm, k_norm
  s.mlp.bias = false;              // Qwen3MLP has no bias (mlp_bias is not read)
  read_layer_types(c, s, 4096);    // Qwen3Config.sliding_window
  return make_decoder(s);
}

}  // namespace mobius
