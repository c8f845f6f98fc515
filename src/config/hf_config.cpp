#include "config/hf_config.h"

#include <fstream>

#include "util/error.h"

namespace mobius {

HfConfig HfConfig::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open (is this a Hugging Face checkpoint directory?)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error(path + ": expected a JSON object");
  return HfConfig(std::move(j), path);
}

HfConfig::HfConfig(nlohmann::json j, std::string file, std::string prefix)
    : j_(std::move(j)), file_(std::move(file)), prefix_(std::move(prefix)) {}

void HfConfig::fail(const std::string& key, const std::string& message) const {
  throw Error(file_ + ": field '" + prefix_ + key + "': " + message);
}

const nlohmann::json* HfConfig::find(const std::string& key) const {
  auto it = j_.find(key);
  if (it == j_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool HfConfig::has(const std::string& key) const { return find(key) != nullptr; }

static std::string type_of(const nlohmann::json& v) { return v.type_name(); }

int64_t HfConfig::get_int(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_number_integer()) fail(key, "expected an integer, got " + type_of(*v));
  return v->get<int64_t>();
}

double HfConfig::get_float(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_number()) fail(key, "expected a number, got " + type_of(*v));
  return v->get<double>();
}

std::string HfConfig::get_string(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_string()) fail(key, "expected a string, got " + type_of(*v));
  return v->get<std::string>();
}

bool HfConfig::get_bool(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_boolean()) fail(key, "expected true or false, got " + type_of(*v));
  return v->get<bool>();
}

int64_t HfConfig::int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}
double HfConfig::float_or(const std::string& key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}
std::string HfConfig::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}
bool HfConfig::bool_or(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}
std::optional<int64_t> HfConfig::opt_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_int(key);
}
std::optional<double> HfConfig::opt_float(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_float(key);
}

std::vector<double> HfConfig::float_list(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_array()) fail(key, "expected a list of numbers, got " + type_of(*v));
  std::vector<double> out;
  for (const auto& x : *v) {
    if (!x.is_number()) fail(key, "expected a list of numbers, found " + type_of(x));
    out.push_back(x.get<double>());
  }
  return out;
}

std::optional<HfConfig> HfConfig::sub(const std::string& key) const {
  const auto* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_object()) fail(key, "expected an object, got " + type_of(*v));
  return HfConfig(*v, file_, prefix_ + key + ".");
}

}  // namespace mobius
