#include "blocks/spec_check.h"

#include <cmath>
#include <string>

#include "blocks/activation.h"
#include "config/hf_config.h"
#include "util/error.h"

namespace mobius {
namespace {

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw FieldError("field '" + field + "': " + what);
}

void check_positive(const std::string& field, double v) {
  if (!std::isfinite(v) || v <= 0) fail(field, "expected a finite positive number, got " + std::to_string(v));
}

void check_finite(const std::string& field, double v) {
  if (!std::isfinite(v)) fail(field, "expected a finite number");
}

void check_rope(const RopeConfig& r) {
  const int64_t dim = r.rotary_dim();
  if (dim < 2 || dim % 2 != 0)
    fail(r.partial_rotary_factor != 1.0 ? "partial_rotary_factor" : "head_dim",
         "RoPE rotates " + std::to_string(dim) + " channels of head_dim " + std::to_string(r.head_dim) +
             ": expected an even number, at least 2 (rotate_half splits them in halves)");
  check_positive("rope_theta", r.rope_theta);
  check_positive("rope_parameters.factor", r.factor);
  check_size("max_position_embeddings", r.max_position_embeddings, kMaxPositions, 0);
  check_size("original_max_position_embeddings", r.original_max_position_embeddings, kMaxPositions, 0);
}

}  // namespace

void check_size(const std::string& field, int64_t v, int64_t max, int64_t min) {
  if (v < min || v > max)
    fail(field, "is " + std::to_string(v) + ", expected " + std::to_string(min) + " to " + std::to_string(max));
}

void check_attention(const AttentionOptions& a) {
  check_size("num_attention_heads", a.num_attention_heads, kMaxHeads);
  check_size("num_key_value_heads", a.num_key_value_heads, kMaxHeads);
  if (a.num_attention_heads % a.num_key_value_heads != 0)
    fail("num_key_value_heads", std::to_string(a.num_key_value_heads) + " does not divide num_attention_heads " +
                                    std::to_string(a.num_attention_heads));
  check_size("head_dim", a.head_dim, kMaxHeadDim);
  if (a.scale) check_finite("attention scale (query_pre_attn_scalar, attention_multiplier)", *a.scale);
  check_finite("attn_logit_softcapping", a.softcap);
}

void check_mamba(const MambaOptions& o) {
  check_size("hidden_size", o.hidden_size, kMaxHiddenSize);
  check_size("intermediate_size (expand * hidden_size)", o.intermediate_size, kMaxFfnSize);
  check_size("state_size", o.state_size, kMaxHeadDim);
  check_size("conv_kernel", o.conv_kernel, kMaxSmallSize, 2);
  check_size("time_step_rank", o.time_step_rank, kMaxHiddenSize);
  if (!is_known_activation(o.hidden_act)) fail("hidden_act", "unknown activation '" + o.hidden_act + "'");
  if (o.dt_b_c_rms_eps && !(*o.dt_b_c_rms_eps > 0.0f && *o.dt_b_c_rms_eps <= 1.0f))
    fail("mixer_rms_eps", "expected a value in (0, 1]");
}

void check_mamba2(const Mamba2Options& o) {
  check_size("hidden_size", o.hidden_size, kMaxHiddenSize);
  check_size("num_heads", o.num_heads, kMaxHeads);
  check_size("head_dim", o.head_dim, kMaxHeadDim);
  check_size("n_groups", o.n_groups, o.num_heads);
  if (o.num_heads % o.n_groups != 0)
    fail("n_groups", std::to_string(o.n_groups) + " does not divide num_heads " + std::to_string(o.num_heads));
  check_size("state_size", o.state_size, kMaxHeadDim);
  check_size("conv_kernel", o.conv_kernel, kMaxSmallSize, 2);
  check_size("chunk_size", o.chunk_size, kMaxSmallSize);
  // each bounded above: the products below fit in int64
  check_size("num_heads * head_dim (the intermediate size)", o.intermediate_size(), kMaxFfnSize);
  check_size("the conv width (intermediate size + 2 * n_groups * state_size)", o.conv_dim(), kMaxFfnSize);
  if (!is_known_activation(o.hidden_act)) fail("hidden_act", "unknown activation '" + o.hidden_act + "'");
  if (!(o.layer_norm_epsilon > 0.0f && o.layer_norm_epsilon <= 1.0f)) fail("layer_norm_epsilon", "expected a value in (0, 1]");
}

