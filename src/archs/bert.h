// The BERT family's EncoderSpec (blocks/encoder.h) from config.json, for the arch files that
// compose its encoder with their own parts (archs/bert.cpp; xmod.cpp, ibert.cpp).
#pragma once

#include <string>

#include "blocks/encoder.h"
#include "config/hf_config.h"

namespace mobius {

// BertModel's embeddings and layers alone (BertEmbeddings, BertLayer), as the text towers that copy
// them read their config (archs/contrastive_text_towers.cpp): vocab_size, hidden_size,
// num_hidden_layers, num_attention_heads, intermediate_size, max_position_embeddings (default
// 512), hidden_act (default gelu), type_vocab_size (default 2), layer_norm_eps (default 1e-12);
// position ids 0..seq-1, no heads, none of BertConfig's further fields read. Throws mobius::Error
// naming config.json's field for an unknown activation or heads that do not divide hidden_size.
EncoderSpec bert_encoder_spec(const HfConfig& c, DataType dtype);

// BertModel (transformers/models/bert/modeling_bert.py) and the members that only change fields of
// it: sizes, hidden_act, type_vocab_size (default 2), layer_norm_eps, BERT's layer names, and
// BERT's heads (BertForMaskedLM & co.) with the encoder under `prefix` (base_model_prefix) and
// `base_class` the model without a head. Throws mobius::Error naming config.json's field for
// is_decoder, a position_embedding_type other than "absolute", an unknown activation, or heads
// that do not divide hidden_size.
EncoderSpec bert_spec(const HfConfig& c, DataType dtype, const std::string& prefix, const std::string& base_class);

// RobertaModel (transformers/models/roberta/modeling_roberta.py): bert_spec with positions from
// the ids (padding_idx pad_token_id, default 1), RobertaLMHead (lm_head.{dense, gelu, layer_norm,
// decoder, bias}) and RobertaClassificationHead (classifier.dense + tanh + classifier.out_proj).
EncoderSpec roberta_spec(const HfConfig& c, DataType dtype, const std::string& prefix, const std::string& base_class);

// The multiple-choice head over a SequenceSummary (ElectraSequenceSummary, RoFormerSequenceSummary,
// ConvBertSequenceSummary): the summary_type token ("first" or "last"; `default_type` when absent),
// summary_use_proj (`default_use_proj` when absent): Linear(hidden, hidden) sequence_summary.summary,
// then summary_activation (none when absent or null), then classifier. Throws mobius::Error naming
// summary_type, summary_proj_to_labels or summary_activation for what the head cannot do.
FirstTokenHead sequence_summary(const HfConfig& c, const std::string& default_type, bool default_use_proj);

}  // namespace mobius
