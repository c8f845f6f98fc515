// HfConfig: a typed, read-only view of a Hugging Face config.json. Field names are HF's.
// Every error names the file and the JSON path, e.g.
//   "ckpt/config.json: field 'num_attention_heads': expected an integer, got string".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mobius {

class HfConfig {
 public:
  // Reads `path` (a config.json). Throws mobius::Error if missing or not a JSON object.
  static HfConfig load(const std::string& path);
  HfConfig(nlohmann::json j, std::string file, std::string prefix = "");

  const std::string& file() const { return file_; }
  bool has(const std::string& key) const;  // present and not null

  // Required fields: throw mobius::Error naming file and field if missing or mistyped.
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;
  std::string get_string(const std::string& key) const;
  bool get_bool(const std::string& key) const;

  // Optional fields: `fallback` when missing or null; still throw when mistyped.
  int64_t int_or(const std::string& key, int64_t fallback) const;
  double float_or(const std::string& key, double fallback) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  bool bool_or(const std::string& key, bool fallback) const;
  std::optional<int64_t> opt_int(const std::string& key) const;
  std::optional<double> opt_float(const std::string& key) const;
  std::vector<double> float_list(const std::string& key) const;  // required list of numbers
  // A nested object as its own view (errors then name "parent.child" paths).
  std::optional<HfConfig> sub(const std::string& key) const;

  // Throws mobius::Error "file: field 'key': message".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  const nlohmann::json& json() const { return j_; }

 private:
  const nlohmann::json* find(const std::string& key) const;
  nlohmann::json j_;
  std::string file_;
  std::string prefix_;
};

}  // namespace mobius
