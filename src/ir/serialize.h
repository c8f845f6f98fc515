// Serialization of the IR to ONNX ModelProto (onnx/onnx.proto, IR version 11).
//
// Weight initializers are written as external data (TensorProto.data_location = EXTERNAL with
// location/offset/length entries), so the protobuf stays small for models of any size; constant
// initializers keep their bytes inline in raw_data.
#pragma once

#include <map>
#include <string>

#include <onnx/onnx.pb.h>

#include "ir/ir.h"

namespace mobius {

struct ExternalLocation {
  std::string file;  // relative to the model file
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Converts `model` to a ModelProto. Every weight initializer must have an entry in `external`
// (keyed by initializer name); throws InternalError otherwise. A constant initializer with an entry
// is external too (package/writer.h kExternalConstantBytes), the others hold their bytes inline.
onnx::ModelProto to_model_proto(const Model& model,
                                const std::map<std::string, ExternalLocation>& external);

}  // namespace mobius
