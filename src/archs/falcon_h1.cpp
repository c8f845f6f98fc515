// Falcon-H1 (transformers/models/falcon_h1/modeling_falcon_h1.py FalconH1ForCausalLM;
// configuration_falcon_h1.py): every layer runs a Mamba-2 mixer and a Llama attention side by side
// on the same normalized input (blocks/parallel_mixers.h), then a SwiGLU MLP, with µP multipliers:
//   x0 = model.embed_tokens(ids) * embedding_multiplier
//   model.layers.{i}: n = input_layernorm(x);
//     h = x + mamba(n * ssm_in_multiplier) * ssm_out_multiplier
//           + self_attn(n * attention_in_multiplier) * attention_out_multiplier;
//     out = h + feed_forward(pre_ff_layernorm(h))  (FalconH1MLP: mlp_multipliers [gate, down])
//   -> model.final_layernorm -> lm_head * lm_head_multiplier
// mamba (FalconH1Mixer): blocks/mamba2.h of intermediate size mamba_d_ssm (null: mamba_expand *
// hidden_size), mamba_n_heads heads of mamba_d_head ("auto": the intermediate size / mamba_n_heads),
// in_proj's output parts z, x, B, C, dt scaled by ssm_multipliers (its mup_vector), in_proj's bias
// mamba_proj_bias and out_proj's projectors_bias, its gate: y * silu(z) (mamba_rms_norm false, the
// default) or FalconH1RMSNormGated before (mamba_norm_before_gate, the default) or after the gate
// (a float16 model then multiplies norm.weight after the cast to float16, as Mamba-2's norm).
// self_attn (FalconH1Attention): LlamaAttention whose keys are scaled by key_multiplier before RoPE,
// folded here into the softmax scale (q . (m k) / sqrt(d) = m q . k / sqrt(d)): the cache holds
// the keys before the multiplier.
// Each layer carries both states: past_key_values.{i}.conv_state, .recurrent_state (the mixer's)
// and .key, .value (docs/design.md "The state model"). onnxruntime-genai 0.18 has no model type
// for a layer with both (its "decoder" reads one kind per layer): build with --runtime none.
#include <cmath>

#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/mamba.h"
#include "blocks/parallel_mixers.h"

