#include "weights/transform.h"

#include <algorithm>

#include "util/error.h"
#include "weights/checkpoint.h"
#include "weights/quantize.h"
#include "weights/weight_plan.h"

namespace mobius {

namespace {

// The canonical position of each kind (Transpose, Concat, Cast, BlockQuantize).
size_t rank_of(const WeightTransform& t) { return t.index(); }

}  // namespace

void append(WeightTransforms& list, WeightTransform t) {
  MOBIUS_ASSERT(!quantize_of(list), "weight transforms: nothing follows a BlockQuantize");
  size_t at = list.size();  // where `t` goes: moved ahead of what it commutes with
  while (at > 0 && rank_of(list[at - 1]) > rank_of(t)) {
    if (auto* c = std::get_if<Concat>(&list[at - 1]); c && std::holds_alternative<Transpose>(t))
      c->axis = c->axis == -1 ? -2 : -1;  // T(concat_a(x_i)) = concat_a'(T(x_i))
    --at;
  }
  if (at > 0 && rank_of(list[at - 1]) == rank_of(t)) {
    MOBIUS_ASSERT(std::holds_alternative<Transpose>(t), "weight transforms: a second " + to_string({t}));
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(at - 1));  // two transposes cancel
    return;
  }
  list.insert(list.begin() + static_cast<std::ptrdiff_t>(at), std::move(t));
}

bool transposes(const WeightTransforms& list) {
  return std::any_of(list.begin(), list.end(), [](const WeightTransform& t) { return std::holds_alternative<Transpose>(t); });
}

template <typename T>
static const T* find_in(const WeightTransforms& list) {
  for (const WeightTransform& t : list)
    if (const T* p = std::get_if<T>(&t)) return p;
  return nullptr;
}

const Concat* concat_of(const WeightTransforms& list) { return find_in<Concat>(list); }
const Cast* cast_of(const WeightTransforms& list) { return find_in<Cast>(list); }
const BlockQuantize* quantize_of(const WeightTransforms& list) { return find_in<BlockQuantize>(list); }

std::string to_string(const WeightTransforms& list) {
  static const char* parts[] = {"data", "scales", "zero_points"};
  std::string s;
  for (const WeightTransform& t : list) {
    s += s.empty() ? "" : ", ";
    if (std::holds_alternative<Transpose>(t)) {
      s += "transpose";
    } else if (const auto* c = std::get_if<Concat>(&t)) {
      s += "concat(";
      for (size_t i = 0; i < c->keys.size(); ++i) s += (i ? ", " : "") + c->keys[i];
      s += "; axis " + std::to_string(c->axis) + ")";
    } else if (const auto* c = std::get_if<Cast>(&t)) {
      s += "cast(" + dtype_name(c->dtype) + ")";
    } else if (const auto* q = std::get_if<BlockQuantize>(&t)) {
      s += std::string("block_quantize(") + parts[static_cast<int>(q->part)] + (q->flat_data ? " flat" : "") + "; " +
           std::to_string(q->scheme.bits) + " bits, block " + std::to_string(q->scheme.block_size) +
           (q->scheme.symmetric ? ", symmetric" : ", asymmetric") + (q->scheme.from_checkpoint ? ", stored" : "") + ")";
    }
  }
  return s;
}

