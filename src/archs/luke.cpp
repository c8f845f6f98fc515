// LUKE (transformers/models/luke/modeling_luke.py, configuration_luke.py; LukeModel), its word-only
// path (no entity_ids): RoBERTa's embeddings (positions from the ids, padding_idx pad_token_id,
// token type embeddings) and BERT's post-norm layers (archs/bert.h roberta_spec), base_model_prefix
// "luke". Without entities LukeSelfAttention is BERT's: the entity-aware queries (w2e_query,
// e2w_query, e2e_query), entity_embeddings and the pooler of a head that does not read it are in the
// checkpoint and not read. Not supported: the entity inputs (entity_ids, entity_attention_mask,
// entity_token_type_ids, entity_position_ids), entity_last_hidden_state, LukeForMaskedLM's
// entity_logits, and the entity heads (LukeForEntityClassification, ...EntityPairClassification,
// ...EntitySpanClassification), which read entity states.
// Heads:
//   fill-mask            lm_head.{dense, gelu, layer_norm, decoder} (RobertaLMHead); the decoder
//                        keeps its own weight (LukeForMaskedLM ties lm_head.bias to
//                        lm_head.decoder.bias only)
//   text-classification  classifier(luke.pooler(x)) (LukePooler: dense + tanh of the first token)
//   multiple-choice      likewise, one logit per choice
//   token-classification classifier; question-answering qa_outputs
#include <memory>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/encoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_luke(const HfConfig& c, DataType dtype) {
  EncoderSpec s = roberta_spec(c, dtype, "luke", "LukeModel");
  s.heads->masked_lm.tiable = false;
  s.heads->sequence_classification = s.heads->multiple_choice;  // bert_spec's: the pooler, then classifier
  return std::make_unique<PostNormEncoder>(s);
}

}  // namespace mobius
