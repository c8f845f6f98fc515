// Helium (transformers/models/helium/modeling_helium.py): Llama with interleaved RoPE (rotate_half
// on channel pairs (2i, 2i+1)), q/k/v bias from attention_bias and o_proj without bias.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_helium(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.rope_interleaved = true;
  s.attention.o_bias = false;
  return make_decoder(s);
}

}  // namespace mobius
