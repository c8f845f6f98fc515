// DiffLlama (transformers/models/diffllama/{modeling,configuration}_diffllama.py, 5.23): Llama
// (RMSNorm, SwiGLU MLP without bias, RoPE) whose self_attn is differential attention
// (blocks/diff_attention.h) with lambda_init = 0.8 - 0.6 * exp(-0.3 * layer) and q/k/v/o bias per
// attention_bias. DiffLlamaAttention refuses an odd num_key_value_heads and attention_dropout > 0.
#include <cmath>

#include "archs/archs.h"
#include "archs/llama.h"
#include "blocks/diff_attention.h"

namespace mobius {

std::unique_ptr<Architecture> create_diffllama(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // DiffLlamaMLP: no bias (mlp_bias not read)
  if (s.attention.num_key_value_heads % 2 != 0)
    c.fail("num_key_value_heads", "DiffLlama needs an even number (the values split in two halves of kv heads)");
  if (c.float_or("attention_dropout", 0.0) > 0.0)
    c.fail("attention_dropout", "DiffLlama does not support attention_dropout > 0 (DiffLlamaAttention)");
  s.make_attention = [a = s.attention](int64_t layer) -> std::unique_ptr<SelfAttention> {
    const float lambda_init = static_cast<float>(0.8 - 0.6 * std::exp(-0.3 * static_cast<double>(layer)));
    return std::make_unique<DifferentialAttention>(DiffAttentionOptions{.attention = a, .lambda_init = lambda_init});
  };
  return make_decoder(s);
}

}  // namespace mobius