void check_gated_delta_net(const GatedDeltaNetOptions& o) {
  check_size("hidden_size", o.hidden_size, kMaxHiddenSize);
  check_size("linear_num_key_heads", o.num_key_heads, kMaxHeads);
  check_size("linear_num_value_heads", o.num_value_heads, kMaxHeads);
  if (o.num_value_heads % o.num_key_heads != 0)
    fail("linear_num_value_heads", std::to_string(o.num_value_heads) + " is not a multiple of linear_num_key_heads " +
                                       std::to_string(o.num_key_heads));
  check_size("linear_key_head_dim", o.key_head_dim, kMaxHeadDim);
  check_size("linear_value_head_dim", o.value_head_dim, kMaxHeadDim);
  check_size("linear_conv_kernel_dim", o.conv_kernel, kMaxSmallSize, 2);
  // each bounded above: the products below fit in int64
  check_size("the conv width (2 * key heads * key_head_dim + value heads * value_head_dim)", o.conv_dim(), kMaxFfnSize);
  if (!is_known_activation(o.hidden_act)) fail("hidden_act", "unknown activation '" + o.hidden_act + "'");
  if (!(o.norm_eps > 0.0f && o.norm_eps <= 1.0f)) fail("rms_norm_eps", "expected a value in (0, 1]");
}

void check_position_table(const std::string& field, int64_t rows) {
  check_size(field, rows, kMaxPositions);
}

void check_spec(const DecoderSpec& s) {
  check_size("vocab_size", s.vocab_size, kMaxVocabSize);
  check_size("hidden_size", s.hidden_size, kMaxHiddenSize);
  check_size("num_hidden_layers", s.num_hidden_layers, kMaxLayers);
  if (s.layer_types.size() != static_cast<size_t>(s.num_hidden_layers))
    fail("layer_types", std::to_string(s.layer_types.size()) + " entries for num_hidden_layers " +
                            std::to_string(s.num_hidden_layers));
  check_positive("rms_norm_eps", s.norm_eps);
  if (s.layer_norm_eps) check_positive("layer_norm_eps", *s.layer_norm_eps);
  check_size("sliding_window", s.sliding_window, kMaxPositions, 0);
  check_size("attention_chunk_size", s.attention_chunk_size, kMaxPositions, 0);
  check_size("floor_scale", s.nope_floor_scale, kMaxPositions, 0);
  for (const auto& [field, v] : {std::pair<const char*, float>{"logit_scale", s.logit_scale},
                                 {"attn_scale", s.nope_attn_scale},
                                 {"final_logit_softcapping", s.final_logit_softcapping},
                                 {"embedding_multiplier", s.embed_scale},
                                 {"residual_multiplier", s.residual_multiplier},
                                 {"llama_4_scaling_beta", s.llama_4_scaling_beta}})
    check_finite(field, v);
  if (!s.make_attention) check_attention(s.attention);  // injected parts are checked where made
  if (!s.make_feed_forward) check_size("intermediate_size", s.mlp.intermediate_size, kMaxFfnSize);
  for (size_t i = 0; i < s.layer_types.size(); ++i)
    if (s.layer_uses_rope.empty() || s.layer_uses_rope[i]) check_rope(s.rope_for(s.layer_types[i]));
}

void check_moe(const MoEOptions& m, const MLPOptions& dense, bool dense_layers) {
  if (dense_layers) check_size("intermediate_size", dense.intermediate_size, kMaxFfnSize);
  check_size("moe_intermediate_size", m.intermediate_size, kMaxFfnSize);
}

void check_spec(const EncoderSpec& s) {
  check_size("vocab_size", s.vocab_size, kMaxVocabSize);
  check_size("hidden_size", s.hidden_size, kMaxHiddenSize);
  check_size("num_hidden_layers", s.num_hidden_layers, kMaxLayers);
  check_size("max_position_embeddings", s.max_position_embeddings, kMaxPositions);
  check_size("type_vocab_size", s.type_vocab_size, kMaxVocabSize, 0);
  check_size("intermediate_size", s.intermediate_size, kMaxFfnSize);
  check_positive("layer_norm_eps", s.layer_norm_eps);
  check_attention(s.attention);
}

}  // namespace mobius
