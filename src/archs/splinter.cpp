// Splinter (transformers/models/splinter/modeling_splinter.py, configuration_splinter.py;
// SplinterModel): BERT's embeddings (positions 0..seq-1, token type embeddings) and post-norm
// layers (archs/bert.h bert_spec, base_model_prefix "splinter"), no pooler.
// Its one head, question-answering (SplinterForQuestionAnswering), is the question-aware span
// selection splinter_qass (tasks/text_heads.h TextHeadLayout::question_aware_spans) at the first
// question_token_id of input_ids; no fill-mask, classification or multiple-choice class
// (SplinterForPreTraining's several question positions are not a head task).
#include <memory>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/encoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_splinter(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "splinter", "SplinterModel");
  s.heads->missing = {"fill-mask", "text-classification", "token-classification", "multiple-choice"};
  s.heads->question_aware_spans = {.name = "splinter_qass", .question_token_id = c.int_or("question_token_id", 104)};
  return std::make_unique<PostNormEncoder>(s);
}

}  // namespace mobius
