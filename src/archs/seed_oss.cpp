// Seed-OSS (transformers/models/seed_oss/modeling_seed_oss.py): Llama with separate bias switches
// for q/k/v (attention_bias, default true) and o_proj (attention_out_bias, default false).
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_seed_oss(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qkv_bias = c.bool_or("attention_bias", true);
  s.attention.o_bias = c.bool_or("attention_out_bias", false);
  return make_decoder(s);
}

}  // namespace mobius
