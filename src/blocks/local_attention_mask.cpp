#include "blocks/local_attention_mask.h"

#include "blocks/attention.h"

namespace mobius {

Value* local_padding_mask(Ops& op, Value* attention_mask, int64_t one_sided, DataType dtype) {
  auto sc = op.builder().scope("local_mask");
  Value* seq = op.Squeeze(op.Shape(attention_mask, {.start = 1, .end = 2}), {0});
  Value* pos = op.Range(op.builder().scalar_i64(0), seq, op.builder().scalar_i64(1));
  Value* distance = op.Abs(op.Sub(op.Unsqueeze(pos, {1}), op.Unsqueeze(pos, {0})));  // [seq, seq]
  Value* band = op.LessOrEqual(distance, static_cast<double>(one_sided));
  Value* token = op.Cast(op.Unsqueeze(attention_mask, {1, 2}), {.to = DataType::BOOL});  // [batch, 1, 1, seq]
  return additive_mask(op, op.And(token, band), dtype);
}

}  // namespace mobius
