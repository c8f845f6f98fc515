// GPTBigCode (transformers/models/gpt_bigcode/modeling_gpt_bigcode.py): the GPT-2 layout with
// torch Linear projections; multi_query (default) has one key/value head and c_attn
// [q: hidden | k: head_dim | v: head_dim]; otherwise c_attn is per head [q | k | v].
#include "archs/archs.h"
#include "archs/gpt2.h"

namespace mobius {

std::unique_ptr<Architecture> create_gpt_bigcode(const HfConfig& c, DataType dtype) {
  GptSpec g = gpt2_layout_spec(
      c, dtype, {"n_embd", "n_layer", "n_head", "n_positions", "n_inner", "gelu_pytorch_tanh"});
  DecoderSpec& s = g.decoder;
  AttentionOptions& a = s.attention;
  const bool multi_query = c.bool_or("multi_query", true);
  a.num_key_value_heads = multi_query ? 1 : a.num_attention_heads;
  a.fused_qkv = FusedQKV{.name = "c_attn", .groups = multi_query ? 1 : a.num_attention_heads};
  if (!c.bool_or("scale_attn_weights", true)) a.scale = 1.0f;
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
