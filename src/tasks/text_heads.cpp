#include "tasks/text_heads.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/vision_transformer.h"
#include "tasks/feature_extraction.h"
#include "tasks/image_classification.h"
#include "tasks/sentence_embedding.h"
#include "util/error.h"
#include "util/input_files.h"
#include "weights/weight_plan.h"

namespace mobius {
namespace {

// The head tasks and the class-name suffix of each (transformers' auto-model mappings).
constexpr std::array<std::pair<const char*, const char*>, 5> kHeadTasks = {{
    {"fill-mask", "ForMaskedLM"},
    {"text-classification", "ForSequenceClassification"},
    {"token-classification", "ForTokenClassification"},
    {"question-answering", "ForQuestionAnswering"},
    {"multiple-choice", "ForMultipleChoice"},
}};

// The class-name suffixes of heads named otherwise (XLM's, FlauBERT's).
constexpr std::array<std::pair<const char*, const char*>, 2> kOtherHeadClasses = {{
    {"fill-mask", "WithLMHeadModel"},                        // XLMWithLMHeadModel
    {"question-answering", "ForQuestionAnsweringSimple"},    // XLMForQuestionAnsweringSimple
}};

Value* maybe_activation(Ops& op, const std::string& act, Value* x) {
  return act.empty() ? x : activation(op, act, x);
}

// decoder(norm(act(dense(x)))), dense and norm optional, act(project(...)) after act when set:
// x [batch, seq, hidden] -> [batch, seq, vocab].
class MaskedLMHead : public Module {
 public:
  MaskedLMHead(const TextHeadLayout::MaskedLM& l, int64_t hidden, const Embedding& words, bool tied, DataType dtype)
      : act_(l.act) {
    const int64_t dim = words.embedding_dim;
    const int64_t width = l.width ? l.width : dim;  // dense's output
    if (!l.dense.empty()) dense = child<Linear>(l.dense, LinearOptions{hidden, width, l.dense_bias, dtype});
    if (!l.project.empty()) project = child<Linear>(l.project, LinearOptions{width, dim, l.dense_bias, dtype});
    const int64_t out = l.dense.empty() ? hidden : l.project.empty() ? width : dim;  // the transformed x's width
    if (!l.norm.empty())
      norm = child<LayerNorm>(l.norm, NormOptions{.dim = out, .eps = l.eps, .dtype = dtype, .bias = l.norm_bias});
    decoder_width_ = l.extra_rows.empty() ? out : dim;
    decoder = child<LMHead>(l.decoder, LMHeadOptions{decoder_width_, words.num_embeddings, l.decoder_bias, dtype},
                            tied ? &words : nullptr);
    if (tied && l.decoder_bias) decoder->bias->source_key = l.bias;  // untied, transformers ties neither: decoder.bias
    if (out > decoder_width_) extra_rows = param(l.extra_rows + ".weight", {out - decoder_width_, words.num_embeddings}, dtype);
  }
  Value* forward(Ops& op, Value* x) const {
    if (dense) x = dense->forward(op, x);
    x = maybe_activation(op, act_, x);
    if (project) x = maybe_activation(op, act_, project->forward(op, x));
    if (norm) x = norm->forward(op, x);
    if (!extra_rows) return decoder->forward(op, x);
    Value* head = decoder->forward(op, op.Slice(x, {0}, {decoder_width_}, {-1}));
    return op.Add(head, op.MatMul(op.Slice(x, {decoder_width_}, {INT64_MAX}, {-1}), extra_rows->value(op)));
  }
  Linear* dense = nullptr;
  Linear* project = nullptr;
  LayerNorm* norm = nullptr;
  LMHead* decoder;
  Parameter* extra_rows = nullptr;  // TextHeadLayout::MaskedLM::extra_rows