namespace mobius {

namespace {

float multiplier(const HfConfig& c, const std::string& key) {
  const double v = c.float_or(key, 1.0);
  if (!std::isfinite(v)) c.fail(key, "expected a finite number");
  return static_cast<float>(v);
}

// A list field of `n` multipliers; null or absent: all 1 (FalconH1Config.__post_init__).
std::vector<float> multipliers(const HfConfig& c, const std::string& key, size_t n) {
  if (!c.has(key)) return std::vector<float>(n, 1.0f);
  const std::vector<double> v = c.float_list(key);
  if (v.size() != n) c.fail(key, "expected a list of " + std::to_string(n) + " numbers");
  return {v.begin(), v.end()};
}

// FalconH1Mixer's Mamba-2 options (FalconH1Config's mamba_* fields, their defaults as the class').
Mamba2Options falcon_h1_mamba_options(const HfConfig& c, const DecoderSpec& s) {
  const int64_t expand = c.int_or("mamba_expand", 2);
  if (expand < 1 || expand > kMaxSmallSize) c.fail("mamba_expand", "expected 1 to " + std::to_string(kMaxSmallSize));
  const int64_t inner = c.opt_int("mamba_d_ssm").value_or(expand * s.hidden_size);  // both bounded
  if (inner < 1 || inner > kMaxFfnSize) c.fail("mamba_d_ssm", "expected 1 to " + std::to_string(kMaxFfnSize));
  const int64_t heads = c.int_or("mamba_n_heads", 128);
  if (heads < 1 || heads > kMaxHeads || inner % heads != 0)
    c.fail("mamba_n_heads", "expected a number of heads dividing the Mamba intermediate size " + std::to_string(inner));
  const nlohmann::json* d_head = c.json().contains("mamba_d_head") ? &c.json()["mamba_d_head"] : nullptr;
  const bool auto_head = !d_head || (d_head->is_string() && d_head->get<std::string>() == "auto");
  Mamba2Options m{.hidden_size = s.hidden_size, .num_heads = heads,
                  .head_dim = auto_head ? inner / heads : c.int_or("mamba_d_head", 64),
                  .n_groups = c.int_or("mamba_n_groups", 1), .state_size = c.int_or("mamba_d_state", 256),
                  .conv_kernel = c.int_or("mamba_d_conv", 4), .chunk_size = c.int_or("mamba_chunk_size", 256),
                  .use_bias = c.bool_or("mamba_proj_bias", false), .use_conv_bias = c.bool_or("mamba_conv_bias", true),
                  .hidden_act = s.mlp.hidden_act, .layer_norm_epsilon = s.norm_eps, .dtype = s.dtype};
  check_mamba2_fields(c, m, 0,
                      {.num_heads = "mamba_n_heads", .head_dim = "mamba_d_head", .n_groups = "mamba_n_groups",
                       .state_size = "mamba_d_state", .conv_kernel = "mamba_d_conv",
                       .chunk_size = "mamba_chunk_size", .expand = ""});
  if (m.num_heads * m.head_dim != inner)  // FalconH1Config.validate_architecture
    c.fail("mamba_d_head", "mamba_d_head * mamba_n_heads (" + std::to_string(m.head_dim) + " * " +
                               std::to_string(m.num_heads) + ") must equal the Mamba intermediate size " +
                               std::to_string(inner) + " (mamba_d_ssm, or mamba_expand * hidden_size)");
  read_time_step_limit(c, m);
  if (!c.bool_or("mamba_rms_norm", false))
    m.gate = Mamba2Gate::gate_only;
  else if (c.bool_or("mamba_norm_before_gate", true))
    m.gate = Mamba2Gate::norm_before_gate;
  m.projection_multipliers = multipliers(c, "ssm_multipliers", 5);
  m.out_proj_bias = c.bool_or("projectors_bias", false);
  return m;
}

}  // namespace

std::unique_ptr<Architecture> create_falcon_h1(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);  // rms_norm_eps: FalconH1Config's 1e-5 (config_defaults)
  s.names.norm = "final_layernorm";
  s.names.post_attention_layernorm = "pre_ff_layernorm";
  s.names.mlp = "feed_forward";
  s.embed_scale = multiplier(c, "embedding_multiplier");
  s.logit_scale = multiplier(c, "lm_head_multiplier");
  const std::vector<float> mlp = multipliers(c, "mlp_multipliers", 2);
  s.mlp.gate_multiplier = mlp[0];
  s.mlp.down_multiplier = mlp[1];
  AttentionOptions attention = s.attention;
  attention.scale = static_cast<float>(multiplier(c, "key_multiplier") / std::sqrt(static_cast<double>(attention.head_dim)));
  const Mamba2Options mamba = falcon_h1_mamba_options(c, s);
  const MixerScales ssm{.input = multiplier(c, "ssm_in_multiplier"), .output = multiplier(c, "ssm_out_multiplier")};
  const MixerScales attn{.input = multiplier(c, "attention_in_multiplier"),
                         .output = multiplier(c, "attention_out_multiplier")};
  // FalconH1DecoderLayer: mamba then self_attn, under the layer's own names
  s.make_mixer = [=](int64_t) {
    auto both = std::make_unique<ParallelMixers>();
    both->add("mamba", std::make_unique<Mamba2Mixer>(mamba), ssm);
    both->add("self_attn", std::make_unique<Attention>(attention), attn);
    return LayerMixer{"", std::move(both)};
  };
  return make_decoder(s);
}

}  // namespace mobius
