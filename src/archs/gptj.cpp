// GPT-J and CodeGen (transformers/models/{gptj,codegen}/modeling_*.py, GPTJConfig /
// CodeGenConfig with n_embd, n_head, n_layer, n_positions, n_inner, rotary_dim,
// activation_function, layer_norm_epsilon): transformer.wte, transformer.h.*, transformer.ln_f,
// lm_head with bias. Each block runs attention and MLP in parallel on one ln_1 (LayerNorm with
// bias): h = x + attn(ln_1(x)) + mlp(ln_1(x)); attn.out_proj without bias; interleaved rotary
// (rotate_every_two) on the first rotary_dim channels of each head, base 10000; MLP fc_in ->
// activation_function -> fc_out with bias.
//   gptj     attn.q_proj, k_proj, v_proj without bias
//   codegen  one attn.qkv_proj without bias, viewed as [mp_num = 4, (q, v, k), …] and each part
//            as heads (CodeGenAttention.forward / _split_heads); split in the graph
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"

namespace mobius {
namespace {

DecoderSpec gptj_spec(const HfConfig& c, DataType dtype) {
  DecoderSpec s = gpt_decoder_sizes(c, dtype, "n_embd", "n_layer");
  s.topology = LayerTopology::parallel_shared_norm;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  s.lm_head_bias = true;
  s.names = {.model = "transformer", .embed_tokens = "wte", .layers = "h", .norm = "ln_f",
             .self_attn = "attn", .input_layernorm = "ln_1"};
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype,
      {.num_attention_heads = "n_head", .num_key_value_heads = nullptr, .head_dim = nullptr});
  a.names.o_proj = "out_proj";
  a.rope_interleaved = true;
  s.mlp = {s.hidden_size, c.int_or("n_inner", 4 * s.hidden_size),
           read_activation(c, "activation_function", "gelu_new"), true, dtype, /*gated=*/false,
           /*fused_gate_up=*/false, "fc_in", "fc_out"};
  // create_sinusoidal_positions: inv_freq = 1 / 10000 ** (arange(0, rotary_dim, 2) / rotary_dim)
  const int64_t rotary_dim = c.get_int("rotary_dim");
  if (rotary_dim <= 0 || rotary_dim > a.head_dim || rotary_dim % 2 != 0)
    c.fail("rotary_dim", "must be even and in (0, head size " + std::to_string(a.head_dim) + "]");
  s.rope.head_dim = a.head_dim;
  s.rope.partial_rotary_factor = static_cast<double>(rotary_dim) / static_cast<double>(a.head_dim);
  s.rope.max_position_embeddings = c.int_or("n_positions", 2048);
  if (s.rope.rotary_dim() != rotary_dim) c.fail("rotary_dim", "not representable as a head fraction");
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_gptj(const HfConfig& c, DataType dtype) {
  return std::make_unique<DecoderCausalLM>(gptj_spec(c, dtype));
}

std::unique_ptr<Architecture> create_codegen(const HfConfig& c, DataType dtype) {
  DecoderSpec s = gptj_spec(c, dtype);
  constexpr int64_t mp_num = 4;  // hard-coded in CodeGenAttention.forward
  if (s.attention.num_attention_heads % mp_num != 0) c.fail("n_head", "must be a multiple of mp_num 4");
  s.attention.fused_qkv = FusedQKV{.name = "qkv_proj", .groups = mp_num, .order = "qvk"};
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
