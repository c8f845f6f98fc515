// The evaluator's op table (eval/evaluator.h): one function per ONNX op, default domain, opset 24
// semantics (onnx/docs/Operators.md; onnx/reference/ops is the executable form of the spec).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <onnx/onnx.pb.h>

#include "eval/evaluator.h"

namespace mobius::eval {

// Inputs in node order; nullptr for an omitted optional input (empty name). Returns the outputs
// in node order (a trailing optional output may be left out). Throws mobius::Error on a shape or
// element type the op does not accept, or an attribute value it does not implement.
using OpFn = std::vector<Tensor> (*)(const onnx::NodeProto& node, const std::vector<const Tensor*>& in);

// op_type -> implementation.
const std::map<std::string, OpFn>& op_table();

}  // namespace mobius::eval