 private:
  std::string act_;
  int64_t decoder_width_;  // the decoder's input features: the first ones of dense's output
};

// out(norm(act(dense(x)))) over the last axis, each step optional (dense or out present):
// [..., hidden] -> [..., out_features]; without out, dense projects to out_features.
class ClassifierHead : public Module {
 public:
  ClassifierHead(const FirstTokenHead& h, int64_t hidden, int64_t out_features, DataType dtype) : act_(h.act) {
    const int64_t width = h.out.empty() ? out_features : h.width ? h.width : hidden;
    if (!h.dense.empty()) dense = child<Linear>(h.dense, LinearOptions{hidden, width, h.dense_bias, dtype});
    if (!h.norm.empty())
      norm = child<LayerNorm>(h.norm, NormOptions{.dim = width, .eps = h.eps, .dtype = dtype, .bias = h.norm_bias});
    if (!h.out.empty()) out = child<Linear>(h.out, LinearOptions{width, out_features, true, dtype});
  }
  Value* forward(Ops& op, Value* x) const {
    if (dense) x = dense->forward(op, x);
    x = maybe_activation(op, act_, x);
    if (norm) x = norm->forward(op, x);
    return out ? out->forward(op, x) : x;
  }
  Linear* dense = nullptr;
  LayerNorm* norm = nullptr;
  Linear* out = nullptr;

 private:
  std::string act_;
};

// ClassifierHead of one pooled vector per sequence: x [batch, seq, hidden], attention_mask int64
// [batch, seq] -> [batch, out_features].
class FirstTokenClassifier : public ClassifierHead {
 public:
  FirstTokenClassifier(const FirstTokenHead& h, int64_t hidden, int64_t out_features, DataType dtype)
      : ClassifierHead(h, hidden, out_features, dtype), token_(h.token), pooling_(h.pooling),
        pool_logits_(h.pool_logits) {}
  // pooled: the encoder's pooler_output, read with pooling "pooler_output"
  Value* forward(Ops& op, Value* x, Value* attention_mask, Value* pooled) const {
    if (pooling_ == "pooler_output") {
      if (!pooled) throw Error("text head: the encoder has no pooler_output for the classifier to read");
      return ClassifierHead::forward(op, pooled);
    }
    if (pool_logits_) return sentence_pool(op, pooling_, ClassifierHead::forward(op, x), attention_mask);
    return ClassifierHead::forward(
        op, pooling_.empty() ? token_at(op, x, token_) : sentence_pool(op, pooling_, x, attention_mask));
  }

 private:
  int64_t token_;
  std::string pooling_;
  bool pool_logits_;
};

// The first position of `token_id` in each row of input_ids int64 [batch, seq] -> int64 [batch, 1];
// 0 where the row has none (torch.argmax of input_ids == token_id).
Value* first_position(Ops& op, Value* input_ids, int64_t token_id) {
  GraphBuilder& b = op.builder();
  // seq - max(seq - position over its positions)
  Value* seq = op.Shape(input_ids, {.start = 1, .end = 2});
  Value* positions = op.Range(b.scalar_i64(0), op.Squeeze(seq, {0}), b.scalar_i64(1));
  Value* from_end = op.Where(op.Equal(input_ids, static_cast<double>(token_id)), op.Sub(seq, positions), b.scalar_i64(0));
  Value* last = op.ReduceMax(from_end, {1});  // [batch, 1]
  return op.Where(op.Greater(last, b.scalar_i64(0)), op.Sub(seq, last), b.scalar_i64(0));
}

// A question-answering head of its own: x [batch, seq, hidden], input_ids and attention_mask int64
// [batch, seq] -> {start_logits, end_logits} [batch, seq].
class SpanHead : public Module {
 public:
  virtual std::pair<Value*, Value*> forward(Ops& op, Value* x, Value* input_ids, Value* attention_mask) const = 0;
};

// Splinter's QuestionAwareSpanSelectionHead (transformers/models/splinter/modeling_splinter.py)
// under SplinterForQuestionAnswering: the first question token's state q (input_ids == the id,
// argmax; position 0 without one), each transform LayerNorm(gelu(dense(.))) (eps 1e-5):
//   start_logits = start_classifier(query_start_transform(q)) . start_transform(x)^T
//   end_logits   = end_classifier(query_end_transform(q)) . end_transform(x)^T
// plus the dtype's lowest value at padding (attention_mask 0). forward: x [batch, seq, hidden],
// input_ids and attention_mask int64 [batch, seq] -> {start, end} [batch, seq].
class QuestionAwareSpanHead : public SpanHead {
 public:
  QuestionAwareSpanHead(int64_t question_token_id, int64_t hidden, DataType dtype)
      : question_token_id_(question_token_id), dtype_(dtype) {
    auto transform = [&](const std::string& name) {
      return child<ClassifierHead>("", FirstTokenHead{.dense = name + ".dense", .act = "gelu", .norm = name + ".LayerNorm",
                                                      .eps = 1e-5f},
                                   hidden, hidden, dtype);
    };
    query_start_transform = transform("query_start_transform");
    query_end_transform = transform("query_end_transform");
    start_transform = transform("start_transform");
    end_transform = transform("end_transform");
    start_classifier = child<Linear>("start_classifier", LinearOptions{hidden, hidden, false, dtype});
    end_classifier = child<Linear>("end_classifier", LinearOptions{hidden, hidden, false, dtype});
  }
  std::pair<Value*, Value*> forward(Ops& op, Value* x, Value* input_ids, Value* attention_mask) const override {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    Value* first = first_position(op, input_ids, question_token_id_);
    Value* index = op.Expand(op.Unsqueeze(first, {2}), op.Concat({op.Shape(x, {.start = 0, .end = 1}), b.ints({1}),
                                                                  op.Shape(x, {.start = 2})}, {.axis = 0}));
    Value* q = op.GatherElements(x, index, {.axis = 1});  // [batch, 1, hidden]
    Value* padding = additive_mask(op, op.Cast(attention_mask, {.to = DataType::BOOL}), dtype_);
    auto logits = [&](const ClassifierHead* query, const Linear* classifier, const ClassifierHead* tokens) {
      Value* scores = op.MatMul(classifier->forward(op, query->forward(op, q)),
                                op.Transpose(tokens->forward(op, x), {.perm = {0, 2, 1}}));  // [batch, 1, seq]
      return op.Add(op.Squeeze(scores, {1}), padding);
    };
    return {logits(query_start_transform, start_classifier, start_transform),
            logits(query_end_transform, end_classifier, end_transform)};
  }
  ClassifierHead *query_start_transform, *query_end_transform, *start_transform, *end_transform;
  Linear *start_classifier, *end_classifier;

