// The structure-aware mutation of GGUF files shared by fuzz_gguf and fuzz_gguf_tokenizer: one
// number of a valid file's metadata (a scalar, or an element of a numeric array such as
// tokenizer.ggml.token_type or scores) overwritten with a value that breaks size or id arithmetic,
// half the time; else libFuzzer's byte mutations.
#pragma once

#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "fuzz_util.h"
#include "util/error.h"
#include "weights/gguf.h"

namespace mobius::fuzz {

inline size_t gguf_value_width(GgufValueType t) {
  using T = GgufValueType;
  switch (t) {
    case T::UINT8: case T::INT8: case T::BOOL: return 1;
    case T::UINT16: case T::INT16: return 2;
    case T::UINT32: case T::INT32: case T::FLOAT32: return 4;
    case T::UINT64: case T::INT64: case T::FLOAT64: return 8;
    default: return 0;
  }
}

inline size_t mutate_gguf(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 2) return LLVMFuzzerMutate(data, size, max_size);
  try {
    GgufFile f(as_file(data, size));
    std::vector<std::pair<size_t, GgufValueType>> numbers;  // value offset, type
    for (const auto& [key, v] : f.metadata()) {
      // the value follows its key (uint64 length + bytes) and its uint32 type tag
      const void* at = memmem(data, size, key.data(), key.size());
      if (!at) continue;
      const size_t value = static_cast<const uint8_t*>(at) - data + key.size() + 4;
      if (gguf_value_width(v.type())) {
        numbers.emplace_back(value, v.type());
      } else if (v.type() == GgufValueType::ARRAY && gguf_value_width(v.element_type()) && v.size() > 0) {
        // an array: element type (uint32), count (uint64), then the elements
        const size_t w = gguf_value_width(v.element_type());
        numbers.emplace_back(value + 12 + (rng() % v.size()) * w, v.element_type());
      }
    }
    if (numbers.empty()) return LLVMFuzzerMutate(data, size, max_size);
    const auto [offset, type] = numbers[rng() % numbers.size()];
    const double x = interesting_number(rng);
    uint8_t bytes[8];
    if (type == GgufValueType::FLOAT32) {
      const float v = rng() % 8 ? static_cast<float>(x) : std::nanf("");
      std::memcpy(bytes, &v, 4);
    } else if (type == GgufValueType::FLOAT64) {
      std::memcpy(bytes, &x, 8);
    } else {
      const int64_t v = rng() % 8 ? saturated(x) : -1;  // -1: 2^64 - 1 as uint64
      std::memcpy(bytes, &v, 8);
    }
    if (offset + gguf_value_width(type) <= size) std::memcpy(data + offset, bytes, gguf_value_width(type));
    return size;
  } catch (const Error&) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
}

}  // namespace mobius::fuzz
