// AIMv2 (transformers/models/aimv2/modeling_aimv2.py; configuration_aimv2.py):
//   aimv2_text_model  Aimv2TextModel (feature-extraction): CLIP's causal text tower
//                     (archs/vision_towers.h TextTransformer: embeddings.token_embedding +
//                     embeddings.position_embedding, encoder.layers.{i}) with AIMv2's layers
//                     (Aimv2EncoderLayer): h = x + attention(rms_norm1(x)), out = h +
//                     ffn(rms_norm2(h)); attention.{q,k,v,out}_proj with biases as qkv_bias says,
//                     ffn = down_proj(act(gate_proj(x)) * up_proj(x)) with biases as mlp_bias says
//                     (hidden_act, default silu); Aimv2RMSNorm everywhere (rms_norm_eps), the final
//                     one rms_norm. Output: last_hidden_state, as clip_text_model's (its
//                     pooler_output, the state at the first eos_token_id of each row, is a row of
//                     last_hidden_state; Aimv2Model projects it).
// Aimv2TextModel masks causally only when it is given an attention_mask; the package always takes
// one (input_ids, attention_mask int64 [batch_size, sequence_length]).
#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "registry/config_defaults.h"
#include "tasks/feature_extraction.h"

namespace mobius {
namespace {

// Aimv2EncoderLayer's options from an aimv2_text_model config (its class defaults filled in).
VisionLayerOptions aimv2_layer_options(const HfConfig& c, DataType dtype) {
  VisionLayerOptions l = vit_attention_layer(c, "silu", dtype);
  l.intermediate_size = c.get_int("intermediate_size");
  l.layer_norm_eps = static_cast<float>(c.float_or("rms_norm_eps", 1e-5));
  l.norm = NormKind::RMSNorm;
  l.attention.qkv_bias = l.attention.o_bias = c.bool_or("qkv_bias", false);
  l.names = {.norm1 = "rms_norm1", .attention = "attention", .norm2 = "rms_norm2"};
  l.mlp = MLPOptions{.hidden_size = l.hidden_size, .intermediate_size = l.intermediate_size, .hidden_act = l.hidden_act,
                     .bias = c.bool_or("mlp_bias", false), .dtype = dtype, .gate_name = "ffn.gate_proj",
                     .gated_up_name = "ffn.up_proj", .gated_down_name = "ffn.down_proj"};
  return l;
}

}  // namespace

std::unique_ptr<Architecture> create_aimv2_text_model(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_class_defaults(config, "aimv2_text_model");
  return std::make_unique<TextTowerEncoder>(
      "", std::make_unique<TextTransformer>(c, aimv2_layer_options(c, dtype), TextTransformer::Mask::causal, "rms_norm"),
      dtype);
}

}  // namespace mobius
