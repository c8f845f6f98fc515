#include "weights/weight_plan.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "util/error.h"
#include "weights/convert.h"
#include "weights/quantize.h"

namespace mobius {

std::vector<std::string> nearest_names(const std::string& name,
                                       const std::vector<std::string>& candidates, size_t n) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& c : candidates) scored.emplace_back(distance(name, c), c);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < std::min(n, scored.size()); ++i) out.push_back(scored[i].second);
  return out;
}

namespace {

// The shape a checkpoint tensor takes in the graph (last two axes swapped with `transpose`).
std::vector<int64_t> graph_shape(const TensorInfo& t, bool transpose) {
  std::vector<int64_t> s = t.shape;
  if (transpose && s.size() >= 2) std::swap(s[s.size() - 2], s[s.size() - 1]);
  return s;
}

}  // namespace

namespace {

// A quantized weight's parts are stacked along its rows (N): calls fn(part, local_begin,
// local_end, rows_before) for each part that rows [row_begin, row_end) overlap, rows_before being
// the rows of the range that precede the part's.
template <typename Fn>
void for_stacked_parts(const std::vector<const TensorInfo*>& parts, bool transpose, int64_t row_begin,
                       int64_t row_end, Fn fn) {
  int64_t start = 0;  // first row of the part
  for (const TensorInfo* t : parts) {
    const int64_t n = output_rows(t->shape, transpose);
    const int64_t b = std::max(row_begin, start), e = std::min(row_end, start + n);
    if (b < e) fn(*t, b - start, e - start, b - row_begin);
    start += n;
  }
}

// The K of a quantized weight: the last dim of its (transposed) source.
int64_t quantized_k(const TensorInfo& t, bool transpose) {
  return transpose ? t.shape.front() : t.shape.back();
}

}  // namespace

std::vector<const Initializer*> WeightBinding::outputs() const {
  std::vector<const Initializer*> all{init};
  all.insert(all.end(), siblings.begin(), siblings.end());
  return all;
}

int64_t WeightBinding::rows() const {
  const bool transpose = init->weight->transpose;
  int64_t n = output_rows(source->shape, transpose);
  if (init->weight->quantize)
    for (const TensorInfo* t : concat) n += output_rows(t->shape, transpose);
  return n;
}

int64_t WeightBinding::scratch_row_bytes() const {
  if (!init->weight->quantize) return 0;
  const int64_t k = quantized_k(*source, init->weight->transpose);
  return k * static_cast<int64_t>(4 + dtype_size(init->weight->quantize->float_dtype));
}

bool WeightBinding::streams() const {
  bool all = checkpoint->streams(*source);
  for (const TensorInfo* t : concat) all = all && checkpoint->streams(*t);
  return all;
}

void WeightBinding::release(int64_t row_begin, int64_t row_end) const {
  const bool transpose = init->weight->transpose;
  if (init->weight->quantize) {
    std::vector<const TensorInfo*> parts{source};
    parts.insert(parts.end(), concat.begin(), concat.end());
    for_stacked_parts(parts, transpose, row_begin, row_end, [&](const TensorInfo& t, int64_t b, int64_t e, int64_t) {
      checkpoint->release(t, transpose, b, e);
    });
    return;
  }
  checkpoint->release(*source, transpose, row_begin, row_end);
  for (const TensorInfo* t : concat) checkpoint->release(*t, transpose, row_begin, row_end);
}

