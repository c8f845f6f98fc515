// Feed-forward blocks.
//   GatedMLP (LlamaMLP): down_proj(act(gate_proj(x)) * up_proj(x))
// x: [..., hidden_size] -> [..., hidden_size].
#pragma once

#include <string>

#include "blocks/linear.h"

namespace mobius {

struct MLPOptions {
  int64_t hidden_size;
  int64_t intermediate_size;
  std::string hidden_act = "silu";
  bool bias = false;
  DataType dtype = DataType::FLOAT;
};

class GatedMLP : public Module {
 public:
  explicit GatedMLP(const MLPOptions& o);
  Value* forward(Ops& op, Value* x) const;
  Linear *gate_proj, *up_proj, *down_proj;

 private:
  std::string act_;
};

}  // namespace mobius
