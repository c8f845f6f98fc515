#include "weights/lora.h"

#include <cmath>
#include <limits>
#include <filesystem>
#include <map>

#include "util/error.h"
#include "util/input_files.h"
#include "util/linear_regex.h"
#include "weights/convert.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace mobius {

namespace fs = std::filesystem;

namespace {

// Limits on adapter_config.json: ranks and alphas far above any trained adapter's (r <= 1024,
// alpha a small multiple of r); a pattern per module of the largest models.
constexpr int64_t kMaxRank = kMaxHiddenSize;
constexpr double kMaxAlpha = 1e6;
constexpr size_t kMaxPatterns = 65536;

// The adapter_config.json fields the merge reads (peft LoraConfig), checked.
struct LoraConfig {
  std::string file;
  int64_t r = 0;
  double alpha = 0;
  bool rslora = false;
  bool fan_in_fan_out = false;
  // peft's keys compiled as peft matches them, `(.*\.)?(key)$` from the start of the module name
  // (util/linear_regex.h: linear time whatever the key), in the file's order.
  std::vector<std::pair<LinearRegex, int64_t>> rank_pattern;
  std::vector<std::pair<LinearRegex, double>> alpha_pattern;

  // peft get_pattern_key: the value of the first pattern that matches the module name.
  template <typename T>
  static T pick(const std::vector<std::pair<LinearRegex, T>>& patterns, const std::string& module, T fallback) {
    for (const auto& [pattern, value] : patterns)
      if (pattern.full_match(module)) return value;
    return fallback;
  }
};

// A rank_pattern / alpha_pattern key as peft matches it: re.match(rf"(.*\.)?({key})$", module).
// The key alone must be a pattern (so that it cannot close peft's group and open another).
LinearRegex module_pattern(const std::string& key) {
  LinearRegex alone(key);
  return LinearRegex("(.*\\.)?(" + key + ")");
}

LoraConfig read_config(const std::string& path, const HfConfig& model_config) {
  const nlohmann::json j = read_json_file(path, kMaxConfigBytes);
  auto fail = [&](const std::string& field, const std::string& what) -> void {
    throw Error(path + ": field '" + field + "': " + what);
  };
  if (!j.is_object()) fail("", "expected a JSON object (a PEFT adapter_config.json)");
  auto value = [&](const char* field) -> const nlohmann::json* {
    auto it = j.find(field);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  };
  auto flag = [&](const char* field) {
    const nlohmann::json* v = value(field);
    if (v && !v->is_boolean()) fail(field, "expected true or false");
    return v && v->get<bool>();
  };
  const nlohmann::json* type = value("peft_type");
  if (!type || !type->is_string() || type->get<std::string>() != "LORA")
    fail("peft_type", "expected \"LORA\": mobius merges LoRA adapters only");
  if (flag("use_dora"))
    fail("use_dora", "DoRA adapters are not supported (their merge rescales each output row by the norm of the whole "
                     "merged row): merge it with peft (merge_and_unload) and build the merged checkpoint");
  if (flag("lora_bias")) fail("lora_bias", "LoRA with a bias on B is not supported");
  for (const char* field : {"modules_to_save", "trainable_token_indices"}) {
    const nlohmann::json* v = value(field);
    if (v && !(v->is_array() && v->empty()) && !(v->is_object() && v->empty()))
      fail(field, "whole trained modules or tokens are not supported (LoRA A/B only): merge it with peft "
                  "(merge_and_unload) and build the merged checkpoint");
  }
  LoraConfig c;
  c.file = path;
  const nlohmann::json* r = value("r");
  if (!r || !r->is_number_integer() || r->get<int64_t>() <= 0 || r->get<int64_t>() > kMaxRank)
    fail("r", "expected an integer in [1, " + std::to_string(kMaxRank) + "]");
  c.r = r->get<int64_t>();
  const nlohmann::json* alpha = value("lora_alpha");
  if (!alpha || !alpha->is_number() || !std::isfinite(alpha->get<double>()) || std::abs(alpha->get<double>()) > kMaxAlpha)
    fail("lora_alpha", "expected a number in [-1e6, 1e6] (peft's default is 8; the merge scales by alpha / r)");
  c.alpha = alpha->get<double>();
  c.rslora = flag("use_rslora");
  c.fan_in_fan_out = flag("fan_in_fan_out");
  for (const char* field : {"rank_pattern", "alpha_pattern"}) {
    const nlohmann::json* v = value(field);
    if (!v) continue;
    if (!v->is_object()) fail(field, "expected an object {module pattern: value}");
    if (v->size() > kMaxPatterns)
      fail(field, "more than " + std::to_string(kMaxPatterns) + " patterns (peft writes one per module at most)");
    for (const auto& [pattern, x] : v->items()) {
      const bool rank = std::string(field) == "rank_pattern";
      const std::string key = std::string(field) + "." + escaped(pattern);
      if (rank ? !x.is_number_integer() || x.get<int64_t>() <= 0 || x.get<int64_t>() > kMaxRank
               : !x.is_number() || !std::isfinite(x.get<double>()) || std::abs(x.get<double>()) > kMaxAlpha)
        fail(key, rank ? "expected an integer in [1, " + std::to_string(kMaxRank) + "]"
                       : "expected a number in [-1e6, 1e6]");
      LinearRegex re = with_context(path + ": field '" + std::string(field) + "'",
                                    [&] { return module_pattern(pattern); });
      if (rank) c.rank_pattern.emplace_back(std::move(re), x.get<int64_t>());
      else c.alpha_pattern.emplace_back(std::move(re), x.get<double>());
    }
  }
  // The class the adapter was trained on, against the checkpoint's architectures.
  const nlohmann::json* mapping = value("auto_mapping");
  const nlohmann::json* archs = model_config.json().contains("architectures") ? &model_config.json()["architectures"] : nullptr;
  if (mapping && mapping->is_object() && mapping->contains("base_model_class") && archs && archs->is_array() &&
      !archs->empty()) {
    const nlohmann::json& cls = (*mapping)["base_model_class"];
    bool found = false;
    for (const auto& a : *archs) found = found || a == cls;
    if (cls.is_string() && !found)
      fail("auto_mapping.base_model_class", "the adapter was trained on '" + escaped(cls.get<std::string>()) +
                                                "', but " + model_config.file() + " is a '" +
                                                escaped((*archs)[0].is_string() ? (*archs)[0].get<std::string>() : "") +
                                                "': use the adapter's base model");
  }
  return c;
}

}  // namespace

