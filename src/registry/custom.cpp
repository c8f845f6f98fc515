#include "registry/custom.h"

#include <algorithm>
#include <cstring>
#include <cctype>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "registry/registry.h"
#include "util/error.h"
#include "util/input_files.h"
#include "util/linear_regex.h"
#include "weights/weight_plan.h"

namespace mobius {

namespace {

std::mutex registry_mutex;
std::map<std::string, CustomType>& custom_types() {
  static std::map<std::string, CustomType> types;
  return types;
}

bool is_builtin(const std::string& model_type) {
  return std::any_of(registry().begin(), registry().end(),
                     [&](const RegistryEntry& e) { return model_type == e.model_type; });
}

class RenamedCheckpoint : public Checkpoint {
 public:
  RenamedCheckpoint(const CustomType& t, std::unique_ptr<Checkpoint> inner) : inner_(std::move(inner)) {
    std::vector<std::pair<LinearRegex, std::string>> rules;
    for (const auto& [pattern, replacement] : t.key_renames) rules.emplace_back(LinearRegex(pattern), replacement);
    for (const std::string& name : inner_->names()) {
      std::string renamed = name;
      for (const auto& [re, replacement] : rules) {
        renamed = re.replace_all(renamed, replacement);
        if (renamed.size() > kMaxNameBytes) {  // each rule may double it
          const TensorInfo* a = inner_->find(name);
          throw Error((a && a->file ? *a->file : std::string("checkpoint")) + ": tensor '" + escaped(name) +
                      "': the key_renames of model type '" + escaped(t.model_type) + "' make a name of more than " +
                      std::to_string(kMaxNameBytes) + " bytes");
        }
      }
      auto [it, fresh] = original_.emplace(renamed, name);
      if (!fresh) {
        const TensorInfo* a = inner_->find(it->second);
        throw Error((a && a->file ? *a->file : std::string("checkpoint")) + ": tensors '" + escaped(it->second) +
                    "' and '" + escaped(name) + "' are both renamed to '" + escaped(renamed) +
                    "' by the key_renames of model type '" + escaped(t.model_type) + "'");
      }
    }
  }
  const TensorInfo* find(const std::string& name) const override {
    auto it = original_.find(name);
    return it == original_.end() ? nullptr : inner_->find(it->second);
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [renamed, original] : original_) out.push_back(renamed);
    return out;  // sorted: map order
  }
  void produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin, int64_t row_end,
               std::span<uint8_t> out) const override {
    inner_->produce(t, dst, transpose, row_begin, row_end, out);
  }
  bool streams(const TensorInfo& t) const override { return inner_->streams(t); }
  void release(const TensorInfo& t, bool transpose, int64_t row_begin, int64_t row_end) const override {
    inner_->release(t, transpose, row_begin, row_end);
  }

 private:
  std::unique_ptr<Checkpoint> inner_;
  std::map<std::string, std::string> original_;  // renamed -> the checkpoint's name
};

// A fused tensor's parts as tensors of their own: `<m>.<fused>.<suffix>` is replaced in names() by
// `<m>.<part>.<suffix>` for each part, whose first axis is its rows of the fused tensor.
class SplitCheckpoint : public Checkpoint {
 public:
  struct Split {
    std::string fused;               // module name, e.g. "qkv_proj"
    std::vector<std::string> parts;  // e.g. q_proj, k_proj, v_proj
    std::vector<int64_t> sizes;      // rows of each part; empty = equal parts
  };