void WeightBinding::produce(int64_t row_begin, int64_t row_end, std::span<uint8_t> out) const {
  const DataType dt = init->value->dtype;
  const bool transpose = init->weight->transpose;
  if (const auto& q = init->weight->quantize) {
    std::vector<const TensorInfo*> parts{source};
    parts.insert(parts.end(), concat.begin(), concat.end());
    const int64_t k = quantized_k(*source, transpose), n = rows();
    // each output's range in `out`, and its bytes per row
    const std::vector<const Initializer*> outs = outputs();
    std::vector<uint8_t*> region;
    std::vector<int64_t> row_bytes;
    uint8_t* at = out.data();
    for (const Initializer* o : outs) {
      region.push_back(at);
      row_bytes.push_back(static_cast<int64_t>(o->nbytes()) / n);
      at += (row_end - row_begin) * row_bytes.back();
    }
    MOBIUS_ASSERT(at == out.data() + out.size(), "quantized weight: output size mismatch");
    std::vector<uint8_t> raw;
    std::vector<float> values;
    for_stacked_parts(parts, transpose, row_begin, row_end, [&](const TensorInfo& t, int64_t b, int64_t e, int64_t before) {
      const size_t count = static_cast<size_t>((e - b) * k);
      values.resize(q->scheme.from_checkpoint ? 0 : count);  // stored blocks are copied, not computed
      if (q->scheme.from_checkpoint) {
      } else if (q->float_dtype == DataType::FLOAT) {
        checkpoint->produce(t, DataType::FLOAT, transpose, b, e,
                            {reinterpret_cast<uint8_t*>(values.data()), count * sizeof(float)});
      } else {  // FLOAT16: round to the build dtype first, as the float build would
        raw.resize(count * 2);
        checkpoint->produce(t, DataType::FLOAT16, transpose, b, e, raw);
        convert_kernel(DataType::FLOAT16, DataType::FLOAT, best_isa())(raw.data(), reinterpret_cast<uint8_t*>(values.data()), count);
      }
      // the first output of each part is quantized into, a further one of that part copied
      uint8_t* first[3] = {};
      std::vector<std::pair<size_t, uint8_t*>> copies;  // (output, its first of the part)
      for (size_t i = 0; i < region.size(); ++i) {
        uint8_t*& f = first[static_cast<int>(outs[i]->weight->quantize->part)];
        uint8_t* dst = region[i] + before * row_bytes[i];
        if (f) copies.emplace_back(i, f);
        else f = dst;
      }
      using Part = WeightQuantization::Part;
      uint8_t* data = first[static_cast<int>(Part::data)];
      uint8_t* scales = first[static_cast<int>(Part::scales)];
      uint8_t* zero_points = first[static_cast<int>(Part::zero_points)];
      if (q->scheme.from_checkpoint)
        checkpoint->produce_stored(t, b, e, q->float_dtype, data, scales, zero_points);
      else
        block_quantize_rows(values.data(), e - b, k, q->scheme, q->float_dtype, data, scales, zero_points);
      for (auto [i, from] : copies)
        std::memcpy(region[i] + before * row_bytes[i], from, static_cast<size_t>((e - b) * row_bytes[i]));
    });
    return;
  }
  if (concat.empty()) {
    checkpoint->produce(*source, dt, transpose, row_begin, row_end, out);
    return;
  }
  std::vector<const TensorInfo*> parts{source};
  parts.insert(parts.end(), concat.begin(), concat.end());
  const size_t es = dtype_size(dt);
  const size_t row_bytes = static_cast<size_t>(init->value->shape->back().value) * es;
  const size_t rows = static_cast<size_t>(row_end - row_begin);
  std::vector<uint8_t> buffer;
  size_t offset = 0;  // bytes into each output row
  for (const TensorInfo* t : parts) {
    const size_t part_row = static_cast<size_t>(graph_shape(*t, transpose).back()) * es;
    buffer.resize(rows * part_row);
    checkpoint->produce(*t, dt, transpose, row_begin, row_end, buffer);
    for (size_t r = 0; r < rows; ++r)
      std::memcpy(out.data() + r * row_bytes + offset, buffer.data() + r * part_row, part_row);
    offset += part_row;
  }
}

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// A quantized initializer: every part a float matrix [N_i, K] (after the transpose), one K, and
// the quantization of [sum N_i, K] has the initializer's shape.
static void bind_quantized(const Initializer& init, const std::vector<const TensorInfo*>& parts,
                           const Checkpoint& ckpt) {
  const WeightRef& ref = *init.weight;
  int64_t n = 0, k = -1;
  for (const TensorInfo* t : parts) {
    std::vector<int64_t> got = graph_shape(*t, ref.transpose);
    if (got.size() != 2 || (k >= 0 && got[1] != k))
      throw Error(*t->file + ": tensor '" + t->name + "' has shape " + dims_str(t->shape) +
                  ", expected a matrix" + (k >= 0 ? " with " + std::to_string(k) + " input features" : "") +
                  " to quantize into '" + init.value->name + "'");
    if (!is_float(t->dtype))
      throw Error(*t->file + ": tensor '" + t->name + "' has dtype " + dtype_name(t->dtype) +
                  ", expected a float tensor to quantize");
    k = got[1];
    n += got[0];
  }
  const BlockQuantization& q = ref.quantize->scheme;
  if (q.from_checkpoint)
    for (const TensorInfo* t : parts)
      if (ref.transpose || ckpt.stored_quantization(*t) != q)
        throw Error(*t->file + ": tensor '" + t->name + "' is not stored in the quantization that '" +
                    init.value->name + "' keeps");
  const Shape want = quant_shape(ref.quantize->part, n, k, q);
  // GatherBlockQuantized's data: B with a row's blocks as one axis, [N, K * bits / 8]
  const bool rows = ref.quantize->part == WeightQuantization::Part::data && k % q.block_size == 0 &&
                    shape_str(*init.value->shape) == shape_str({n, k * q.bits / 8});
  if (!rows && shape_str(want) != shape_str(*init.value->shape))
    throw Error(*parts[0]->file + ": tensor '" + parts[0]->name + "' quantizes to " + shape_str(want) +
                ", expected " + shape_str(*init.value->shape) + " for '" + init.value->name + "'");
}

