#include "ir/dtype.h"

#include "util/error.h"

namespace mobius {

size_t dtype_size(DataType t) {
  switch (t) {
    case DataType::BOOL:
    case DataType::UINT8:
    case DataType::INT8: return 1;
    case DataType::UINT16:
    case DataType::INT16:
    case DataType::FLOAT16:
    case DataType::BFLOAT16: return 2;
    case DataType::FLOAT:
    case DataType::INT32:
    case DataType::UINT32: return 4;
    case DataType::DOUBLE:
    case DataType::INT64:
    case DataType::UINT64: return 8;
    case DataType::UNDEFINED: break;
  }
  MOBIUS_ASSERT(false, "dtype_size of UNDEFINED");
}

std::string dtype_name(DataType t) {
  switch (t) {
    case DataType::UNDEFINED: return "UNDEFINED";
    case DataType::FLOAT: return "FLOAT";
    case DataType::UINT8: return "UINT8";
    case DataType::INT8: return "INT8";
    case DataType::UINT16: return "UINT16";
    case DataType::INT16: return "INT16";
    case DataType::INT32: return "INT32";
    case DataType::INT64: return "INT64";
    case DataType::BOOL: return "BOOL";
    case DataType::FLOAT16: return "FLOAT16";
    case DataType::DOUBLE: return "DOUBLE";
    case DataType::UINT32: return "UINT32";
    case DataType::UINT64: return "UINT64";
    case DataType::BFLOAT16: return "BFLOAT16";
  }
  return "?";
}

bool is_float(DataType t) {
  return t == DataType::FLOAT || t == DataType::FLOAT16 || t == DataType::BFLOAT16 ||
         t == DataType::DOUBLE;
}

DataType parse_cli_dtype(std::string_view s) {
  if (s == "f32") return DataType::FLOAT;
  if (s == "f16") return DataType::FLOAT16;
  if (s == "bf16") return DataType::BFLOAT16;
  throw Error("--dtype: unknown value '" + std::string(s) + "' (expected f32, f16 or bf16)");
}

}  // namespace mobius