  SplitCheckpoint(const CustomType& t, std::unique_ptr<Checkpoint> inner, const std::vector<Split>& splits)
      : inner_(std::move(inner)) {
    for (const std::string& name : inner_->names()) {
      const Split* split = nullptr;
      size_t at = std::string::npos;
      for (const Split& s : splits) {
        at = name.find("." + s.fused + ".");
        if (at != std::string::npos) {
          split = &s;
          break;
        }
      }
      if (!split) {
        names_.insert(name);
        continue;
      }
      const TensorInfo* fused = inner_->find(name);
      std::vector<int64_t> sizes = split->sizes;
      const int64_t rows = fused->shape.empty() ? 0 : fused->shape[0];
      if (sizes.empty() && rows % static_cast<int64_t>(split->parts.size()) == 0)
        sizes.assign(split->parts.size(), rows / static_cast<int64_t>(split->parts.size()));
      int64_t sum = 0;
      for (int64_t n : sizes) sum += n;
      if (fused->shape.empty() || fused->shape.size() > 2 || sizes.empty() || sum != rows) {
        std::string want;
        for (int64_t n : sizes) want += (want.empty() ? "" : " + ") + std::to_string(n);
        throw Error(*fused->file + ": tensor '" + escaped(name) + "' has shape " + dims_str(fused->shape) +
                    ", but model type '" + t.model_type + "' splits it along its first axis into " +
                    std::to_string(split->parts.size()) + " parts" +
                    (want.empty() ? " of equal rows" : " of " + want + " rows"));
      }
      int64_t offset = 0;
      for (size_t i = 0; i < split->parts.size(); ++i) {
        Part& p = parts_.emplace_back();
        p.fused = fused;
        p.offset = offset;
        p.info = *fused;
        p.info.name = name.substr(0, at + 1) + split->parts[i] + name.substr(at + split->fused.size() + 1);
        p.info.shape[0] = sizes[i];
        offset += sizes[i];
        if (inner_->find(p.info.name) || !names_.insert(p.info.name).second)
          throw Error(*fused->file + ": tensor '" + escaped(name) + "' is split into '" + escaped(p.info.name) +
                      "', which the checkpoint also has (model type '" + t.model_type + "')");
      }
    }
    for (Part& p : parts_) by_name_[p.info.name] = &p;  // parts_ is a deque: stable addresses
  }
  const TensorInfo* find(const std::string& name) const override {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return &it->second->info;
    return names_.count(name) ? inner_->find(name) : nullptr;
  }
  std::vector<std::string> names() const override { return {names_.begin(), names_.end()}; }
  bool streams(const TensorInfo& t) const override {
    const Part* p = part(t);
    return inner_->streams(p ? *p->fused : t);
  }
  void release(const TensorInfo& t, bool transpose, int64_t row_begin, int64_t row_end) const override {
    const Part* p = part(t);
    if (!p) return inner_->release(t, transpose, row_begin, row_end);
    if (by_rows(*p, transpose)) return inner_->release(*p->fused, false, p->offset + row_begin, p->offset + row_end);
    inner_->release(*p->fused, transpose, row_begin, row_end);
  }
  // A part's rows of the fused matrix, untransposed: rows [offset + begin, offset + end) of it.
  // Otherwise (transposed, or a 1-D bias viewed as one row) each output row is a slice of the
  // fused output row: the range is produced at the fused width and the part's columns copied.
  void produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin, int64_t row_end,
               std::span<uint8_t> out) const override {
    const Part* p = part(t);
    if (!p) return inner_->produce(t, dst, transpose, row_begin, row_end, out);
    if (by_rows(*p, transpose))
      return inner_->produce(*p->fused, dst, false, p->offset + row_begin, p->offset + row_end, out);
    const size_t es = dtype_size(dst);
    const size_t width = static_cast<size_t>(p->fused->shape[0]) * es, part_width = static_cast<size_t>(p->info.shape[0]) * es;
    std::vector<uint8_t> rows(static_cast<size_t>(row_end - row_begin) * width);
    inner_->produce(*p->fused, dst, transpose, row_begin, row_end, rows);
    for (int64_t r = 0; r < row_end - row_begin; ++r)
      std::memcpy(out.data() + r * part_width, rows.data() + r * width + p->offset * es, part_width);
  }

 private:
  struct Part {
    TensorInfo info;                     // its name and shape; dtype and file the fused tensor's
    const TensorInfo* fused = nullptr;
    int64_t offset = 0;                  // its first row in the fused tensor
  };
  const Part* part(const TensorInfo& t) const {
    auto it = by_name_.find(t.name);
    return it != by_name_.end() && &it->second->info == &t ? it->second : nullptr;
  }
  static bool by_rows(const Part& p, bool transpose) { return p.info.shape.size() == 2 && !transpose; }

  std::unique_ptr<Checkpoint> inner_;
  std::set<std::string> names_;  // the inner names but the fused ones, and the parts'
  std::deque<Part> parts_;
  std::map<std::string, Part*> by_name_;
};

}  // namespace

void register_custom_type(const CustomType& t) {
  if (t.model_type.empty()) throw Error("custom model type: 'model_type' is empty");
  if (is_builtin(t.model_type))
    throw Error("custom model type '" + t.model_type + "': already registered (built in); choose another model_type");
  if (!is_builtin(t.base)) {
    std::vector<std::string> names;
    for (const auto& e : registry()) names.push_back(e.model_type);
    std::string near;
    for (const auto& n : nearest_names(t.base, names, 3)) near += (near.empty() ? "" : ", ") + n;
    throw Error("custom model type '" + t.model_type + "': base '" + t.base + "' is not a registered model type "
                "(nearest: " + near + "; see `mobius list models`)");
  }
  for (size_t i = 0; i < t.key_renames.size(); ++i) {
    const auto& [pattern, replacement] = t.key_renames[i];
    const std::string at = "custom model type '" + escaped(t.model_type) + "': key_renames[" + std::to_string(i) + "]";
    const LinearRegex re = with_context(at, [&] { return LinearRegex(pattern); });
    if (replacement.size() > kMaxNameBytes)
      throw Error(at + ": a replacement of more than " + std::to_string(kMaxNameBytes) + " bytes");
    for (size_t k = 0; k + 1 < replacement.size(); ++k) {  // $n / $nn as LinearRegex::replace_all reads them
      if (replacement[k] == '$' && replacement[k + 1] == '$') {
        ++k;
      } else if (replacement[k] == '$' && std::isdigit(static_cast<unsigned char>(replacement[k + 1]))) {
        int g = replacement[k + 1] - '0';
        if (k + 2 < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[k + 2])))
          g = g * 10 + (replacement[k + 2] - '0');
        if (g > re.groups())
          throw Error(at + ": the replacement '" + escaped(replacement) + "' takes group $" + std::to_string(g) +
                      ", but the pattern has " + std::to_string(re.groups()) + " groups");
      }
    }
  }
  std::lock_guard lock(registry_mutex);
  custom_types()[t.model_type] = t;
}

