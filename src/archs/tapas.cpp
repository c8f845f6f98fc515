// TAPAS (transformers/models/tapas/modeling_tapas.py, configuration_tapas.py; TapasModel): BERT's
// layers and heads (archs/bert.h bert_spec, base_model_prefix "tapas") over embeddings that read
// the table structure from token_type_ids int64 [batch_size, sequence_length, 7] (as
// TapasModel.forward names it; one id per table of type_vocab_sizes: segment, column, row, prev
// label, column rank, inverse column rank, numeric relation):
//   LayerNorm(word_embeddings(input_ids) + position_embeddings(position_ids)
//             + sum_i token_type_embeddings_<i>(token_type_ids[:, :, i]))
//   position_ids 0..seq-1; with reset_position_index_per_cell (the default) each token's
//   position less the first position of its cell (the tokens of its row with its column id and
//   row id, token_type_ids[:, :, 1] and [:, :, 2]), at most max_position_embeddings - 1
// Heads: BERT's fill-mask (cls.predictions) and text-classification (tapas.pooler + classifier);
// TapasForQuestionAnswering is table question answering (cell selection and aggregation), not a
// head task here; no token-classification, question-answering or multiple-choice class.
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

// TapasEmbeddings (blocks/encoder.h TokenEmbeddings): input_ids, token_type_ids
// (EncoderInputs::extra[0], [batch, seq, type_vocab_sizes.size()]) -> [batch, seq, hidden].
class TapasEmbeddings : public TokenEmbeddings {
 public:
  TapasEmbeddings(const EncoderSpec& s, const std::vector<int64_t>& type_vocab_sizes, bool reset_per_cell)
      : max_positions_(s.max_position_embeddings), reset_per_cell_(reset_per_cell) {
    words = child<Embedding>("word_embeddings", s.vocab_size, s.hidden_size, s.dtype);
    position_embeddings = child<Embedding>("position_embeddings", s.max_position_embeddings, s.hidden_size, s.dtype);
    for (size_t i = 0; i < type_vocab_sizes.size(); ++i)
      token_type_embeddings.push_back(
          child<Embedding>("token_type_embeddings_" + std::to_string(i), type_vocab_sizes[i], s.hidden_size, s.dtype));
    layer_norm = child<LayerNorm>("LayerNorm", NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype});
  }
  const Embedding* word_embeddings() const override { return words; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    auto s = enter(op);
    std::vector<int64_t> ones(token_type_embeddings.size(), 1);
    std::vector<Value*> types = op.Split(in.extra[0], ones, {.axis = 2});  // [batch, seq, 1] each
    for (Value*& v : types) v = op.Squeeze(v, {2});
    Value* positions = token_positions(op, in.input_ids, PositionIds::kArange, 0);  // [seq]
    if (reset_per_cell_) positions = cell_positions(op, positions, types[1], types[2]);
    Value* x = op.Add(words->forward(op, in.input_ids), position_embeddings->forward(op, positions));
    for (size_t i = 0; i < types.size(); ++i) x = op.Add(x, token_type_embeddings[i]->forward(op, types[i]));
    return layer_norm->forward(op, x);
  }

  Embedding *words, *position_embeddings;
  std::vector<Embedding*> token_type_embeddings;
  LayerNorm* layer_norm;

 private:
  // position - (the first position of the token's cell), at most max_positions - 1: the cell is
  // the row's tokens with the same column and row ids (TAPAS' reduce_min over ProductIndexMap,
  // gathered back): [seq] positions, [batch, seq] ids -> [batch, seq].
  Value* cell_positions(Ops& op, Value* positions, Value* column, Value* row) const {
    auto same = [&](Value* ids) { return op.Equal(op.Unsqueeze(ids, {2}), op.Unsqueeze(ids, {1})); };
    Value* same_cell = op.And(same(column), same(row));  // [batch, seq (token), seq (other)]
    // the least other position in the cell, as -max(-position): every token is in its own cell
    Value* negated = op.Where(same_cell, op.Neg(positions), op.Neg(op.Shape(positions)));
    Value* first = op.Neg(op.ReduceMax(negated, {2}, {.keepdims = 0}));
    return op.Min(op.Sub(positions, first), op.builder().scalar_i64(max_positions_ - 1));
  }

  int64_t max_positions_;
  bool reset_per_cell_;
};

}  // namespace

std::unique_ptr<Architecture> create_tapas(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "tapas", "TapasModel");
  s.type_vocab_size = 0;  // the tables of type_vocab_sizes, read by TapasEmbeddings from token_type_ids
  s.heads->missing = {"token-classification", "question-answering", "multiple-choice"};
  // TapasConfig.type_vocab_sizes default (3, 256, 256, 2, 256, 256, 10)
  std::vector<int64_t> sizes = {3, 256, 256, 2, 256, 256, 10};
  if (c.has("type_vocab_sizes")) {
    sizes.clear();
    for (double v : c.float_list("type_vocab_sizes")) {
      if (v != static_cast<double>(static_cast<int64_t>(v)) || v < 1 || v > static_cast<double>(kMaxPositions))
        c.fail("type_vocab_sizes", "expected table sizes in [1, " + std::to_string(kMaxPositions) + "]");
      sizes.push_back(static_cast<int64_t>(v));
    }
  }
  const bool reset = c.bool_or("reset_position_index_per_cell", true);
  if (sizes.empty() || (reset && sizes.size() < 3))
    c.fail("type_vocab_sizes", "expected the token type tables (column and row ids at 1 and 2 when "
                               "reset_position_index_per_cell)");
  auto embeddings = std::make_unique<TapasEmbeddings>(s, sizes, reset);
  return std::make_unique<PostNormEncoder>(
      s, EncoderParts{.embeddings = std::move(embeddings),
                      .extra_inputs = {{"token_type_ids", {static_cast<int64_t>(sizes.size())}}}});
}

}  // namespace mobius