 private:
  int64_t question_token_id_;
  DataType dtype_;
};

// BigBirdForQuestionAnsweringHead and the question mask (TextHeadLayout::QuestionMaskedSpans).
class QuestionMaskedSpanHead : public SpanHead {
 public:
  QuestionMaskedSpanHead(const TextHeadLayout::QuestionMaskedSpans& l, int64_t hidden, DataType dtype)
      : act_(l.act), sep_token_id_(l.sep_token_id), dtype_(dtype) {
    intermediate = child<Linear>("intermediate.dense", LinearOptions{hidden, l.intermediate_size, true, dtype});
    output = child<Linear>("output.dense", LinearOptions{l.intermediate_size, hidden, true, dtype});
    norm = child<LayerNorm>("output.LayerNorm", NormOptions{.dim = hidden, .eps = l.eps, .dtype = dtype});
    qa_outputs = child<Linear>("qa_outputs", LinearOptions{hidden, 2, true, dtype});
  }
  std::pair<Value*, Value*> forward(Ops& op, Value* x, Value* input_ids, Value*) const override {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    Value* h = norm->forward(op, op.Add(output->forward(op, activation(op, act_, intermediate->forward(op, x))), x));
    Value* logits = qa_outputs->forward(op, h);  // [batch, seq, 2]
    Value* question = op.Add(first_position(op, input_ids, sep_token_id_), b.scalar_i64(1));  // [batch, 1]
    Value* positions = op.Range(b.scalar_i64(0), op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0}),
                                b.scalar_i64(1));
    Value* masked = op.And(op.Less(positions, question), op.Greater(positions, b.scalar_i64(0)));  // [batch, seq]
    Value* penalty = op.Mul(op.Cast(masked, {.to = DataType::FLOAT}), 1e6);
    auto span = [&](int64_t k) {
      Value* v = op.Gather(logits, b.scalar_i64(k), {.axis = 2});
      if (dtype_ == DataType::FLOAT) return op.Sub(v, penalty);
      return op.Cast(op.Sub(op.Cast(v, {.to = DataType::FLOAT}), penalty), {.to = dtype_});
    };
    return {span(0), span(1)};
  }
  Linear *intermediate, *output, *qa_outputs;
  LayerNorm* norm;

 private:
  std::string act_;
  int64_t sep_token_id_;
  DataType dtype_;
};

