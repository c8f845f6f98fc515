// LayoutLM (transformers/models/layoutlm/modeling_layoutlm.py, configuration_layoutlm.py;
// LayoutLMModel): BERT's layers and heads (archs/bert.h bert_spec, base_model_prefix "layoutlm")
// over embeddings that also read each token's bounding box, the graph input bbox (int64
// [batch_size, sequence_length, 4] = x0, y0, x1, y1 in 0 .. max_2d_position_embeddings - 1, as
// LayoutLMModel.forward names it):
//   LayerNorm(word_embeddings(input_ids) + position_embeddings(0..seq-1)
//             + x_position_embeddings(x0) + y_position_embeddings(y0) + x_position_embeddings(x1)
//             + y_position_embeddings(y1) + h_position_embeddings(y1 - y0)
//             + w_position_embeddings(x1 - x0) + token_type_embeddings(token_type_ids))
// Heads: BERT's fill-mask (cls.predictions), text-classification (layoutlm.pooler + classifier),
// token-classification, question-answering (qa_outputs; LayoutLMForQuestionAnswering, the
// document-question-answering class); no multiple-choice class.
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

// LayoutLMEmbeddings (blocks/encoder.h TokenEmbeddings): input_ids, token_type_ids, bbox
// (EncoderInputs::extra[0]) -> [batch, seq, hidden].
class LayoutLMEmbeddings : public TokenEmbeddings {
 public:
  LayoutLMEmbeddings(const EncoderSpec& s, int64_t max_2d) {
    words = child<Embedding>("word_embeddings", s.vocab_size, s.hidden_size, s.dtype);
    position_embeddings = child<Embedding>("position_embeddings", s.max_position_embeddings, s.hidden_size, s.dtype);
    x_position_embeddings = child<Embedding>("x_position_embeddings", max_2d, s.hidden_size, s.dtype);
    y_position_embeddings = child<Embedding>("y_position_embeddings", max_2d, s.hidden_size, s.dtype);
    h_position_embeddings = child<Embedding>("h_position_embeddings", max_2d, s.hidden_size, s.dtype);
    w_position_embeddings = child<Embedding>("w_position_embeddings", max_2d, s.hidden_size, s.dtype);
    token_type_embeddings = child<Embedding>("token_type_embeddings", s.type_vocab_size, s.hidden_size, s.dtype);
    layer_norm = child<LayerNorm>("LayerNorm", NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype});
  }
  const Embedding* word_embeddings() const override { return words; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    auto s = enter(op);
    Value* positions = token_positions(op, in.input_ids, PositionIds::kArange, 0);
    std::vector<Value*> box = op.Split(in.extra[0], {1, 1, 1, 1}, {.axis = 2});  // [batch, seq, 1] each
    for (Value*& v : box) v = op.Squeeze(v, {2});
    Value* x = op.Add(words->forward(op, in.input_ids), position_embeddings->forward(op, positions));
    x = op.Add(x, x_position_embeddings->forward(op, box[0]));
    x = op.Add(x, y_position_embeddings->forward(op, box[1]));
    x = op.Add(x, x_position_embeddings->forward(op, box[2]));
    x = op.Add(x, y_position_embeddings->forward(op, box[3]));
    x = op.Add(x, h_position_embeddings->forward(op, op.Sub(box[3], box[1])));
    x = op.Add(x, w_position_embeddings->forward(op, op.Sub(box[2], box[0])));
    x = op.Add(x, token_type_embeddings->forward(op, in.token_type_ids));
    return layer_norm->forward(op, x);
  }

  Embedding *words, *position_embeddings, *token_type_embeddings;
  Embedding *x_position_embeddings, *y_position_embeddings, *h_position_embeddings, *w_position_embeddings;
  LayerNorm* layer_norm;
};

}  // namespace

std::unique_ptr<Architecture> create_layoutlm(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "layoutlm", "LayoutLMModel");
  if (s.type_vocab_size <= 0) c.fail("type_vocab_size", "expected at least one token type");
  s.heads->missing = {"multiple-choice"};
  const int64_t max_2d = c.int_or("max_2d_position_embeddings", 1024);
  if (max_2d <= 0) c.fail("max_2d_position_embeddings", "expected a positive table size");
  return std::make_unique<PostNormEncoder>(
      s, EncoderParts{.embeddings = std::make_unique<LayoutLMEmbeddings>(s, max_2d), .extra_inputs = {{"bbox", {4}}}});
}

}  // namespace mobius
