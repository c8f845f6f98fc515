// ERNIE 4.5 dense (transformers/models/ernie4_5/modeling_ernie4_5.py): Llama with interleaved
// RoPE (rotate_half on channel pairs (2i, 2i+1)) and use_bias on every q/k/v/o and MLP projection.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_ernie4_5(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.attention.rope_interleaved = true;
  const bool bias = c.bool_or("use_bias", false);
  s.attention.qkv_bias = s.attention.o_bias = bias;
  s.mlp.bias = bias;
  return make_decoder(s);
}

}  // namespace mobius