LoraAdapter::LoraAdapter(const std::string& dir, const Checkpoint& base, const HfConfig& model_config) : dir_(dir) {
  if (!fs::is_directory(dir)) throw Error(dir + ": not a directory (a LoRA adapter is a PEFT adapter directory)");
  const fs::path config_path = checkpoint_file(dir, "adapter_config.json");
  if (!fs::exists(config_path))
    throw Error(config_path.string() + ": no such file (a LoRA adapter is a PEFT adapter directory: adapter_config.json and "
                                       "adapter_model.safetensors, as peft's save_pretrained writes them)");
  const LoraConfig config = read_config(config_path.string(), model_config);
  const fs::path weights_path = checkpoint_file(dir, "adapter_model.safetensors");
  if (!fs::exists(weights_path))
    throw Error(weights_path.string() + ": no such file" +
                (fs::exists(fs::path(dir) / "adapter_model.bin")
                     ? std::string(" (only adapter_model.bin, a pickle, which mobius never reads: save the adapter "
                                   "with safe_serialization=True)")
                     : std::string(" (the adapter's weights, as peft's save_pretrained writes them)")));
  file_ = std::make_unique<SafetensorsFile>(weights_path.string());
  const std::string& file = file_->path();
  std::map<std::string, LoraModule> modules;
  for (const auto& [name, view] : file_->tensors()) {
    // base_model.model.<module>.lora_A.weight or .lora_B.weight, <module> not empty.
    static const std::string prefix = "base_model.model.", a = ".lora_A.weight", b = ".lora_B.weight";
    const bool is_a = name.ends_with(a), is_b = name.ends_with(b);
    if (!name.starts_with(prefix) || !(is_a || is_b) || name.size() <= prefix.size() + a.size()) {
      const bool embedding = name.find("lora_embedding_") != std::string::npos;
      throw Error(file + ": tensor '" + escaped(name) + "': " +
                  (embedding ? "LoRA on an embedding is not supported (LoRA on nn.Linear weights only)"
                             : "not a LoRA weight (expected base_model.model.<module>.lora_A.weight or lora_B.weight)"));
    }
    const std::string module = name.substr(prefix.size(), name.size() - prefix.size() - a.size());
    LoraModule& lm = modules[module];
    lm.module = module;
    (is_a ? lm.a : lm.b) = &view;
  }
  if (modules.empty()) throw Error(file + ": no LoRA weights (lora_A / lora_B tensors)");
  for (auto& [module, pair] : modules) {  // sorted by name
    const std::string weight = module + ".weight";
    if (!pair.a || !pair.b)
      throw Error(file + ": tensor 'base_model.model." + escaped(module) + ".lora_" + (pair.a ? "B" : "A") +
                  ".weight' is missing (its lora_" + (pair.a ? "A" : "B") + " is there)");
    const TensorInfo* w = base.find(weight);
    if (!w)
      throw Error(file + ": the adapter targets module '" + escaped(module) + "', which the model does not have (no "
                  "tensor '" + escaped(weight) + "' in the checkpoint): the adapter is for another base model");
    for (const TensorView* t : {pair.a, pair.b})
      if (t->shape.size() != 2 || !is_float(t->dtype))
        throw Error(file + ": tensor '" + escaped(t->name) + "': expected a float matrix, got " +
                    dtype_name(t->dtype) + " " + dims_str(t->shape));
    if (w->shape.size() != 2)
      throw Error(file + ": the adapter targets '" + escaped(weight) + "' of shape " + dims_str(w->shape) +
                  ", not a Linear weight matrix");
    const int64_t rank = pair.a->shape[0];
    const int64_t out = w->shape[config.fan_in_fan_out ? 1 : 0], in = w->shape[config.fan_in_fan_out ? 0 : 1];
    if (pair.a->shape[1] != in || pair.b->shape[0] != out || pair.b->shape[1] != rank)
      throw Error(file + ": LoRA tensors of '" + escaped(module) + "' have shapes A " + dims_str(pair.a->shape) +
                  " and B " + dims_str(pair.b->shape) + ", but its weight " + dims_str(w->shape) + " needs A [r, " +
                  std::to_string(in) + "] and B [" + std::to_string(out) +
                  ", r]: the adapter is for another base model");
    const int64_t r = config.pick(config.rank_pattern, module, config.r);
    if (rank != r)
      throw Error(file + ": LoRA tensors of '" + escaped(module) + "' have rank " + std::to_string(rank) + ", but " +
                  config.file + " gives it r = " + std::to_string(r) + " (field 'r' or 'rank_pattern')");
    const double alpha = config.pick(config.alpha_pattern, module, config.alpha);
    pair.scale = static_cast<float>(config.rslora ? alpha / std::sqrt(static_cast<double>(r)) : alpha / r);
    pair.weight = w;
    modules_.push_back(pair);
  }
  fan_in_fan_out_ = config.fan_in_fan_out;
}