// The encoder (adopted under the layout's base_model_prefix, or at the root) and one head.
class TextHeadModel : public Architecture {
 public:
  TextHeadModel(std::unique_ptr<Encoder> encoder, const std::string& task, const std::string& prefix,
                const HfConfig& c)
      : task_(task), outputs_(task == "fill-mask" || task == "multiple-choice" ? 1 : label_count(c)) {
    const TextHeadLayout& l = *encoder->head_layout();
    encoder_ = adopt(prefix, std::move(encoder));
    const int64_t hidden = encoder_->hidden_size();
    const DataType dtype = encoder_->dtype();
    if (task == "fill-mask") {
      const Embedding* words = encoder_->word_embeddings();
      const bool tied = l.masked_lm.tiable && c.bool_or("tie_word_embeddings", true);
      masked_lm_ = child<MaskedLMHead>("", l.masked_lm, hidden, *words, tied, dtype);
      outputs_ = words->num_embeddings;
    } else if (task == "text-classification") {
      first_token_ = child<FirstTokenClassifier>("", l.sequence_classification, hidden, outputs_, dtype);
    } else if (task == "multiple-choice") {
      first_token_ = child<FirstTokenClassifier>("", l.multiple_choice, hidden, 1, dtype);
    } else if (task == "token-classification") {
      per_token_ = child<ClassifierHead>("", l.token_classification, hidden, outputs_, dtype);
    } else {  // question-answering: BertForQuestionAnswering's split(1, dim=-1) into two
      if (!l.question_aware_spans.name.empty())
        spans_ = child<QuestionAwareSpanHead>(l.question_aware_spans.name, l.question_aware_spans.question_token_id,
                                              hidden, dtype);
      else if (!l.question_masked_spans.name.empty())
        spans_ = child<QuestionMaskedSpanHead>(l.question_masked_spans.name, l.question_masked_spans, hidden, dtype);
      else if (outputs_ != 2)
        c.fail("num_labels", "a question-answering head has 2 labels (start, end)");
      else
        per_token_ = child<ClassifierHead>("", l.question_answering, hidden, 2, dtype);
    }
  }

  std::string task() const override { return task_; }
  bool training_only(const std::string& key) const override { return encoder_->training_only(key); }

  std::vector<NamedGraph> build_graphs() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const bool choices = task_ == "multiple-choice";
    const Shape shape = choices ? Shape{"batch_size", "num_choices", "sequence_length"}
                                : Shape{"batch_size", "sequence_length"};
    Value* const input_ids = b.input("input_ids", DataType::INT64, shape);
    Value* ids = input_ids;
    Value* mask = b.input("attention_mask", DataType::INT64, shape);
    Value* types = encoder_->has_token_type_ids() ? b.input("token_type_ids", DataType::INT64, shape) : nullptr;
    std::vector<Value*> extra;
    for (const ExtraInput& e : encoder_->extra_inputs()) {
      Shape s = shape;
      for (int64_t d : e.trailing) s.push_back(d);
      extra.push_back(b.input(e.name, e.dtype, s));
    }
    if (choices) {  // each choice encoded on its own: [batch * num_choices, seq, trailing...]
      auto flatten = [&](Value* v) { return op.Reshape(v, op.Concat({b.ints({-1}), op.Shape(v, {.start = 2})}, {.axis = 0})); };
      ids = flatten(ids);
      mask = flatten(mask);
      if (types) types = flatten(types);
      for (Value*& v : extra) v = flatten(v);
    }
    const EncoderOutputs encoded = encoder_->forward_outputs(op, EncoderInputs{ids, mask, types, extra});
    Value* x = encoded.last_hidden_state;
    const Shape tokens{"batch_size", "sequence_length"};
    if (masked_lm_) {
      b.output(masked_lm_->forward(op, x), "logits", {"batch_size", "sequence_length", outputs_});
    } else if (choices) {
      Value* logits = op.Reshape(first_token_->forward(op, x, mask, encoded.pooler_output),
                                 op.Shape(input_ids, {.start = 0, .end = 2}));
      b.output(logits, "logits", {"batch_size", "num_choices"});
    } else if (first_token_) {
      b.output(first_token_->forward(op, x, mask, encoded.pooler_output), "logits", {"batch_size", outputs_});
    } else if (task_ == "token-classification") {
      b.output(per_token_->forward(op, x), "logits", {"batch_size", "sequence_length", outputs_});
    } else if (spans_) {
      auto [start, end] = spans_->forward(op, x, ids, mask);
      b.output(start, "start_logits", tokens);
      b.output(end, "end_logits", tokens);
    } else {
      Value* logits = per_token_->forward(op, x);
      b.output(op.Gather(logits, b.scalar_i64(0), {.axis = 2}), "start_logits", tokens);
      b.output(op.Gather(logits, b.scalar_i64(1), {.axis = 2}), "end_logits", tokens);
    }
    return single_graph(std::move(model), GraphLowering::attention);
  }

 private:
  std::string task_;
  int64_t outputs_;  // the logits' last size: labels, or the vocabulary of fill-mask
  Encoder* encoder_;
  MaskedLMHead* masked_lm_ = nullptr;
  FirstTokenClassifier* first_token_ = nullptr;
  ClassifierHead* per_token_ = nullptr;  // token-classification's classifier, question-answering's qa_outputs
  SpanHead* spans_ = nullptr;  // question-answering by question_aware_spans or question_masked_spans
};

