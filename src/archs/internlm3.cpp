// InternLM3 (transformers/models/internlm3/modular_internlm3.py): LlamaForCausalLM itself; its
// config spells the bias switches qkv_bias (attention_bias, on q/k/v/o) and bias (mlp_bias), which
// InternLM3Config's attribute_map accepts as aliases; InternLM3Config.validate_architecture refuses
// them unequal.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_internlm3(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  if (c.has("qkv_bias")) s.attention.qkv_bias = s.attention.o_bias = c.get_bool("qkv_bias");
  if (c.has("bias")) s.mlp.bias = c.get_bool("bias");
  if (s.attention.qkv_bias != s.mlp.bias)
    c.fail("bias", "InternLM3 needs qkv_bias (attention_bias) equal to bias (mlp_bias), as transformers' "
                   "InternLM3Config does");
  return make_decoder(s);
}

}  // namespace mobius
