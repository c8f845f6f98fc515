// Arcee AFM (transformers/models/arcee/modular_arcee.py): Llama with a non-gated MLP
// up_proj -> hidden_act (relu2) -> down_proj (NemotronMLP), mlp_bias.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_arcee(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.gated = false;
  s.mlp.up_name = "up_proj";
  s.mlp.down_name = "down_proj";
  return make_decoder(s);
}

}  // namespace mobius
