#include "blocks/attention_overlay.h"

namespace mobius {

Value* image_block_overlay(Ops& op, Value* input_ids, int64_t image_token_id, Value* attention_mask) {
  auto s = op.builder().scope("image_block_overlay");
  Value* one = op.builder().ints({1});
  Value* is_image = op.Equal(input_ids, static_cast<double>(image_token_id));  // [batch, seq]
  Value* image = op.Cast(is_image, {.to = DataType::INT64});
  // the previous token's flag (0 before the first): a block starts where it is 0 and this one 1
  Value* first = op.Mul(op.Slice(image, {0}, {1}, {1}), 0.0);  // [batch, 1] zeros
  Value* previous = op.Concat({first, op.Slice(image, {0}, {-1}, {1})}, {.axis = 1});
  Value* starts = op.Mul(image, op.Sub(1.0, previous));
  // block k >= 1 for the tokens of the k-th image, 0 elsewhere
  Value* block = op.Mul(op.CumSum(starts, op.builder().scalar_i64(1)), image);
  // the keys: the cached tokens (no block) then the current ones
  Value* total = op.Shape(attention_mask, {.start = 1, .end = 2});
  Value* past = op.Sub(total, op.Shape(input_ids, {.start = 1, .end = 2}));
  Value* cached = op.Mul(op.Slice(attention_mask, op.builder().ints({0}), past, one), 0.0);  // [batch, past]
  Value* key_block = op.Concat({cached, block}, {.axis = 1});                                 // [batch, total]
  Value* q = op.Unsqueeze(block, {1, 3});      // [batch, 1, seq, 1]
  Value* k = op.Unsqueeze(key_block, {1, 2});  // [batch, 1, 1, total]
  return op.And(op.Equal(q, k), op.Greater(q, 0.0));
}

Value* prompt_prefix_overlay(Ops& op, Value* tokens, Value* attention_mask) {
  auto s = op.builder().scope("prompt_prefix_overlay");
  Value* total = op.Shape(attention_mask, {.start = 1, .end = 2});
  Value* past = op.Sub(total, op.Shape(tokens, {.start = 1, .end = 2}));
  return op.Reshape(op.Equal(past, 0.0), std::vector<int64_t>{1, 1, 1, 1});
}

}  // namespace mobius
