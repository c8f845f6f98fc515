// GGUF reader (spec: ggml docs/gguf.md; reference reader: the `gguf` PyPI package,
// gguf/gguf_reader.py). Little-endian layout, versions 2 and 3:
//   magic "GGUF" | uint32 version | uint64 tensor_count | uint64 kv_count
//   kv_count x (string key | uint32 value_type | value)
//   tensor_count x (string name | uint32 n_dims | uint64 ne[n_dims] | uint32 ggml_type | uint64 offset)
//   padding to `general.alignment` (uint32, default 32) | tensor data
// A string is uint64 length + bytes; an array is uint32 element type + uint64 count + elements.
// ne[0] is the contiguous dimension: the row-major (numpy / Hugging Face) shape is ne reversed.
//
// The file is memory-mapped; tensors are views into the mapping. Validation on open (each failure
// is a one-line mobius::Error naming the file and the key or tensor): magic, version (2 or 3;
// big-endian files are refused), every read inside the file (counts, string and array lengths are
// checked against the bytes left before anything is allocated), known value types, unique keys and
// tensor names, general.alignment a power of two, n_dims 1..4, known ggml type, ne[0] a multiple
// of the type's block size, tensor offsets aligned, inside the data section and not overlapping.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "weights/safetensors.h"

namespace mobius {

// ggml tensor types, numbered as in ggml.h (enum ggml_type) / gguf constants.py.
enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41,
};

struct GgmlTypeTraits {
  const char* name;    // "Q4_K"
  int64_t block_size;  // elements per block
  int64_t type_size;   // bytes per block (GGML_QUANT_SIZES)
};
// Traits of a ggml type id; nullptr when the id is unknown.
const GgmlTypeTraits* ggml_type_traits(uint32_t type);

// GGUF metadata value types (gguf constants.py GGUFValueType).
enum class GgufValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
std::string gguf_value_type_name(GgufValueType t);  // "uint32", "string", "array", ...

// One metadata value: a view of its encoded bytes in the mapping, decoded on access. The bytes were
// validated on open, so accessors only check that the value has the type asked for.
class GgufValue {
 public:
  GgufValue(GgufValueType type, std::span<const uint8_t> bytes) : type_(type), bytes_(bytes) {}
  GgufValueType type() const { return type_; }
  bool is_integer() const;  // any of the 8 integer types
  bool is_float() const;    // FLOAT32 or FLOAT64
  // Decoded scalars; InternalError when the type does not match (check type() first).
  int64_t as_int() const;   // integer types (UINT64 above INT64_MAX: InternalError)
  double as_float() const;  // FLOAT32 / FLOAT64 (exact)
  bool as_bool() const;
  std::string_view as_string() const;
  // Arrays: element type, count, and the decoded elements.
  GgufValueType element_type() const;
  uint64_t size() const;
  std::vector<GgufValue> elements() const;
  // JSON: numbers, bool, string, arrays as lists (non-UTF-8 strings: InternalError).
  nlohmann::json to_json() const;

 private:
  GgufValueType type_;
  std::span<const uint8_t> bytes_;  // the value's encoding (after the type tag)
};

struct GgufTensor {
  std::string name;
  GgmlType type;
  std::vector<int64_t> ne;        // GGUF dimensions, ne[0] contiguous
  uint64_t offset;                // relative to the data section
  std::span<const uint8_t> data;  // the tensor's bytes in the mapping
  int64_t num_elements() const;
  std::vector<int64_t> shape() const;  // row-major shape: ne reversed
};

class GgufFile {
 public:
  // Maps and validates `path`; throws mobius::Error "<path>: <what>" naming the key or tensor.
  explicit GgufFile(const std::string& path);
  const std::string& path() const { return file_.path(); }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  // Metadata in file order, and lookup by key (nullptr when absent).
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find_key(const std::string& key) const;
  // Tensors in file order, and lookup by name (nullptr when absent).
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(const std::string& name) const;
  // Drops `range` (bytes of this file's mapping, e.g. a tensor's data) from the resident set
  // (MappedFile::release, weights/safetensors.h).
  void release(std::span<const uint8_t> range) const { file_.release(range); }

 private:
  MappedFile file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::map<std::string, size_t> key_index_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace mobius
