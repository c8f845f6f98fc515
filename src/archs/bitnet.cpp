// BitNet b1.58 (transformers/models/bitnet/{modular,configuration}_bitnet.py, 5.23) as its float
// graph: Llama (RMSNorm, RoPE, q/k/v/o bias per attention_bias) whose attention normalizes the
// heads' output with attn_sub_norm (RMSNorm over hidden_size) before o_proj, and whose MLP
// (GemmaMLP without bias, hidden_act default relu2) normalizes act(gate_proj(x)) * up_proj(x) with
// ffn_sub_norm (RMSNorm over intermediate_size) before down_proj; every norm of eps rms_norm_eps.
// An unquantized checkpoint only: the ternary packed weights a quantization_config (quant_method
// "bitnet", AutoBitLinear / BitLinear with their per-token activation quantization) describes are
// refused.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_bitnet(const HfConfig& c, DataType dtype) {
  if (c.has("quantization_config"))
    c.fail("quantization_config", "packed ternary BitLinear weights are not supported; the float graph reads an "
                                  "unquantized BitNet checkpoint");
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // GemmaMLP (mlp_bias not read)
  if (s.attention.num_attention_heads * s.attention.head_dim != s.hidden_size)
    c.fail("head_dim", "num_attention_heads * head_dim must equal hidden_size (attn_sub_norm's width)");
  s.attention.o_input_norm = SubNorm{.name = "attn_sub_norm", .eps = s.norm_eps};
  s.mlp.down_input_norm = SubNorm{.name = "ffn_sub_norm", .eps = s.norm_eps};
  return make_decoder(s);
}

}  // namespace mobius
