// Architecture: the root Module of a model, which knows its task (I/O contract) and builds the
// complete ONNX Model for it.
#pragma once

#include <string>

#include "ir/ir.h"
#include "nn/module.h"

namespace mobius {

class Architecture : public Module {
 public:
  // The task name, e.g. "text-generation".
  virtual std::string task() const = 0;
  // Builds the graph (no weight data is touched).
  virtual Model build_model() const = 0;
};

}  // namespace mobius
