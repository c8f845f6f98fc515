// Shared helpers of the unit tests: temporary directories, a safetensors file writer, error
// message checks, op counting and an independent reference for float rounding.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/ir.h"
#include "util/error.h"

namespace mobius::test {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed with everything in it on destruction.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mobius-unit-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string str(const std::string& rel = "") const { return (path / rel).string(); }
};

// name -> shape (ints, or the symbolic dim's name) of a graph's inputs or outputs.
inline std::map<std::string, std::vector<std::string>> io_shapes(const std::vector<Value*>& values) {
  std::map<std::string, std::vector<std::string>> out;
  for (const Value* v : values)
    for (const Dim& d : *v->shape) out[v->name].push_back(d.is_symbolic() ? d.symbol : std::to_string(d.value));
  return out;
}

inline void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

template <typename T>
std::string as_bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// safetensors framing: 8-byte little-endian header length, the header, the data buffer.
inline std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

// Builds a well-formed safetensors file: tensors laid out back to back in insertion order.
struct SafetensorsWriter {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  SafetensorsWriter& add(const std::string& name, const std::string& dtype,
                         std::vector<int64_t> shape, const std::string& bytes) {
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {data.size(), data.size() + bytes.size()}}};
    data += bytes;
    return *this;
  }
  SafetensorsWriter& f32(const std::string& name, std::vector<int64_t> shape,
                         const std::vector<float>& values) {
    return add(name, "F32", std::move(shape), as_bytes(values));
  }
  // `values` as bfloat16: their upper 16 bits (truncated)
  SafetensorsWriter& bf16(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& values) {
    std::vector<uint16_t> bits(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      uint32_t u;
      std::memcpy(&u, &values[i], 4);
      bits[i] = static_cast<uint16_t>(u >> 16);
    }
    return add(name, "BF16", std::move(shape), as_bytes(bits));
  }
  void write(const fs::path& path) const { write_file(path, safetensors_bytes(header.dump(), data)); }
};

// `values` counting up from `start`, for distinguishable tensor contents.
inline std::vector<float> iota_f32(size_t n, float start = 0.25f, float step = 0.5f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// Runs fn and checks it throws mobius::Error whose message contains every one of `parts`.
template <typename Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected mobius::Error containing '" << *parts.begin() << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "multi-line message: " << msg;
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

inline std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes) ++counts[n.op_type];
  return counts;
}

// Reference rounding of a finite double to a binary format with `precision` significand bits
// (including the implicit one) and minimum normal exponent `emin`, round-to-nearest-even,
// overflowing to infinity past the largest finite value (IEEE 754-2008 §4.3.1, §7.4). Computed
// with exact power-of-two scaling and std::nearbyint (the default rounding mode is to-nearest-even).
inline double round_to_format(double x, int precision, int emin, int emax) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int e = std::max(std::ilogb(x), emin);
  const double quantum = std::ldexp(1.0, e - (precision - 1));
  const double r = std::nearbyint(x / quantum) * quantum;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), emax);
  return std::fabs(r) > max_finite ? std::copysign(INFINITY, x) : r;
}
inline double round_f16(double x) { return round_to_format(x, 11, -14, 15); }
inline double round_bf16(double x) { return round_to_format(x, 8, -126, 127); }

}  // namespace mobius::test
