// BioGPT (transformers/models/biogpt/modular_biogpt.py, configuration_biogpt.py): OPT's layout
// under biogpt.*: embed_tokens(ids) * sqrt(hidden_size) (scale_embedding) +
// embed_positions(position_ids + 2) (OPTLearnedPositionalEmbedding, max_position_embeddings + 2
// rows) -> layers (BartDecoderLayer without cross-attention, pre-norm): self_attn_layer_norm,
// self_attn ({q,k,v,out}_proj with biases), final_layer_norm, fc1 -> hidden_act -> fc2 ->
// biogpt.layer_norm -> output_projection (tied to embed_tokens by default). Every LayerNorm is
// nn.LayerNorm's default eps 1e-5 (the config's layer_norm_eps is not read by the model).
#include <cmath>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_biogpt(const HfConfig& c, DataType dtype) {
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, "hidden_size", "num_hidden_layers"),
            .positions = PositionEmbeddingSpec{"embed_positions", c.get_int("max_position_embeddings") + 2, 2}};
  DecoderSpec& s = g.decoder;
  s.norm_eps = 1e-5f;
  if (c.bool_or("scale_embedding", true))
    s.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(s.hidden_size)));
  s.names = {.model = "biogpt", .norm = "layer_norm", .lm_head = "output_projection", .mlp = "",
             .input_layernorm = "self_attn_layer_norm", .post_attention_layernorm = "final_layer_norm"};
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = nullptr});
  a.qkv_bias = a.o_bias = true;
  a.names.o_proj = "out_proj";
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "gelu"), true, dtype,
           /*gated=*/false, /*fused_gate_up=*/false, "fc1", "fc2"};
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