// What a quantized initializer is made from: its source tensors, transpose, scheme and float
// dtype. Initializers that agree on it differ only in the part they are, and share a binding.
static std::string quantized_source(const WeightRef& ref) {
  const WeightQuantization& q = *ref.quantize;
  std::string key = ref.source_key;
  for (const auto& c : ref.concat) key += "\n" + c;
  return key + "\n" + std::to_string(ref.transpose) + " " + std::to_string(q.scheme.bits) + " " +
         std::to_string(q.scheme.block_size) + " " + std::to_string(q.scheme.symmetric) + " " +
         std::to_string(q.scheme.from_checkpoint) + " " + dtype_name(q.float_dtype);
}

std::string legacy_key(const std::string& key) {
  static const std::pair<std::string, std::string> renames[] = {
      {".parametrizations.weight.original0", ".weight_g"}, {".parametrizations.weight.original1", ".weight_v"}};
  for (const auto& [now, old] : renames)
    if (key.ends_with(now)) return key.substr(0, key.size() - now.size()) + old;
  return "";
}

size_t WeightPlan::num_initializers() const {
  size_t n = 0;
  for (const WeightBinding& b : bindings_) n += 1 + b.siblings.size();
  return n;
}

WeightPlan WeightPlan::bind(const Graph& graph, const Checkpoint& ckpt) {
  WeightPlan plan;
  std::set<std::string> used;
  std::map<std::string, size_t> quantized;  // quantized_source -> its binding
  auto lookup = [&](const std::string& key) {
    const TensorInfo* t = ckpt.find(key);
    std::string found = key;
    if (!t && !(found = legacy_key(key)).empty()) t = ckpt.find(found);
    if (!t) {
      std::string msg = "missing tensor '" + key + "' in the checkpoint";
      auto near = nearest_names(key, ckpt.names());
      if (!near.empty()) {
        msg += " (nearest:";
        for (const auto& n : near) msg += " " + n;
        msg += ")";
      }
      throw Error(msg);
    }
    used.insert(found);
    return t;
  };
  for (const Initializer& init : graph.initializers) {
    if (!init.weight) continue;
    const WeightRef& ref = *init.weight;
    std::vector<int64_t> want;
    for (const Dim& d : *init.value->shape) want.push_back(d.value);
    std::vector<const TensorInfo*> parts{lookup(ref.source_key)};
    for (const auto& key : ref.concat) parts.push_back(lookup(key));
    if (ref.quantize) {
      bind_quantized(init, parts, ckpt);
      auto [it, first] = quantized.emplace(quantized_source(ref), plan.bindings_.size());
      if (first)
        plan.bindings_.push_back({&init, parts[0], &ckpt, {parts.begin() + 1, parts.end()}});
      else
        plan.bindings_[it->second].siblings.push_back(&init);
      continue;
    }
    int64_t last = 0;  // concatenated: every part fits `want` but in the last axis, which adds up
    for (const TensorInfo* t : parts) {
      std::vector<int64_t> got = graph_shape(*t, ref.transpose);
      if (!ref.concat.empty() && got.size() == want.size() && !got.empty()) {
        last += got.back();
        got.back() = want.back();
      }
      if (got != want) {
        std::vector<int64_t> expected = want;
        if (ref.transpose && expected.size() >= 2) std::swap(expected[expected.size() - 2], expected.back());
        throw Error(*t->file + ": tensor '" + t->name + "' has shape " + dims_str(t->shape) +
                    ", expected " + dims_str(expected) +
                    (ref.concat.empty() ? "" : " (but the last axis: packed with others)"));
      }
      if (t->dtype != init.value->dtype && !(is_float(t->dtype) && is_float(init.value->dtype)))
        throw Error(*t->file + ": tensor '" + t->name + "' has dtype " + dtype_name(t->dtype) +
                    ", expected a float tensor");
    }
    if (!ref.concat.empty() && last != want.back())
      throw Error(*parts[0]->file + ": tensors packed into '" + init.value->name + "' have " +
                  std::to_string(last) + " columns, expected " + std::to_string(want.back()));
    plan.bindings_.push_back({&init, parts[0], &ckpt, {parts.begin() + 1, parts.end()}});
  }
  for (const auto& name : ckpt.names())
    if (!used.count(name)) plan.unused_.push_back(name);
  return plan;
}

std::optional<BlockQuantization> stored_quantization(const Checkpoint& checkpoint, const WeightRef& ref) {
  if (ref.transpose) return std::nullopt;
  std::optional<BlockQuantization> q;
  std::vector<std::string> keys{ref.source_key};
  keys.insert(keys.end(), ref.concat.begin(), ref.concat.end());
  for (const std::string& key : keys) {
    const TensorInfo* t = checkpoint.find(key);
    std::optional<BlockQuantization> part = t ? checkpoint.stored_quantization(*t) : std::nullopt;
    if (!part || (q && *q != *part)) return std::nullopt;
    q = part;
  }
  return q;
}

}  // namespace mobius
