// Granite (transformers/models/granite/modeling_granite.py): Llama with µP multipliers:
//   embeddings * embedding_multiplier, softmax scale attention_multiplier (replacing
//   1/sqrt(head_dim)), each residual branch * residual_multiplier, logits / logits_scaling (as
//   * (1 / logits_scaling)).
// HyperCLOVA X (transformers/models/hyperclovax/modular_hyperclovax.py): Granite plus, with
//   use_post_norm (default true), RMSNorms post_norm1 / post_norm2 on the attention and MLP
//   outputs before the residual scaling; logits * logits_scaling (a multiplier there), and
//   attention_multiplier defaulting to head_dim**-0.5.
// Granite SWA (transformers/models/granite_swa/modular_granite_swa.py): Granite with
//   GraniteSWAAttention's sinks, sliding layers and per-layer RoPE theta (granite_swa_attention,
//   archs/granite.h).
#include "archs/granite.h"

#include <cmath>
#include <map>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"

namespace mobius {
namespace {

// The multipliers both share; attention_multiplier defaults to `attention_multiplier`.
void read_multipliers(const HfConfig& c, DecoderSpec& s, double attention_multiplier) {
  s.embed_scale = static_cast<float>(c.float_or("embedding_multiplier", 1.0));
  s.residual_multiplier = static_cast<float>(c.float_or("residual_multiplier", 1.0));
  s.attention.scale = static_cast<float>(c.float_or("attention_multiplier", attention_multiplier));
}

// Granite's spec.
DecoderSpec granite_spec(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  read_multipliers(c, s, 1.0);
  const double logits_scaling = c.float_or("logits_scaling", 1.0);
  if (logits_scaling == 0.0) c.fail("logits_scaling", "must not be 0 (the logits are divided by it)");
  s.logit_scale = static_cast<float>(1.0 / logits_scaling);
  return s;
}

}  // namespace

void granite_swa_attention(const HfConfig& c, DecoderSpec& s) {
  s.attention.sinks = true;
  std::vector<std::string> pattern;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    pattern.push_back(i % 4 == 0 ? "full_attention" : "sliding_attention");
  s.layer_types = read_layer_types(c, s.num_hidden_layers, pattern);
  // a null sliding_window: the sliding layers attend to everything (GraniteSWAAttention's window None)
  const bool windowless = c.json().contains("sliding_window") && c.json()["sliding_window"].is_null();
  for (auto& t : s.layer_types) {
    if (t != "sliding_attention") continue;
    if (windowless) {
      t = "full_attention";
      continue;
    }
    s.sliding_window = c.int_or("sliding_window", 128);
    if (s.sliding_window <= 0) c.fail("sliding_window", "must be positive");
  }
  if (!c.has("layer_rope_theta")) return;  // every layer: the global rope_theta
  const std::vector<double> theta = c.float_list("layer_rope_theta");
  if (static_cast<int64_t>(theta.size()) != s.num_hidden_layers)
    c.fail("layer_rope_theta", "expected one theta per layer (num_hidden_layers)");
  std::map<std::string, double> theta_of_type;
  for (size_t i = 0; i < theta.size(); ++i) {
    if (theta[i] < 0) c.fail("layer_rope_theta", "expected thetas >= 0 (0: no RoPE)");
    s.layer_uses_rope.push_back(theta[i] != 0);
    if (theta[i] == 0) continue;
    auto [it, added] = theta_of_type.emplace(s.layer_types[i], theta[i]);
    if (!added && it->second != theta[i])
      c.fail("layer_rope_theta", "layers of one layer type with different nonzero thetas are not supported");
  }
  for (const auto& [type, t] : theta_of_type) {
    RopeConfig r = s.rope;
    r.rope_theta = t;
    s.layer_type_rope[type] = r;
  }
}

std::unique_ptr<Architecture> create_granite(const HfConfig& c, DataType dtype) {
  return make_decoder(granite_spec(c, dtype));
}

std::unique_ptr<Architecture> create_granite_swa(const HfConfig& c, DataType dtype) {
  DecoderSpec s = granite_spec(c, dtype);
  granite_swa_attention(c, s);
  return make_decoder(s);
}

std::unique_ptr<Architecture> create_hyperclovax(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  read_multipliers(c, s, 1.0 / std::sqrt(static_cast<double>(s.attention.head_dim)));
  s.logit_scale = static_cast<float>(c.float_or("logits_scaling", 1.0));
  if (c.bool_or("use_post_norm", true)) {
    s.topology = LayerTopology::sandwich;
    s.names.attn_output_norm = "post_norm1";
    s.names.mlp_output_norm = "post_norm2";
  }
  return make_decoder(s);
}

}  // namespace mobius
