// GPT-1 (transformers/models/openai/modeling_openai.py, configuration_openai.py, model type
// openai-gpt): transformer.tokens_embed(ids) + transformer.positions_embed(position_ids) (learned,
// n_positions rows) -> transformer.h, post-norm Blocks: n = ln_1(x + attn(x)); h = ln_2(n + mlp(n))
// (LayerTopology::norm_after_residual), no final norm -> lm_head (tied to tokens_embed by
// default). Attention: Conv1D c_attn [q | k | v] and c_proj with biases, scale 1/sqrt(head_dim)
// (Block(scale=True)), the causal mask filled with -1e4 (a zero weight after softmax, as -inf
// here). MLP: Conv1D c_fc -> ACT_FNS[afn] -> c_proj, 4 * n_embd wide; afn "gelu" is gelu_new,
// "swish" is silu. LayerNorm eps layer_norm_epsilon. token_type_ids are not an input of the package.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"
#include "registry/config_defaults.h"

namespace mobius {

std::unique_ptr<Architecture> create_openai_gpt(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig c = with_attribute_map(config, {{"max_position_embeddings", "n_positions"},
                                                  {"hidden_size", "n_embd"},
                                                  {"num_attention_heads", "n_head"},
                                                  {"num_hidden_layers", "n_layer"}});
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, "n_embd", "n_layer"),
            .positions = PositionEmbeddingSpec{"positions_embed", c.get_int("n_positions")}};
  DecoderSpec& s = g.decoder;
  s.topology = LayerTopology::norm_after_residual;
  s.names = {.model = "transformer", .embed_tokens = "tokens_embed", .layers = "h", .norm = "",
             .self_attn = "attn", .input_layernorm = "ln_1", .post_attention_layernorm = "ln_2"};
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_attention_heads = "n_head", .num_key_value_heads = nullptr, .head_dim = nullptr});
  a.qkv_bias = a.o_bias = true;
  a.names.o_proj = "c_proj";
  a.fused_qkv = FusedQKV{.name = "c_attn"};
  const std::string afn = c.string_or("afn", "gelu");
  std::string act;
  if (afn == "relu")
    act = "relu";
  else if (afn == "gelu")
    act = "gelu_new";
  else if (afn == "silu" || afn == "swish")
    act = "silu";
  else
    c.fail("afn", "unsupported '" + afn + "' (relu, silu, gelu, swish)");
  s.mlp = {s.hidden_size, 4 * s.hidden_size, act, true, dtype, /*gated=*/false, /*fused_gate_up=*/false,
           "c_fc", "c_proj"};
  a.conv1d = s.mlp.conv1d = true;
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