// The task config.json's architectures names (<Type>For<Task>), feature-extraction otherwise.
std::string task_of_class(const std::string& cls) {
  for (const auto& [task, suffix] : kHeadTasks)
    if (cls.ends_with(suffix)) return task;
  for (const auto& [task, suffix] : kOtherHeadClasses)
    if (cls.ends_with(suffix)) return task;
  return "feature-extraction";
}

}  // namespace

bool is_text_task(const std::string& task) {
  if (task == "feature-extraction") return true;
  for (const auto& [name, suffix] : kHeadTasks)
    if (task == name) return true;
  return false;
}

std::unique_ptr<Architecture> with_task(std::unique_ptr<Architecture> arch, const std::string& task,
                                        const HfConfig& c) {
  auto* encoder = dynamic_cast<Encoder*>(arch.get());
  const TextHeadLayout* layout = encoder ? encoder->head_layout() : nullptr;
  const std::string model_type = c.string_or("model_type", "");
  std::string cls;
  if (c.has("architectures") && c.json()["architectures"].is_array() && !c.json()["architectures"].empty() &&
      c.json()["architectures"][0].is_string())
    cls = c.json()["architectures"][0].get<std::string>();
  if (!layout) {
    if (!task.empty() && task != arch->task())
      throw Error("--task " + task + ": " + model_type + " builds " + arch->task() + " only");
    if (arch->task() == "text-generation" && task_of_class(cls) != "feature-extraction")  // LlamaForSequenceClassification
      throw Error(c.file() + ": architectures " + escaped(cls) + ": the " + task_of_class(cls) + " head of a " +
                  model_type + " decoder is not supported yet (mobius builds its text-generation model, " +
                  "…ForCausalLM)");
    return arch;
  }
  const std::string chosen = task.empty() ? task_of_class(cls) : task;
  if (!is_text_task(chosen)) {
    std::vector<std::string> tasks = {"feature-extraction"};
    for (const auto& [name, suffix] : kHeadTasks) tasks.push_back(name);
    std::string list;
    for (const std::string& t : tasks) list += (list.empty() ? "" : ", ") + t;
    const std::vector<std::string> near = nearest_names(chosen, tasks, 1, std::max<size_t>(2, chosen.size() / 3));
    throw Error("--task " + chosen + ": " + model_type + " has no such head (" +
                (near.empty() ? "" : "did you mean " + near.front() + "? ") + "its tasks: " + list +
                "; sentence-embedding for a sentence-transformers model)");
  }
  if (std::find(layout->missing.begin(), layout->missing.end(), chosen) != layout->missing.end())
    throw Error("--task " + chosen + ": " + model_type + " has no such head in mobius (transformers has no " +
                model_type + " class for it, or mobius does not build that class yet)");
  // a head checkpoint holds its own head: another one is not in it (the encoder alone is)
  if (const std::string saved = task_of_class(cls);
      !task.empty() && chosen != "feature-extraction" && saved != "feature-extraction" && saved != chosen)
    throw Error("--task " + chosen + ": " + c.file() + " names architectures " + escaped(cls) + ", a " + saved +
                " checkpoint: it holds that head, not " + chosen + "'s; build it without --task (" + saved +
                ") or with --task feature-extraction (the encoder alone)");
  // a head checkpoint (BertForMaskedLM) holds the encoder under its base_model_prefix
  const std::string prefix = !cls.empty() && cls != layout->base_model_class ? layout->base_model_prefix : "";
  if (chosen == "feature-extraction") {
    arch->set_name(prefix, "");
    return arch;
  }
  std::unique_ptr<Encoder> owned(static_cast<Encoder*>(arch.release()));
  return std::make_unique<TextHeadModel>(std::move(owned), chosen, prefix, c);
}

}  // namespace mobius
