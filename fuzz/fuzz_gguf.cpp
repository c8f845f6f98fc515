// GGUF: the reader (weights/gguf.h) and the config synthesis (weights/gguf_checkpoint.h), then the
// graph of the synthesized config. Structure-aware: the custom mutator overwrites one scalar
// metadata value of a valid file (block_count, context_length, head counts, eps, ...) with a value
// that breaks size arithmetic, half the time; else libFuzzer's byte mutations.
#include <cstring>

#include "fuzz_util.h"
#include "registry/config_defaults.h"
#include "registry/registry.h"
#include "util/error.h"
#include "weights/gguf.h"
#include "weights/gguf_checkpoint.h"

namespace {

size_t value_width(mobius::GgufValueType t) {
  using T = mobius::GgufValueType;
  switch (t) {
    case T::UINT8: case T::INT8: case T::BOOL: return 1;
    case T::UINT16: case T::INT16: return 2;
    case T::UINT32: case T::INT32: case T::FLOAT32: return 4;
    case T::UINT64: case T::INT64: case T::FLOAT64: return 8;
    default: return 0;
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 2) return LLVMFuzzerMutate(data, size, max_size);
  try {
    mobius::GgufFile f(mobius::fuzz::as_file(data, size));
    std::vector<std::pair<size_t, mobius::GgufValueType>> scalars;  // value offset, type
    for (const auto& [key, v] : f.metadata()) {
      if (!value_width(v.type())) continue;
      // the value follows its key (uint64 length + bytes) and its uint32 type tag
      const void* at = memmem(data, size, key.data(), key.size());
      if (at) scalars.emplace_back(static_cast<const uint8_t*>(at) - data + key.size() + 4, v.type());
    }
    if (scalars.empty()) return LLVMFuzzerMutate(data, size, max_size);
    const auto [offset, type] = scalars[rng() % scalars.size()];
    const double x = mobius::fuzz::interesting_number(rng);
    uint8_t bytes[8];
    if (type == mobius::GgufValueType::FLOAT32) {
      const float v = rng() % 8 ? static_cast<float>(x) : std::nanf("");
      std::memcpy(bytes, &v, 4);
    } else if (type == mobius::GgufValueType::FLOAT64) {
      std::memcpy(bytes, &x, 8);
    } else {
      const int64_t v = mobius::fuzz::saturated(x);
      std::memcpy(bytes, &v, 8);
    }
    if (offset + value_width(type) <= size) std::memcpy(data + offset, bytes, value_width(type));
    return size;
  } catch (const mobius::Error&) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    mobius::GgufCheckpoint g(mobius::fuzz::as_file(data, size));
    const mobius::HfConfig& raw = g.config();
    const mobius::RegistryEntry& e = mobius::find_architecture(raw.get_string("model_type"), raw.file());
    e.create(mobius::with_class_defaults(raw, e.model_type), mobius::DataType::FLOAT)->build_graphs();
  } catch (const mobius::Error&) {
  }
  return 0;
}
