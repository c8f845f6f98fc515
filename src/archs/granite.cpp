// Granite (transformers/models/granite/modeling_granite.py): Llama with µP multipliers:
//   embeddings * embedding_multiplier, softmax scale attention_multiplier (replacing
//   1/sqrt(head_dim)), each residual branch * residual_multiplier, logits / logits_scaling (as
//   * (1 / logits_scaling)).
// HyperCLOVA X (transformers/models/hyperclovax/modular_hyperclovax.py): Granite plus, with
//   use_post_norm (default true), RMSNorms post_norm1 / post_norm2 on the attention and MLP
//   outputs before the residual scaling; logits * logits_scaling (a multiplier there), and
//   attention_multiplier defaulting to head_dim**-0.5.
#include <cmath>

#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {
namespace {

// The multipliers both share; attention_multiplier defaults to `attention_multiplier`.
void read_multipliers(const HfConfig& c, DecoderSpec& s, double attention_multiplier) {
  s.embed_scale = static_cast<float>(c.float_or("embedding_multiplier", 1.0));
  s.residual_multiplier = static_cast<float>(c.float_or("residual_multiplier", 1.0));
  s.attention.scale = static_cast<float>(c.float_or("attention_multiplier", attention_multiplier));
}

}  // namespace

std::unique_ptr<Architecture> create_granite(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  read_multipliers(c, s, 1.0);
  const double logits_scaling = c.float_or("logits_scaling", 1.0);
  if (logits_scaling == 0.0) c.fail("logits_scaling", "must not be 0 (the logits are divided by it)");
  s.logit_scale = static_cast<float>(1.0 / logits_scaling);
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
