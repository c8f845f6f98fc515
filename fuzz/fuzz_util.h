// Shared helpers of the libFuzzer targets (docs/security.md, "Fuzzing"): inputs as files, and the
// structure-aware mutation of the numbers in a valid input.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace mobius::fuzz {

// The bytes as an anonymous in-memory file: its /proc/self/fd path stays valid until the next call.
inline std::string as_file(const uint8_t* data, size_t size) {
  static int fd = -1;
  if (fd >= 0) ::close(fd);
  fd = ::memfd_create("fuzz-input", 0);
  for (size_t at = 0; at < size;) {
    ssize_t n = ::write(fd, data + at, size - at);
    if (n <= 0) std::abort();
    at += static_cast<size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

// A fresh directory for the whole run (removed by the OS's tmp cleaning, not by the target).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string p = (std::filesystem::temp_directory_path() / "mobius-fuzz-XXXXXX").string();
    if (!::mkdtemp(p.data())) std::abort();
    return std::filesystem::path(p);
  }();
  return dir;
}

inline void write_file(const std::filesystem::path& p, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(p.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();
}

// The integer nearest `x`, saturated to int64.
inline int64_t saturated(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 9.2e18) return INT64_MAX;
  if (x <= -9.2e18) return INT64_MIN;
  return static_cast<int64_t>(x);
}

// Values that break size arithmetic: zero, negatives, powers of two around int32/int64 limits,
// odd sizes, tiny and huge floats.
inline double interesting_number(std::mt19937_64& rng) {
  static const double values[] = {0, -1, 1, 2, 3, 7, -7, 63, 65, 1e-300, -1e-6, 0.5, 1.5, 1e30, 1e300,
                                  4294967296.0, 2147483648.0, 9.2e18, 4.6e18, 65536, 1048576, 1e9};
  if (rng() % 4 == 0) return static_cast<double>(static_cast<int64_t>(rng() >> (rng() % 64)));
  return values[rng() % std::size(values)];
}

// Mutates one number (or deletes one key) of a JSON document; falls back to byte mutation when
// the input does not parse. Structure-aware: the result is a valid JSON file with one field changed.
inline size_t mutate_json(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  std::mt19937_64 rng(seed);
  if (j.is_discarded() || rng() % 8 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::vector<nlohmann::json*> numbers;
  std::vector<std::pair<nlohmann::json*, std::string>> keys;
  auto walk = [&](auto& self, nlohmann::json& v) -> void {
    if (v.is_number() || v.is_boolean() || v.is_null()) numbers.push_back(&v);
    if (v.is_object())
      for (auto it = v.begin(); it != v.end(); ++it) {
        keys.emplace_back(&v, it.key());
        self(self, it.value());
      }
    if (v.is_array())
      for (auto& x : v) self(self, x);
  };
  walk(walk, j);
  if (!keys.empty() && rng() % 6 == 0) {
    auto& [obj, key] = keys[rng() % keys.size()];
    obj->erase(key);
  } else if (!numbers.empty()) {
    nlohmann::json& v = *numbers[rng() % numbers.size()];
    const double x = interesting_number(rng);
    if (std::abs(x) < 9.2e18 && x == std::trunc(x) && rng() % 2)
      v = static_cast<int64_t>(x);
    else
      v = x;
  }
  const std::string out = j.dump();
  if (out.size() > max_size) return size;
  std::copy(out.begin(), out.end(), data);
  return out.size();
}

}  // namespace mobius::fuzz
