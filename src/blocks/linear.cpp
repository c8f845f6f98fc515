#include "blocks/linear.h"

namespace mobius {

Linear::Linear(const LinearOptions& o) {
  weight = param("weight", {o.in_features, o.out_features}, o.dtype, /*transpose=*/!o.conv1d);
  if (o.bias) bias = param("bias", {o.out_features}, o.dtype);
}

Value* Linear::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* y = op.MatMul(x, weight->value(op));
  return bias ? op.Add(y, bias->value(op)) : y;
}

Embedding::Embedding(int64_t num, int64_t dim, DataType dtype)
    : num_embeddings(num), embedding_dim(dim) {
  weight = param("weight", {num, dim}, dtype);
}

Value* Embedding::forward(Ops& op, Value* ids) const {
  auto s = enter(op);
  return op.Gather(weight->value(op), ids);
}

Value* Embedding::attend(Ops& op, Value* x, Value* bias) const {
  // Gemm with transB reads the [num, dim] matrix in place: no transposed copy of the weight.
  Value* flat = op.Reshape(x, {-1, embedding_dim});
  Value* logits = op.Gemm(flat, weight->value(op), bias, {.transB = 1});
  op.builder().producer(logits).tags.lm_head = true;
  Value* batch_seq = op.Shape(x, {.start = 0, .end = 2});
  return op.Reshape(logits, op.Concat({batch_seq, op.builder().ints({num_embeddings})}, {.axis = 0}));
}

LMHead::LMHead(const LMHeadOptions& o, const Embedding* tied) : tied_(tied) {
  if (!tied) weight = param("weight", {o.hidden_size, o.vocab_size}, o.dtype, /*transpose=*/true);
  if (o.bias) bias = param("bias", {o.vocab_size}, o.dtype);
}

Value* LMHead::forward(Ops& op, Value* x) const {
  if (tied_) return tied_->attend(op, x, bias ? bias->value(op) : nullptr);
  auto s = enter(op);
  Value* y = op.MatMul(x, weight->value(op));
  op.builder().producer(y).tags.lm_head = true;
  return bias ? op.Add(y, bias->value(op)) : y;
}

}  // namespace mobius
