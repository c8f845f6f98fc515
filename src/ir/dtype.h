// Element types, numbered as ONNX TensorProto.DataType (onnx/onnx.proto).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mobius {

enum class DataType : int32_t {
  UNDEFINED = 0,
  FLOAT = 1,
  UINT8 = 2,
  INT8 = 3,
  UINT16 = 4,
  INT16 = 5,
  INT32 = 6,
  INT64 = 7,
  BOOL = 9,
  FLOAT16 = 10,
  DOUBLE = 11,
  UINT32 = 12,
  UINT64 = 13,
  BFLOAT16 = 16,
};

// Bytes per element; throws InternalError for UNDEFINED.
size_t dtype_size(DataType t);
// ONNX spelling, e.g. "FLOAT16".
std::string dtype_name(DataType t);
bool is_float(DataType t);
// Parses the CLI spelling: f32 | f16 | bf16. Throws mobius::Error naming `s` otherwise.
DataType parse_cli_dtype(std::string_view s);

}  // namespace mobius
