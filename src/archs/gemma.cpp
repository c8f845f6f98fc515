// Gemma decoders: gemma, gemma2, gemma3_text, vaultgemma. One DecoderSpec filled from config.json; the types
// differ only in fields (transformers/models/{gemma,gemma2,gemma3}/modeling_*.py and
// configuration_*.py, whose class defaults apply to fields config.json leaves out):
//   all      RMSNorm scaled by (1 + weight) in float32, embeddings scaled by hidden_size**0.5,
//            gated MLP with gelu_pytorch_tanh, head_dim 256 and tied embeddings by default
//   gemma    hidden_act ("gelu" means the tanh approximation), scale head_dim**-0.5, full attention
//   gemma2   hidden_activation, scale query_pre_attn_scalar**-0.5, four norms per layer
//            (post_attention_layernorm and post_feedforward_layernorm on the attention and MLP
//            outputs, pre_feedforward_layernorm before the MLP), attn_logit_softcapping (50) and
//            final_logit_softcapping (30), layer_types (default: sliding_attention on even layers)
//            with sliding_window (4096)
//   gemma3   as gemma2 plus per-head q/k norms (also 1 + weight); final_logit_softcapping only
//            (none by default; Gemma3Attention ignores attn_logit_softcapping); layer_types
//            default from sliding_window_pattern (6: every 6th layer full); RoPE per layer type:
//            rope_parameters {"full_attention": …, "sliding_attention": …}, or in older configs
//            rope_theta (1e6) + rope_scaling for full and rope_local_base_freq (1e4) for sliding
//   vaultgemma  gemma2 without the post_attention_layernorm / post_feedforward_layernorm
//            (VaultGemmaDecoderLayer deletes them); always causal (its config drops
//            use_bidirectional_attention, so the field is not read)
#include <cmath>

#include "archs/archs.h"
#include "archs/gemma.h"
#include "archs/attention_config.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "blocks/decoder.h"
#include "util/error.h"

namespace mobius {
namespace {

DecoderSpec gemma_spec(const HfConfig& c, DataType dtype, std::string hidden_act,
                       int64_t default_num_key_value_heads) {
  DecoderSpec s = decoder_sizes(c, dtype);
  s.norm_weight_offset_one = true;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  // GemmaTextScaledWordEmbedding: torch.tensor(hidden_size**0.5), a float32 scalar
  s.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(s.hidden_size)));
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype,
      {.default_num_key_value_heads = default_num_key_value_heads, .default_head_dim = 256});
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", false);
  a.norm_eps = s.norm_eps;
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), std::move(hidden_act), false, dtype};
  return s;
}

// gemma2 / gemma3: what gemma lacks, and the layer types (default `fallback`).
DecoderSpec gemma2_spec(const HfConfig& c, DataType dtype, const std::vector<std::string>& fallback) {
  DecoderSpec s = gemma_spec(c, dtype, read_activation(c, "hidden_activation", "gelu_pytorch_tanh"), 4);
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attention_layernorm";
  s.names.post_attention_layernorm = "pre_feedforward_layernorm";
  s.names.mlp_output_norm = "post_feedforward_layernorm";
  const double scalar = c.float_or("query_pre_attn_scalar", 256);
  if (scalar <= 0) c.fail("query_pre_attn_scalar", "must be positive");
  s.attention.scale = static_cast<float>(std::pow(scalar, -0.5));
  s.layer_types = read_layer_types(c, s.num_hidden_layers, fallback);
  // null: transformers' sliding-window mask refuses it ("Could not find a sliding_window argument")
  if (c.json().contains("sliding_window") && c.json()["sliding_window"].is_null())
    c.fail("sliding_window", "null, but the sliding_attention layers need a window: set it (4096 by default)");
  s.sliding_window = c.int_or("sliding_window", 4096);
  if (s.sliding_window <= 0) c.fail("sliding_window", "must be positive");
  return s;
}

// Layer i is full attention when (i + 1) % pattern == 0 (Gemma2Config: 2, Gemma3TextConfig: 6).
std::vector<std::string> every_nth_full(int64_t num_layers, int64_t pattern) {
  std::vector<std::string> types;
  for (int64_t i = 0; i < num_layers; ++i)
    types.push_back((i + 1) % pattern ? "sliding_attention" : "full_attention");
  return types;
}

// A causal LM: use_bidirectional_attention (EmbeddingGemma) is refused.
std::unique_ptr<Architecture> causal_gemma(const HfConfig& c, DataType dtype, const std::string& type) {
  if (c.bool_or("use_bidirectional_attention", false))
    c.fail("use_bidirectional_attention", "bidirectional attention is not a causal LM");
  return std::make_unique<DecoderCausalLM>(gemma_decoder_spec(c, dtype, type));
}

}  // namespace