void register_custom_types_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(path + ": cannot open: no such file (--register takes a JSON file of custom model types)");
  const nlohmann::json j = read_json_file(path, kMaxConfigBytes);
  auto entries = j.is_array() ? j : nlohmann::json::array({j});
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string at = j.is_array() ? "[" + std::to_string(i) + "]." : "";
    auto fail = [&](const std::string& field, const std::string& what) {
      throw Error(path + ": field '" + at + field + "': " + what);
    };
    const nlohmann::json& e = entries[i];
    if (!e.is_object()) fail("", "expected an object {model_type, base, config_renames, key_renames}");
    CustomType t;
    for (const char* field : {"model_type", "base"}) {
      if (!e.contains(field) || !e[field].is_string()) fail(field, "missing or not a string");
      (std::string(field) == "base" ? t.base : t.model_type) = e[field].get<std::string>();
    }
    if (e.contains("config_renames")) {
      if (!e["config_renames"].is_object()) fail("config_renames", "expected an object {their field: base field}");
      for (const auto& [theirs, ours] : e["config_renames"].items()) {
        if (!ours.is_string()) fail("config_renames." + theirs, "expected a string (the base's field name)");
        t.config_renames.emplace_back(theirs, ours.get<std::string>());
      }
    }
    if (e.contains("key_renames")) {
      const nlohmann::json& k = e["key_renames"];
      if (!k.is_array()) fail("key_renames", "expected an array of [pattern, replacement] pairs");
      for (size_t r = 0; r < k.size(); ++r) {
        if (!k[r].is_array() || k[r].size() != 2 || !k[r][0].is_string() || !k[r][1].is_string())
          fail("key_renames[" + std::to_string(r) + "]", "expected a [pattern, replacement] pair of strings");
        t.key_renames.emplace_back(k[r][0].get<std::string>(), k[r][1].get<std::string>());
      }
    }
    for (const char* field : {"fused_qkv", "fused_gate_up"}) {
      if (!e.contains(field)) continue;
      if (!e[field].is_string()) fail(field, "expected a string (the fused module's name, e.g. \"qkv_proj\")");
      (std::string(field) == "fused_qkv" ? t.fused_qkv : t.fused_gate_up) = e[field].get<std::string>();
    }
    with_context(path, [&] { register_custom_type(t); });
  }
}

const CustomType* find_custom_type(const std::string& model_type) {
  std::lock_guard lock(registry_mutex);
  auto it = custom_types().find(model_type);
  return it == custom_types().end() ? nullptr : &it->second;
}

HfConfig rename_config(const CustomType& t, const HfConfig& config) {
  nlohmann::json j = config.json();
  for (const auto& [theirs, ours] : t.config_renames) {
    if (!j.contains(theirs)) continue;
    if (j.contains(ours))
      throw Error(config.file() + ": field '" + theirs + "': renamed to '" + ours + "' by model type '" +
                  t.model_type + "', but the config also has '" + ours + "'");
    j[ours] = j[theirs];
    j.erase(theirs);
  }
  j["model_type"] = t.base;
  return HfConfig(std::move(j), config.file());
}

std::unique_ptr<Checkpoint> rename_keys(const CustomType& t, std::unique_ptr<Checkpoint> checkpoint,
                                        const HfConfig& config) {
  if (!t.key_renames.empty()) checkpoint = std::make_unique<RenamedCheckpoint>(t, std::move(checkpoint));
  std::vector<SplitCheckpoint::Split> splits;
  if (!t.fused_qkv.empty()) {
    const int64_t heads = config.get_int("num_attention_heads");
    const int64_t kv_heads = config.int_or("num_key_value_heads", heads);
    const int64_t head_dim = config.int_or("head_dim", config.get_int("hidden_size") / std::max<int64_t>(heads, 1));
    splits.push_back({t.fused_qkv, {"q_proj", "k_proj", "v_proj"}, {heads * head_dim, kv_heads * head_dim, kv_heads * head_dim}});
  }
  if (!t.fused_gate_up.empty()) splits.push_back({t.fused_gate_up, {"gate_proj", "up_proj"}, {}});
  if (splits.empty()) return checkpoint;
  return std::make_unique<SplitCheckpoint>(t, std::move(checkpoint), splits);
}

}  // namespace mobius