TensorType transformed_type(const std::vector<const TensorInfo*>& inputs, const WeightTransforms& list,
                            const std::string& target) {
  MOBIUS_ASSERT(!inputs.empty(), "transformed_type: no source tensor");
  auto fail = [](const TensorInfo& t, const std::string& why) -> Error {
    return Error(*t.file + ": tensor '" + t.name + "' " + why);
  };
  // each input's shape and dtype; until a Concat joins them into the first, a step applies to all
  std::vector<TensorType> parts;
  for (const TensorInfo* t : inputs) parts.push_back({t->shape, t->dtype});
  size_t live = parts.size();
  for (const WeightTransform& step : list) {
    if (std::holds_alternative<Transpose>(step)) {
      for (size_t i = 0; i < live; ++i)
        if (parts[i].shape.size() >= 2) std::swap(parts[i].shape[parts[i].shape.size() - 2], parts[i].shape.back());
    } else if (const auto* c = std::get_if<Concat>(&step)) {
      MOBIUS_ASSERT(live > 1 && c->keys.size() + 1 == inputs.size(), "transformed_type: one input per Concat key");
      TensorType& first = parts[0];
      const size_t rank = first.shape.size(), back = static_cast<size_t>(-c->axis);
      if (rank < back)
        throw fail(*inputs[0], "has shape " + dims_str(inputs[0]->shape) + ", which has no axis " +
                                   std::to_string(c->axis) + " to pack '" + target + "' along");
      const size_t axis = rank - back;
      int64_t total = first.shape[axis];
      for (size_t i = 1; i < parts.size(); ++i) {
        std::vector<int64_t> want = first.shape;
        if (parts[i].shape.size() == rank) want[axis] = parts[i].shape[axis];
        if (parts[i].shape != want)
          throw fail(*inputs[i], "has shape " + dims_str(inputs[i]->shape) + ", which does not fit '" + inputs[0]->name +
                                     "' " + dims_str(inputs[0]->shape) + " packed into '" + target + "' along axis " +
                                     std::to_string(c->axis));
        if (parts[i].dtype != first.dtype && !(is_float(parts[i].dtype) && is_float(first.dtype)))
          throw fail(*inputs[i], "has dtype " + dtype_name(parts[i].dtype) + ", expected " + dtype_name(first.dtype) +
                                     " as '" + inputs[0]->name + "' it is packed with");
        total += parts[i].shape[axis];
      }
      first.shape[axis] = total;
      live = 1;
    } else if (const auto* c = std::get_if<Cast>(&step)) {
      for (size_t i = 0; i < live; ++i) {
        if (parts[i].dtype != c->dtype && !(is_float(parts[i].dtype) && is_float(c->dtype)))
          throw fail(*inputs[i], "has dtype " + dtype_name(parts[i].dtype) + ", expected " +
                                     (is_float(c->dtype) ? std::string("a float tensor") : dtype_name(c->dtype)));
        parts[i].dtype = c->dtype;
      }
    } else if (const auto* q = std::get_if<BlockQuantize>(&step)) {
      MOBIUS_ASSERT(live == 1, "transformed_type: parts quantized without a Concat");
      const std::vector<int64_t>& m = parts[0].shape;  // the matrix [N, K]
      if (m.size() != 2)
        throw fail(*inputs[0], "has shape " + dims_str(inputs[0]->shape) + ", expected a matrix to quantize into '" +
                                   target + "'");
      if (!is_float(parts[0].dtype))
        throw fail(*inputs[0], "has dtype " + dtype_name(parts[0].dtype) + ", expected a float tensor to quantize");
      const int64_t n = m[0], k = m[1];
      const BlockQuantization& s = q->scheme;
      using Part = BlockQuantize::Part;
      std::vector<int64_t> shape;
      switch (q->part) {
        case Part::data:
          shape = q->flat_data && k % s.block_size == 0 ? std::vector<int64_t>{n, k * s.bits / 8}
                                                        : std::vector<int64_t>{n, quant_k_blocks(k, s), quant_blob_size(s)};
          break;
        case Part::scales: shape = {n, quant_k_blocks(k, s)}; break;
        case Part::zero_points: shape = {n, quant_zero_point_bytes(k, s)}; break;
      }
      parts[0] = {shape, q->part == Part::scales ? parts[0].dtype : DataType::UINT8};
    }
  }
  MOBIUS_ASSERT(live == 1, "transformed_type: further inputs without a Concat");
  return parts[0];
}

}  // namespace mobius
