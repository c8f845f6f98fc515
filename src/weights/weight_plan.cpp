#include "weights/weight_plan.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "util/error.h"
#include "util/input_files.h"
#include "weights/convert.h"
#include "weights/quantize.h"

namespace mobius {

std::vector<std::string> nearest_names(const std::string& name, const std::vector<std::string>& candidates,
                                       size_t n, size_t max_distance) {
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
  for (size_t i = 0; i < std::min(n, scored.size()) && scored[i].first <= max_distance; ++i)
    out.push_back(scored[i].second);
  return out;
}

namespace {

// A quantized weight's parts, and those of a Concat along the rows, are stacked along its rows
// (N): calls fn(part, local_begin, local_end, rows_before) for each part that rows [row_begin,
// row_end) overlap, rows_before being the rows of the range that precede the part's.
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

// The last dim of `t` in the output (after the transpose).
int64_t last_dim(const TensorInfo& t, bool transpose) {
  if (t.shape.empty()) return 1;
  return transpose && t.shape.size() >= 2 ? t.shape[t.shape.size() - 2] : t.shape.back();
}

// Whether the parts of `list` are stacked along the output's rows: a quantized matrix, or a
// Concat along the rows of matrices.
bool stacked(const WeightTransforms& list) {
  const Concat* c = concat_of(list);
  return quantize_of(list) || (c && c->axis == -2);
}

// The dtype a quantized weight's source rows are quantized from: the Cast's, else the source's.
DataType quantized_from(const WeightTransforms& list, const TensorInfo& source) {
  const Cast* c = cast_of(list);
  return c ? c->dtype : source.dtype;
}

}  // namespace

std::vector<const Initializer*> WeightBinding::outputs() const {
  std::vector<const Initializer*> all{init};
  all.insert(all.end(), siblings.begin(), siblings.end());
  return all;
}

int64_t WeightBinding::rows() const {
  const WeightTransforms& list = init->weight->transforms;
  const bool transpose = transposes(list);
  int64_t n = output_rows(source->shape, transpose);
  if (stacked(list))
    for (const TensorInfo* t : concat) n += output_rows(t->shape, transpose);
  return n;
}

int64_t WeightBinding::scratch_row_bytes() const {
  const WeightTransforms& list = init->weight->transforms;
  if (!quantize_of(list)) return 0;
  const int64_t k = quantized_k(*source, transposes(list));
  return k * static_cast<int64_t>(4 + dtype_size(quantized_from(list, *source)));
}

bool WeightBinding::streams() const {
  bool all = checkpoint->streams(*source);
  for (const TensorInfo* t : concat) all = all && checkpoint->streams(*t);
  return all;
}

bool written_in_tiles(const WeightTransforms& list, const Checkpoint& ckpt, std::span<const TensorInfo* const> sources,
                      uint64_t above) {
  if (!transposes(list) || stacked(list) || sources.empty()) return false;
  uint64_t bytes = 0;
  for (const TensorInfo* t : sources) {
    if (!ckpt.tiles(*t)) return false;
    uint64_t n = dtype_size(t->dtype);
    for (int64_t d : t->shape) n *= static_cast<uint64_t>(d);
    bytes += n;
  }
  return bytes > above;
}

bool WeightBinding::tiles(uint64_t above) const {
  std::vector<const TensorInfo*> sources = {source};
  sources.insert(sources.end(), concat.begin(), concat.end());
  return written_in_tiles(init->weight->transforms, *checkpoint, sources, above);
}

uint64_t WeightBinding::source_bytes() const {
  auto bytes = [](const TensorInfo& t) {
    uint64_t n = dtype_size(t.dtype);
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    return n;
  };
  uint64_t n = bytes(*source);
  for (const TensorInfo* t : concat) n += bytes(*t);
  return n;
}

namespace {

// Calls fn(part, local_begin, local_end, columns_before) for each part of a tiled weight (its
// Concat along the last axis: each part's output columns are its source rows) that columns
// [col_begin, col_end) overlap, columns_before being those of the range that precede the part's.
template <typename Fn>
void for_column_parts(const TensorInfo* source, const std::vector<const TensorInfo*>& concat, int64_t col_begin,
                      int64_t col_end, Fn fn) {
  int64_t start = 0;
  auto visit = [&](const TensorInfo& t) {
    const int64_t n = t.shape[0];
    const int64_t b = std::max(col_begin, start), e = std::min(col_end, start + n);
    if (b < e) fn(t, b - start, e - start, b - col_begin);
    start += n;
  };
  visit(*source);
  for (const TensorInfo* t : concat) visit(*t);
}

}  // namespace

void WeightBinding::produce_tile(int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end,
                                 std::span<uint8_t> out) const {
  MOBIUS_ASSERT(tiles(), "WeightBinding::produce_tile: the weight does not tile");
  const DataType dt = init->value->dtype;
  const size_t es = dtype_size(dt), rows = static_cast<size_t>(row_end - row_begin);
  const size_t width = static_cast<size_t>(col_end - col_begin) * es;  // bytes of a tile row
  MOBIUS_ASSERT(out.size() == rows * width, "WeightBinding::produce_tile: output size");
  if (concat.empty()) return checkpoint->produce_tile(*source, dt, row_begin, row_end, col_begin, col_end, out);
  std::vector<uint8_t> part;
  for_column_parts(source, concat, col_begin, col_end, [&](const TensorInfo& t, int64_t b, int64_t e, int64_t before) {
    const size_t w = static_cast<size_t>(e - b) * es;
    part.resize(rows * w);
    checkpoint->produce_tile(t, dt, row_begin, row_end, b, e, part);
    for (size_t r = 0; r < rows; ++r)
      std::memcpy(out.data() + r * width + static_cast<size_t>(before) * es, part.data() + r * w, w);
  });
}

void WeightBinding::release_columns(int64_t col_begin, int64_t col_end) const {
  for_column_parts(source, concat, col_begin, col_end, [&](const TensorInfo& t, int64_t b, int64_t e, int64_t) {
    checkpoint->release(t, false, b, e);
  });
}

bool WeightBinding::reads_columns() const { return transposes(init->weight->transforms); }

void WeightBinding::release(int64_t row_begin, int64_t row_end) const {
  const WeightTransforms& list = init->weight->transforms;
  const bool transpose = transposes(list);
  if (stacked(list)) {
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
  const WeightTransforms& list = init->weight->transforms;
  const bool transpose = transposes(list);
  std::vector<const TensorInfo*> parts{source};
  parts.insert(parts.end(), concat.begin(), concat.end());
  if (const BlockQuantize* q = quantize_of(list)) {
    const DataType from = quantized_from(list, *source);
    const bool stored = q->scheme.from_checkpoint;
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
      values.resize(stored ? 0 : count);  // stored blocks are copied, not computed
      if (stored) {
      } else if (from == DataType::FLOAT) {
        checkpoint->produce(t, DataType::FLOAT, transpose, b, e,
                            {reinterpret_cast<uint8_t*>(values.data()), count * sizeof(float)});
      } else {  // FLOAT16: round to the build dtype first, as the float build would
        raw.resize(count * dtype_size(from));
        checkpoint->produce(t, from, transpose, b, e, raw);
        convert_kernel(from, DataType::FLOAT, best_isa())(raw.data(), reinterpret_cast<uint8_t*>(values.data()), count);
      }
      // the first output of each part is quantized into, a further one of that part copied
      uint8_t* first[3] = {};
      std::vector<std::pair<size_t, uint8_t*>> copies;  // (output, its first of the part)
      for (size_t i = 0; i < region.size(); ++i) {
        uint8_t*& f = first[static_cast<int>(quantize_of(outs[i]->weight->transforms)->part)];
        uint8_t* dst = region[i] + before * row_bytes[i];
        if (f) copies.emplace_back(i, f);
        else f = dst;
      }
      using Part = BlockQuantize::Part;
      uint8_t* data = first[static_cast<int>(Part::data)];
      uint8_t* scales = first[static_cast<int>(Part::scales)];
      uint8_t* zero_points = first[static_cast<int>(Part::zero_points)];
      if (stored)
        checkpoint->produce_stored(t, b, e, from, data, scales, zero_points);
      else
        block_quantize_rows(values.data(), e - b, k, q->scheme, from, data, scales, zero_points);
      for (auto [i, from_bytes] : copies)
        std::memcpy(region[i] + before * row_bytes[i], from_bytes, static_cast<size_t>((e - b) * row_bytes[i]));
    });
    return;
  }
  if (concat.empty()) {
    checkpoint->produce(*source, dt, transpose, row_begin, row_end, out);
    return;
  }
  const size_t es = dtype_size(dt);
  const size_t row_bytes = static_cast<size_t>(init->value->shape->back().value) * es;
  if (stacked(list)) {  // a Concat along the rows: each part's range in place
    for_stacked_parts(parts, transpose, row_begin, row_end, [&](const TensorInfo& t, int64_t b, int64_t e, int64_t before) {
      checkpoint->produce(t, dt, transpose, b, e,
                          out.subspan(static_cast<size_t>(before) * row_bytes, static_cast<size_t>(e - b) * row_bytes));
    });
    return;
  }
  const size_t rows = static_cast<size_t>(row_end - row_begin);
  std::vector<uint8_t> buffer;
  size_t offset = 0;  // bytes into each output row
  for (const TensorInfo* t : parts) {
    const size_t part_row = static_cast<size_t>(last_dim(*t, transpose)) * es;
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

namespace {

// The forms the streamer takes (WeightBinding): the canonical order, a Concat along the rows only
// of matrices, a quantized weight's parts only stacked. Passes build no other (append keeps the
// order); an initializer made otherwise is an internal error.
void check_streamable(const Initializer& init, const std::vector<const TensorInfo*>& parts) {
  const WeightTransforms& list = init.weight->transforms;
  for (size_t i = 1; i < list.size(); ++i)
    MOBIUS_ASSERT(list[i - 1].index() < list[i].index(),
                  "weight '" + init.value->name + "': transforms out of their canonical order: " + to_string(list));
  if (const Concat* c = concat_of(list)) {
    MOBIUS_ASSERT(c->axis == -1 || c->axis == -2, "weight '" + init.value->name + "': Concat axis " + std::to_string(c->axis));
    if (c->axis == -2)
      for (const TensorInfo* t : parts)
        MOBIUS_ASSERT(t->shape.size() == 2, "weight '" + init.value->name + "': a Concat along the rows of a non-matrix");
    MOBIUS_ASSERT(!quantize_of(list) || c->axis == -2,
                  "weight '" + init.value->name + "': a quantized Concat along the last axis");
  }
}

// What a quantized initializer is made from: its source tensors and transforms but which part of
// the quantization it is and the layout of its data. Initializers that agree on it share a binding.
std::string quantized_source(const WeightRef& ref) {
  WeightTransforms list = ref.transforms;
  BlockQuantize& q = std::get<BlockQuantize>(list.back());
  q.part = BlockQuantize::Part::data;
  q.flat_data = false;
  return ref.source_key + "\n" + to_string(list);
}

}  // namespace

std::vector<std::string> legacy_keys(const std::string& key) {
  static const std::pair<std::string, std::string> renames[] = {
      {".parametrizations.weight.original0", ".weight_g"}, {".parametrizations.weight.original1", ".weight_v"},
      {"LayerNorm.weight", "LayerNorm.gamma"}, {"LayerNorm.bias", "LayerNorm.beta"}};
  for (const auto& [now, old] : renames)
    if (key.ends_with(now)) return {key.substr(0, key.size() - now.size()) + old};
  // Kimi Linear's dense MLP layers: transformers 5's save_pretrained writes them under block_sparse_moe
  // (the reverse of conversion_mapping.py's "kimi_linear" rename block_sparse_moe -> mlp, which
  // matches every layer), the released checkpoints under mlp
  static const std::string moe = ".block_sparse_moe.";
  for (const char* proj : {"gate_proj.weight", "up_proj.weight", "down_proj.weight"})
    if (key.ends_with(moe + proj)) return {key.substr(0, key.size() - moe.size() - std::strlen(proj)) + ".mlp." + proj};
  // ESM's rotary inv_freq, one per attention layer in older checkpoints (EsmModel.load_hook takes the
  // first in sorted order) and under conversion_mapping.py's wildcard name in transformers 5's saves
  static const std::string inv_freq = "rotary_embeddings.inv_freq";
  if (key.ends_with(inv_freq) && (key.size() == inv_freq.size() || key[key.size() - inv_freq.size() - 1] == '.')) {
    const std::string prefix = key.substr(0, key.size() - inv_freq.size());
    return {prefix + "encoder.layer.*.attention.self." + inv_freq, prefix + "encoder.layer.0.attention.self." + inv_freq};
  }
  // CLIPTextModel / CLIPVisionModel at the checkpoint's root (transformers 5's save): transformers 4's
  // saves and the Hub's checkpoints (a Stable Diffusion text_encoder) hold the tower under
  // text_model. / vision_model. (conversion_mapping.py's PrefixChange(prefix_to_remove=...))
  bool clip_tower = false;
  for (const char* root : {"embeddings.token_embedding.", "embeddings.position_embedding.", "embeddings.patch_embedding.",
                           "embeddings.class_embedding", "final_layer_norm.", "pre_layrnorm.", "post_layernorm."})
    clip_tower = clip_tower || key.starts_with(root);
  if (key.starts_with("encoder.layers."))
    for (const char* part : {".self_attn.", ".layer_norm1.", ".layer_norm2.", ".mlp.fc1.", ".mlp.fc2."})
      clip_tower = clip_tower || key.find(part) != std::string::npos;
  if (clip_tower) return {"text_model." + key, "vision_model." + key};
  return {};
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
    for (const std::string& old : legacy_keys(key)) {
      if (t) break;
      if ((t = ckpt.find(old))) found = old;
    }
    if (!t) {
      std::string msg = "missing tensor '" + escaped(key) + "' in the checkpoint";
      auto near = nearest_names(key, ckpt.names());
      if (!near.empty()) {
        msg += " (nearest:";
        for (const auto& n : near) msg += " " + escaped(n);  // names from the file: a NUL must not cut the line
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
    const WeightTransforms& list = ref.transforms;
    std::vector<int64_t> want;
    for (const Dim& d : *init.value->shape) want.push_back(d.value);
    std::vector<const TensorInfo*> parts{lookup(ref.source_key)};
    const Concat* concat = concat_of(list);
    if (concat)
      for (const auto& key : concat->keys) parts.push_back(lookup(key));
    check_streamable(init, parts);
    const TensorType got = transformed_type(parts, list, init.value->name);
    const TensorInfo& first = *parts[0];
    if (const BlockQuantize* q = quantize_of(list)) {
      if (q->scheme.from_checkpoint)
        for (const TensorInfo* t : parts)
          if (transposes(list) || ckpt.stored_quantization(*t) != q->scheme)
            throw Error(*t->file + ": tensor '" + t->name + "' is not stored in the quantization that '" +
                        init.value->name + "' keeps");
      if (got.shape != want)
        throw Error(*first.file + ": tensor '" + first.name + "' quantizes to " + dims_str(got.shape) + ", expected " +
                    shape_str(*init.value->shape) + " for '" + init.value->name + "'");
      auto [it, fresh] = quantized.emplace(quantized_source(ref), plan.bindings_.size());
      if (fresh)
        plan.bindings_.push_back({&init, parts[0], &ckpt, {parts.begin() + 1, parts.end()}});
      else
        plan.bindings_[it->second].siblings.push_back(&init);
      continue;
    }
    if (got.shape != want) {
      const size_t axis = concat && want.size() == got.shape.size() ? want.size() - static_cast<size_t>(-concat->axis) : 0;
      std::vector<int64_t> rest = got.shape, rest_want = want;
      if (concat && rest.size() == rest_want.size()) rest[axis] = rest_want[axis] = 0;
      if (concat && rest == rest_want)  // the parts fit but do not add up along the axis
        throw Error(*first.file + ": tensors packed into '" + init.value->name + "' have " +
                    std::to_string(got.shape[axis]) + (concat->axis == -1 ? " columns" : " rows") + ", expected " +
                    std::to_string(want[axis]));
      if (concat)
        throw Error(*first.file + ": tensor '" + first.name + "' has shape " + dims_str(first.shape) +
                    ", which packed with others along axis " + std::to_string(concat->axis) + " makes " +
                    dims_str(got.shape) + ", expected " + dims_str(want) + " for '" + init.value->name + "'");
      // the shape the source would need: the initializer's through the transpose back
      std::vector<int64_t> expected = want;
      if (transposes(list) && expected.size() >= 2) std::swap(expected[expected.size() - 2], expected.back());
      throw Error(*first.file + ": tensor '" + first.name + "' has shape " + dims_str(first.shape) + ", expected " +
                  dims_str(expected));
    }
    if (got.dtype != init.value->dtype)
      throw Error(*first.file + ": tensor '" + first.name + "' makes dtype " + dtype_name(got.dtype) + " through " +
                  to_string(list) + ", expected " + dtype_name(init.value->dtype) + " for '" + init.value->name + "'");
    plan.bindings_.push_back({&init, parts[0], &ckpt, {parts.begin() + 1, parts.end()}});
  }
  for (const auto& name : ckpt.names())
    if (!used.count(name)) plan.unused_.push_back(name);
  return plan;
}

std::optional<BlockQuantization> stored_quantization(const Checkpoint& checkpoint, const WeightRef& ref) {
  if (transposes(ref.transforms)) return std::nullopt;
  std::optional<BlockQuantization> q;
  std::vector<std::string> keys{ref.source_key};
  if (const Concat* c = concat_of(ref.transforms)) keys.insert(keys.end(), c->keys.begin(), c->keys.end());
  for (const std::string& key : keys) {
    const TensorInfo* t = checkpoint.find(key);
    std::optional<BlockQuantization> part = t ? checkpoint.stored_quantization(*t) : std::nullopt;
    if (!part || (q && *q != *part)) return std::nullopt;
    q = part;
  }
  return q;
}

}  // namespace mobius
