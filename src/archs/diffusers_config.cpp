#include "archs/diffusers_config.h"

namespace mobius {

int64_t diffusers_int(const HfConfig& c, const std::string& key, int64_t lo, int64_t hi) {
  const int64_t v = c.get_int(key);
  if (v < lo || v > hi)
    c.fail(key, "expected a value in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
  return v;
}

std::vector<int64_t> diffusers_int_list(const HfConfig& c, const std::string& key, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (double v : c.float_list(key)) {
    if (v != static_cast<double>(static_cast<int64_t>(v)) || v < static_cast<double>(lo) || v > static_cast<double>(hi))
      c.fail(key, "expected integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
    out.push_back(static_cast<int64_t>(v));
  }
  if (out.empty()) c.fail(key, "expected at least one entry");
  return out;
}

std::vector<int64_t> diffusers_per_block(const HfConfig& c, const std::string& key, size_t n, int64_t lo, int64_t hi) {
  if (c.has(key) && !c.json()[key].is_array()) return std::vector<int64_t>(n, diffusers_int(c, key, lo, hi));
  std::vector<int64_t> out = diffusers_int_list(c, key, lo, hi);
  if (out.size() != n) c.fail(key, "expected " + std::to_string(n) + " entries, one per block, got " + std::to_string(out.size()));
  return out;
}

void diffusers_require(const HfConfig& c, const std::string& key, const nlohmann::json& expected, const std::string& what) {
  if (!c.has(key)) return;
  const nlohmann::json& v = c.json()[key];
  if (!expected.is_null() && v == expected) return;
  c.fail(key, v.dump() + " is not supported (mobius builds " + what + ")");
}

std::vector<bool> diffusers_bool_list(const HfConfig& c, const std::string& key) {
  if (!c.has(key)) c.fail(key, "missing");
  const nlohmann::json& j = c.json()[key];
  if (!j.is_array()) c.fail(key, "expected a list of booleans");
  std::vector<bool> out;
  for (const nlohmann::json& v : j) {
    if (!v.is_boolean()) c.fail(key, "expected a list of booleans, got " + v.dump());
    out.push_back(v.get<bool>());
  }
  return out;
}

std::vector<std::string> diffusers_string_list(const HfConfig& c, const std::string& key) {
  if (!c.has(key)) c.fail(key, "missing");
  const nlohmann::json& j = c.json()[key];
  if (!j.is_array() || j.empty()) c.fail(key, "expected a non-empty list of strings");
  std::vector<std::string> out;
  for (const nlohmann::json& v : j) {
    if (!v.is_string()) c.fail(key, "expected a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

VaeSizes read_vae_sizes(const HfConfig& c, const std::string& down_block, const std::string& up_block) {
  VaeSizes s;
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxSmallSize);
  s.out_channels = diffusers_int(c, "out_channels", 1, kMaxSmallSize);
  s.latent_channels = diffusers_int(c, "latent_channels", 1, kMaxSmallSize);
  s.layers_per_block = diffusers_int(c, "layers_per_block", 1, kMaxLayers);
  s.groups = diffusers_int(c, "norm_num_groups", 1, kMaxSmallSize);
  s.channels = diffusers_int_list(c, "block_out_channels", 1, kMaxHiddenSize);
  for (int64_t ch : s.channels)
    if (ch % s.groups != 0)
      c.fail("block_out_channels", std::to_string(ch) + " channels do not split into norm_num_groups " +
                                       std::to_string(s.groups) + " groups");
  const std::vector<std::string> down = diffusers_string_list(c, "down_block_types");
  const std::vector<std::string> up = diffusers_string_list(c, "up_block_types");
  if (down.size() != s.channels.size()) c.fail("down_block_types", "expected one entry per block_out_channels entry");
  if (up.size() != s.channels.size()) c.fail("up_block_types", "expected one entry per block_out_channels entry");
  for (const std::string& t : down)
    if (t != down_block) c.fail("down_block_types", "unsupported block '" + t + "' (expected " + down_block + ")");
  for (const std::string& t : up)
    if (t != up_block) c.fail("up_block_types", "unsupported block '" + t + "' (expected " + up_block + ")");
  return s;
}

std::string diffusers_activation(const HfConfig& c, const std::string& key) {
  const std::string act = c.get_string(key);
  if (act == "silu" || act == "swish") return "silu";
  if (act == "gelu" || act == "relu") return act;
  c.fail(key, "unsupported activation '" + act + "' (expected silu, swish, gelu or relu)");
}

}  // namespace mobius
