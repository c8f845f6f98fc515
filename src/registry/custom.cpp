#include "registry/custom.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>

#include "registry/registry.h"
#include "util/error.h"
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
    std::vector<std::pair<std::regex, std::string>> rules;
    for (const auto& [pattern, replacement] : t.key_renames) rules.emplace_back(std::regex(pattern), replacement);
    for (const std::string& name : inner_->names()) {
      std::string renamed = name;
      for (const auto& [re, replacement] : rules) renamed = std::regex_replace(renamed, re, replacement);
      auto [it, fresh] = original_.emplace(renamed, name);
      if (!fresh) {
        const TensorInfo* a = inner_->find(it->second);
        throw Error((a && a->file ? *a->file : std::string("checkpoint")) + ": tensors '" + it->second + "' and '" +
                    name + "' are both renamed to '" + renamed + "' by the key_renames of model type '" +
                    t.model_type + "'");
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
  for (const auto& [pattern, replacement] : t.key_renames) {
    try {
      std::regex re(pattern);
    } catch (const std::regex_error& e) {
      throw Error("custom model type '" + t.model_type + "': key_renames pattern '" + pattern +
                  "' is not a valid regular expression: " + e.what());
    }
  }
  std::lock_guard lock(registry_mutex);
  custom_types()[t.model_type] = t;
}

void register_custom_types_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open (--register takes a JSON file of custom model types)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path + ": invalid JSON: " + e.what());
  }
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

std::unique_ptr<Checkpoint> rename_keys(const CustomType& t, std::unique_ptr<Checkpoint> checkpoint) {
  if (t.key_renames.empty()) return checkpoint;
  return std::make_unique<RenamedCheckpoint>(t, std::move(checkpoint));
}

}  // namespace mobius
