// The text encoders' heads, as a task option: transformers' <Type>For<Task> classes over an
// encoder (tasks/feature_extraction.h), chosen by --task or by config.json's architectures, with
// Optimum's input and output names (optimum ORTModelFor<Task>):
//   fill-mask             ...ForMaskedLM              logits [batch_size, sequence_length, vocab_size]
//   text-classification   ...ForSequenceClassification logits [batch_size, num_labels] (regression
//                         and multi-label configs too: the loss differs, not the logits)
//   token-classification  ...ForTokenClassification   logits [batch_size, sequence_length, num_labels]
//   question-answering    ...ForQuestionAnswering     start_logits, end_logits [batch_size, sequence_length]
//   multiple-choice       ...ForMultipleChoice        logits [batch_size, num_choices]; its inputs are
//                         [batch_size, num_choices, sequence_length] (each choice encoded alone)
// The inputs are the encoder's (input_ids, attention_mask, token_type_ids where the type has them,
// its extra_inputs: tasks/feature_extraction.h).
// A family describes its heads in a TextHeadLayout (names as its state dicts; archs/bert.cpp); the
// head modules are the same for every family:
//   masked LM       decoder(norm(act(dense(x))))  decoder tied to the word embeddings (its own
//                   weight with tie_word_embeddings false) plus the head's bias; dense and norm
//                   optional (EuroBERT: the decoder alone), UltraBERT's act(project(...)) after act;
//                   MobileBERT: the decoder over the first embedding_size features, further rows
//                   over the rest
//   first token     out(act(dense(x[:, 0])))      dense and act optional (BertPooler + classifier,
//                   RobertaClassificationHead, DistilBERT's pre_classifier, ELECTRA's summary;
//                   RoFormer's multiple-choice summary reads the last token, x[:, -1])
//   token           classifier(x)                 every family: "classifier"
//   span            qa_outputs(x) split in start / end logits
// ModernBERT puts its prediction head norm(act(dense(x))) (bias-free dense and norm as configured)
// before every classifier, pools sequence classification and multiple choice by its
// classifier_pooling (the first token, the first kept one or the mean over the mask), and names
// the token and span classifiers "classifier" (FirstTokenHead's norm and pooling, the layout's
// token_classification and question_answering).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/hf_config.h"
#include "tasks/architecture.h"

namespace mobius {

class Encoder;

// out(act(dense(x[:, token]))): the checkpoint names of the two Linears ("" dense: none; "" out:
// none, dense then gives the logits: XLMSequenceSummary's summary and summary_activation) and the
// activation between them ("" = none; the names of blocks/activation.h).
struct FirstTokenHead {
  std::string dense;
  std::string act;
  std::string out;
  int64_t token = 0;  // 0: the first token; -1: the last (SequenceSummary's summary_type "last", RoFormer)
  std::string norm;   // a LayerNorm after act (ModernBertPredictionHead.norm); "" none
  bool dense_bias = true, norm_bias = true;
  float eps = 1e-12f;  // the norm's
  // "" the token above; else the attention-mask pooling of tasks/sentence_embedding.h sentence_pool:
  // "cls" (the first kept token: ModernBertForMultipleChoice's attention_mask.argmax) or "mean"
  // (classifier_pooling "mean"); or "pooler_output": the encoder's own (EncoderOutputs, CANINE's)
  std::string pooling;
  // pool the per-token logits out(act(dense(x))) by `pooling` instead of pooling x first
  // (EuroBertForSequenceClassification's classifier_pooling "late": the mean over the mask)
  bool pool_logits = false;
  // dense's output width when out follows it and it is not hidden_size (XLMForMultipleChoice:
  // sequence_summary.summary to num_labels, then logits_proj); 0: hidden_size
  int64_t width = 0;
};

struct TextHeadLayout {
  std::string base_model_prefix;  // the encoder's weights in a head checkpoint: bert.embeddings...
  std::string base_model_class;   // architectures of a checkpoint without a head: BertModel
  // fill-mask: decoder(norm(act(dense(x)))) + bias; dense "" and norm "" none (EuroBERT's lm_head
  // alone), project: a Linear from width back to the word embeddings' width (bias dense_bias), then
  // act again, after act (UltrabertPredictionHead.linear2); "" none
  struct MaskedLM {
    std::string dense, act, norm, decoder;
    std::string bias;  // the tied decoder's bias as saved (cls.predictions.bias, tied to decoder.bias)
    float eps = 1e-12f;
    int64_t width = 0;  // dense's output width; 0: the word embeddings' (RemBERT: output_embedding_size)
    bool dense_bias = true, norm_bias = true, decoder_bias = true;  // ModernBERT: classifier_bias, norm_bias, decoder_bias
    std::string project;
    // MobileBERT: a weight [width - embedding_dim, vocab] (as saved) whose rows follow the decoder's
    // (MobileBertLMPredictionHead: x @ [decoder.weight^T ; dense.weight]): the decoder reads the
    // first embedding_dim features of the transformed x, this weight the rest. "" none.
    std::string extra_rows;
    // false: the decoder keeps its own weight whatever tie_word_embeddings says (LukeForMaskedLM's
    // _tied_weights_keys tie only lm_head.bias to lm_head.decoder.bias)
    bool tiable = true;
  } masked_lm;
  FirstTokenHead sequence_classification;
  FirstTokenHead multiple_choice;  // out has one feature
  // the head tasks the family has no <Type>For<Task> class for (DeBERTa: multiple-choice)
  std::vector<std::string> missing;
  // token-classification and question-answering: out(norm(act(dense(x)))) at every token (token
  // and pooling unread); by default the Linear alone, "classifier" and "qa_outputs"
  FirstTokenHead token_classification = {.out = "classifier"};
  FirstTokenHead question_answering = {.out = "qa_outputs"};
  // question-answering by Splinter's question-aware span selection instead of question_answering
  // (QuestionAwareSpanSelectionHead, transformers/models/splinter/modeling_splinter.py): the
  // module's checkpoint name ("" none) and the id of the question token whose first occurrence in
  // input_ids (else position 0) is the query of the start and end logits
  struct QuestionAwareSpans {
    std::string name;
    int64_t question_token_id = 0;
  } question_aware_spans;
  // question-answering by BigBirdForQuestionAnsweringHead instead of question_answering
  // (transformers/models/big_bird/modeling_big_bird.py): under `name` ("" none),
  // qa_outputs(output.LayerNorm(output.dense(act(intermediate.dense(x))) + x)), then the question's
  // tokens leave the competition: positions 1 .. q - 1 get logits - 1e6, q the first position of
  // sep_token_id + 1 (1 without one; BigBirdForQuestionAnswering.prepare_question_mask, position 0
  // kept). The -1e6 is computed in float32 (an f16 build's output there is -inf).
  struct QuestionMaskedSpans {
    std::string name, act;
    int64_t intermediate_size = 0, sep_token_id = 0;
    float eps = 1e-12f;
  } question_masked_spans;
};

// The task names above and feature-extraction.
bool is_text_task(const std::string& task);

// `arch` for `task` ("" = the one config.json's architectures names: <Type>For<Task>, else
// feature-extraction): an encoder with a TextHeadLayout gets the head (its weights then under the
// layout's base_model_prefix); feature-extraction of a head checkpoint reads the encoder under the
// prefix. Any other architecture is returned as it is when `task` is "" or its own task. Throws
// mobius::Error for a task the model has no head for, naming it and the ones it has.
std::unique_ptr<Architecture> with_task(std::unique_ptr<Architecture> arch, const std::string& task,
                                        const HfConfig& config);

}  // namespace mobius