void read_gemma3_rope(const HfConfig& c, DecoderSpec& s) {
  auto [full, sliding] = read_layer_type_rope_params(c);
  // a legacy rope_scaling updates {"rope_type": "default"}: its own "type" key does not replace
  // rope_type (transformers keeps the default rope, ignoring the scaling, unless it says rope_type)
  if (full && !c.has("rope_parameters") && !full->has("rope_type")) {
    nlohmann::json merged = {{"rope_type", "default"}};
    merged.update(full->json());
    full = HfConfig(merged, c.file(), c.prefix() + "rope_scaling.");
  }
  const int64_t head_dim = s.attention.head_dim;
  s.rope = RopeConfig::from_params(c, full, head_dim, {.rope_theta = c.float_or("rope_theta", 1e6)});
  s.layer_type_rope["sliding_attention"] = RopeConfig::from_params(
      c, sliding, head_dim, {.rope_theta = c.float_or("rope_local_base_freq", 1e4)});
}

float read_softcap(const HfConfig& c, const char* key, double fallback) {
  const double v = c.json().contains(key) ? c.float_or(key, 0.0) : fallback;
  if (v < 0) c.fail(key, "must be positive or null");
  return static_cast<float>(v);
}

Value* gemma_vlm_token_ids(Ops& op, Value* input_ids, int64_t image_token_id, int64_t vocab_size) {
  if (image_token_id < vocab_size) return input_ids;
  return op.Where(op.Equal(input_ids, static_cast<double>(image_token_id)), op.builder().scalar_i64(0), input_ids);
}

DecoderSpec gemma_decoder_spec(const HfConfig& c, DataType dtype, const std::string& type) {
  if (type == "gemma") {
    std::string act = read_activation(c, "hidden_act", "gelu_pytorch_tanh");
    if (act == "gelu") act = "gelu_pytorch_tanh";  // GemmaConfig: the legacy spelling of the tanh form
    DecoderSpec s = gemma_spec(c, dtype, act, 16);
    s.rope = RopeConfig::from_hf(c, s.attention.head_dim);
    return s;
  }
  if (type == "gemma2") {
    const int64_t layers = c.get_int("num_hidden_layers");
    DecoderSpec s = gemma2_spec(c, dtype, every_nth_full(layers, 2));
    s.attention.softcap = read_softcap(c, "attn_logit_softcapping", 50.0);
    s.final_logit_softcapping = read_softcap(c, "final_logit_softcapping", 30.0);
    s.rope = RopeConfig::from_hf(c, s.attention.head_dim);
    return s;
  }
  MOBIUS_ASSERT(type == "gemma3_text", "gemma_decoder_spec of " + type);
  const int64_t pattern = c.int_or("sliding_window_pattern", 6);
  if (pattern <= 0) c.fail("sliding_window_pattern", "must be positive");
  DecoderSpec s = gemma2_spec(c, dtype, every_nth_full(c.get_int("num_hidden_layers"), pattern));
  s.attention.qk_norm = QKNorm{.weight_offset_one = true};
  // Gemma3Attention does not pass attn_logit_softcapping to the attention function: not applied.
  s.final_logit_softcapping = read_softcap(c, "final_logit_softcapping", 0.0);
  read_gemma3_rope(c, s);
  return s;
}

std::unique_ptr<Architecture> create_gemma(const HfConfig& c, DataType dtype) {
  return causal_gemma(c, dtype, "gemma");
}

std::unique_ptr<Architecture> create_gemma2(const HfConfig& c, DataType dtype) {
  return causal_gemma(c, dtype, "gemma2");
}

std::unique_ptr<Architecture> create_vaultgemma(const HfConfig& c, DataType dtype) {
  DecoderSpec s = gemma_decoder_spec(c, dtype, "gemma2");
  s.topology = LayerTopology::sequential;  // input_layernorm, pre_feedforward_layernorm only
  s.names.attn_output_norm.clear();
  s.names.mlp_output_norm.clear();
  return std::make_unique<DecoderCausalLM>(s);
}

std::unique_ptr<Architecture> create_gemma3_text(const HfConfig& c, DataType dtype) {
  if (c.bool_or("use_bidirectional_attention", false)) return create_gemma3_text_encoder(c, dtype);  // EmbeddingGemma
  return causal_gemma(c, dtype, "gemma3_text");
}

}  // namespace mobius
