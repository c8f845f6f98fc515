// EuroBERT (transformers/models/eurobert/modeling_eurobert.py, configuration_eurobert.py;
// EuroBertModel and its heads): Llama's decoder layers run bidirectionally (EuroBertAttention
// is_causal False; archs/bidirectional_decoder.h): embed_tokens, pre-norm RMSNorm layers with
// RoPE (LlamaRotaryEmbedding, rope_parameters or rope_theta, default 10000) at positions
// 0..seq-1, SwiGLU mlp.{gate,up,down}_proj, the final norm; every layer full attention over the
// tokens of attention_mask. The config is LlamaConfig's (archs/llama.h llama_spec).
// Heads (base_model_prefix "model"; no question answering, no multiple choice):
//   fill-mask            lm_head (bias mlp_bias; tied to embed_tokens only with tie_word_embeddings,
//                        false by default)
//   text-classification  classifier(gelu(dense(.))) by classifier_pooling: "bos" the first token,
//                        "mean" the mean over the mask, "late" (default) the mean over the mask of
//                        every token's logits
//   token-classification classifier
#include "archs/archs.h"
#include "archs/bidirectional_decoder.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_eurobert(const HfConfig& c, DataType dtype) {
  const DecoderSpec s = llama_spec(c, dtype);
  const std::string pooling = c.string_or("classifier_pooling", "late");
  if (pooling != "bos" && pooling != "mean" && pooling != "late")
    c.fail("classifier_pooling", "unsupported '" + pooling + "' (bos, mean, late)");
  FirstTokenHead classification{.dense = "dense", .act = "gelu", .out = "classifier"};  // nn.GELU()
  classification.pooling = pooling == "bos" ? "" : "mean";
  classification.pool_logits = pooling == "late";
  TextHeadLayout heads{.base_model_prefix = "model", .base_model_class = "EuroBertModel",
                       .masked_lm = {.decoder = "lm_head", .bias = "lm_head.bias", .decoder_bias = s.mlp.bias},
                       .sequence_classification = classification,
                       .missing = {"question-answering", "multiple-choice"}};
  return std::make_unique<BidirectionalDecoder>(s, 0, std::move(heads));
}

}  // namespace mobius
