// Nemotron (transformers/models/nemotron/modeling_nemotron.py): LayerNorm1P norms (LayerNorm with
// bias, scaled by (1 + weight), eps norm_eps), a non-gated MLP up_proj -> hidden_act (relu2) ->
// down_proj with mlp_bias, q/k/v/o bias from attention_bias, partial rotary
// (rope_parameters.partial_rotary_factor; NemotronConfig's default 0.5, which
// NemotronRotaryEmbedding.compute_default_rope_parameters reads).
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_nemotron(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype, {.partial_rotary_factor = 0.5});
  s.norm_kind = NormKind::LayerNorm;
  s.norm_weight_offset_one = true;
  s.norm_eps = static_cast<float>(c.float_or("norm_eps", 1e-5));
  s.mlp.gated = false;
  s.mlp.up_name = "up_proj";
  s.mlp.down_name = "down_proj";
  return make_decoder(s);
}

}  // namespace mobius
