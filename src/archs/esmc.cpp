// ESM C (transformers/models/esmc/modeling_esmc.py, configuration_esmc.py; EsmcModel, a LlamaConfig):
// Llama's layers run bidirectionally (archs/bidirectional_decoder.h) with
//   norms: LayerNorm (eps 1e-5, nn.LayerNorm's) with bias before attention and MLP, the final
//     `norm` without bias
//   attention: q_norm / k_norm, bias-free LayerNorms over the whole q / k projection before the
//     head split, then RoPE (rope_parameters, theta 10000) at positions 0..seq-1
//   residuals: x + attn(...) / sqrt(num_hidden_layers / 36), likewise the SwiGLU mlp
// No sequence_id input (chain-aware masking): attention_mask's padding mask.
// Heads (base_model_prefix "esmc"; no question answering, no multiple choice): fill-mask
// lm_head.{dense, gelu, layer_norm (eps 1e-5), decoder}, the decoder never tied to embed_tokens
// (EsmcForMaskedLM has no _tied_weights_keys, whatever tie_word_embeddings says); text-classification
// classifier.dense + tanh + classifier.out_proj over the first token (EsmClassificationHead);
// token-classification score.
#include <cmath>
#include <memory>

#include "archs/archs.h"
#include "archs/bidirectional_decoder.h"
#include "archs/llama.h"

namespace mobius {
namespace {

// BidirectionalDecoder and EsmcModel.norm, the bias-free LayerNorm after the last layer.
class EsmcModel : public BidirectionalDecoder {
 public:
  EsmcModel(const DecoderSpec& s, TextHeadLayout heads) : BidirectionalDecoder(s, 0, std::move(heads)) {
    norm = child<LayerNorm>("norm", NormOptions{.dim = s.hidden_size, .eps = s.norm_eps, .dtype = s.dtype, .bias = false});
  }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    return norm->forward(op, BidirectionalDecoder::forward(op, in));
  }

  LayerNorm* norm;
};

}  // namespace

std::unique_ptr<Architecture> create_esmc(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  if (s.attention.num_key_value_heads != s.attention.num_attention_heads)
    c.fail("num_key_value_heads", "ESMC has no grouped-query attention (EsmcConfig.validate_architecture)");
  if (s.attention.num_attention_heads * s.attention.head_dim != s.hidden_size)
    c.fail("head_dim", "num_attention_heads * head_dim must equal hidden_size (q_norm / k_norm are "
                       "LayerNorm(hidden_size) over the whole projection)");
  s.norm_kind = NormKind::LayerNorm;
  s.norm_bias = true;
  s.norm_eps = 1e-5f;  // EsmcLayerNorm: nn.LayerNorm's default
  s.names.norm = "";   // EsmcModel.norm above
  s.attention.qk_norm = QKNorm{.kind = NormKind::LayerNorm, .bias = false, .layout = QKNormLayout::full_width};
  s.attention.norm_eps = 1e-5f;
  s.residual_multiplier = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.num_hidden_layers) / 36.0));
  TextHeadLayout heads{.base_model_prefix = "esmc", .base_model_class = "EsmcModel",
                       .masked_lm = {.dense = "lm_head.dense", .act = "gelu", .norm = "lm_head.layer_norm",
                                     .decoder = "lm_head.decoder", .bias = "lm_head.decoder.bias", .eps = 1e-5f,
                                     .tiable = false},
                       .sequence_classification = {"classifier.dense", "tanh", "classifier.out_proj"},
                       .missing = {"question-answering", "multiple-choice"},
                       .token_classification = {.out = "score"}};
  return std::make_unique<EsmcModel>(s, std::move(heads));
}

}  // namespace mobius
