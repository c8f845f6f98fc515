#include "passes/quantized_weights.h"

#include "weights/quantize.h"

namespace mobius {

const Initializer* quantizable_weight(GraphEditor& e, const Value* v) {
  const Initializer* w = e.initializer(v);
  if (!w || !w->weight || quantize_of(w->weight->transforms) || !v->shape || v->shape->size() != 2) return nullptr;
  for (const Dim& d : *v->shape)
    if (d.is_symbolic()) return nullptr;
  return v->dtype == DataType::FLOAT || v->dtype == DataType::FLOAT16 ? w : nullptr;
}

std::vector<Value*> add_quantized_weight(GraphEditor& e, const WeightRef& ref, const std::string& base,
                                         DataType float_dtype, int64_t n, int64_t k,
                                         const BlockQuantization& q, bool flat_data) {
  using Part = BlockQuantize::Part;
  const Part parts[] = {Part::data, Part::scales, Part::zero_points};
  const std::string names[] = {base + "_Q" + std::to_string(q.bits), base + "_scales", base + "_zero_points"};
  std::vector<Value*> out;
  for (int p = 0; p < (q.symmetric ? 2 : 3); ++p) {
    const bool flat = flat_data && parts[p] == Part::data;
    WeightRef part = ref;
    append(part.transforms, BlockQuantize{parts[p], q, flat});
    const Shape shape = flat ? Shape{n, k * q.bits / 8} : quant_shape(parts[p], n, k, q);
    out.push_back(e.weight(names[p], parts[p] == Part::scales ? float_dtype : DataType::UINT8, shape, std::move(part)));
  }
  return out;
}

}  // namespace mobius