namespace {

class LoraCheckpoint : public Checkpoint {
 public:
  LoraCheckpoint(const std::string& dir, std::unique_ptr<Checkpoint> base, const HfConfig& config)
      : base_(std::move(base)), adapter_(dir, *base_, config) {
    for (const LoraModule& m : adapter_.modules()) modules_[m.weight] = &m;
  }

  const TensorInfo* find(const std::string& name) const override { return base_->find(name); }
  std::vector<std::string> names() const override { return base_->names(); }
  bool streams(const TensorInfo& t) const override { return base_->streams(t); }
  void release(const TensorInfo& t, bool transpose, int64_t row_begin, int64_t row_end) const override {
    base_->release(t, transpose, row_begin, row_end);
  }
  std::optional<BlockQuantization> stored_quantization(const TensorInfo& t) const override {
    return modules_.count(&t) ? std::nullopt : base_->stored_quantization(t);
  }
  void produce_stored(const TensorInfo& t, int64_t b, int64_t e, DataType d, uint8_t* data, uint8_t* scales,
                      uint8_t* zero_points) const override {
    base_->produce_stored(t, b, e, d, data, scales, zero_points);
  }

  // Output rows [row_begin, row_end) of W' viewed as [rows, cols] (transposed or not):
  //   out[i, :] += scale * sum_k left[i, k] * right[k, :]
  // where, with the output row i and column c, W'[i, c] takes (B @ A)[i, c] when the output is
  // laid out as B @ A is (transpose == fan_in_fan_out): left = rows of B, right = A; and
  // (B @ A)[c, i] otherwise: left = rows of A^T, right = B^T.
  void produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin, int64_t row_end,
               std::span<uint8_t> out) const override {
    auto it = modules_.find(&t);
    if (it == modules_.end()) return base_->produce(t, dst, transpose, row_begin, row_end, out);
    const LoraModule& p = *it->second;
    const int64_t n = row_end - row_begin, cols = transpose ? t.shape[0] : t.shape[1], rank = p.a->shape[0];
    std::vector<float> merged(dst == DataType::FLOAT ? 0 : static_cast<size_t>(n * cols));  // else `out` is float32
    std::span<uint8_t> merged_bytes(reinterpret_cast<uint8_t*>(merged.data()), merged.size() * sizeof(float));
    base_->produce(t, DataType::FLOAT, transpose, row_begin, row_end, dst == DataType::FLOAT ? out : merged_bytes);
    float* w = dst == DataType::FLOAT ? reinterpret_cast<float*>(out.data()) : merged.data();
    const bool direct = transpose == adapter_.fan_in_fan_out();
    std::vector<float> left(static_cast<size_t>(n * rank)), right(static_cast<size_t>(rank * cols));
    convert_rows(direct ? *p.b : *p.a, DataType::FLOAT, !direct, row_begin, row_end,
                 {reinterpret_cast<uint8_t*>(left.data()), left.size() * sizeof(float)});
    convert_tensor(direct ? *p.a : *p.b, DataType::FLOAT, !direct,
                   {reinterpret_cast<uint8_t*>(right.data()), right.size() * sizeof(float)});
    for (int64_t i = 0; i < n; ++i) {
      float* row = w + i * cols;
      for (int64_t k = 0; k < rank; ++k) {
        const float s = p.scale * left[static_cast<size_t>(i * rank + k)];
        const float* r = right.data() + k * cols;
        for (int64_t c = 0; c < cols; ++c) row[c] += s * r[c];
      }
    }
    // The merge must not poison the package: a large alpha / r or adapter values can take the
    // weight past float32, or past float16 when that is the output dtype.
    const float limit = dst == DataType::FLOAT16 ? 65504.0f : std::numeric_limits<float>::max();
    for (int64_t i = 0; i < n * cols; ++i)
      if (!(std::abs(w[i]) <= limit))
        throw Error(adapter_.file() + ": merging the adapter into '" + escaped(t.name) + "' gives " +
                    (std::isfinite(w[i]) ? "values beyond float16" : "non-finite values (inf or NaN)") +
                    " (scale lora_alpha / r = " + std::to_string(p.scale) + "): the adapter does not fit this model");
    if (dst != DataType::FLOAT)
      convert_kernel(DataType::FLOAT, dst, best_isa())(reinterpret_cast<const uint8_t*>(merged.data()), out.data(),
                                                         merged.size());
  }

 private:
  std::unique_ptr<Checkpoint> base_;
  LoraAdapter adapter_;
  std::map<const TensorInfo*, const LoraModule*> modules_;  // the base's tensor -> its adapter
};

}  // namespace

std::unique_ptr<Checkpoint> merge_lora(const std::string& adapter_dir, std::unique_ptr<Checkpoint> base,
                                       const HfConfig& config) {
  return std::make_unique<LoraCheckpoint>(adapter_dir, std::move(base), config);
}

}  // namespace mobius
