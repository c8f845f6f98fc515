#include "blocks/mlp.h"

#include "blocks/activation.h"

namespace mobius {

GatedMLP::GatedMLP(const MLPOptions& o) : act_(o.hidden_act) {
  gate_proj = child<Linear>("gate_proj", LinearOptions{o.hidden_size, o.intermediate_size, o.bias, o.dtype});
  up_proj = child<Linear>("up_proj", LinearOptions{o.hidden_size, o.intermediate_size, o.bias, o.dtype});
  down_proj = child<Linear>("down_proj", LinearOptions{o.intermediate_size, o.hidden_size, o.bias, o.dtype});
}

Value* GatedMLP::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* gate = activation(op, act_, gate_proj->forward(op, x));
  return down_proj->forward(op, op.Mul(gate, up_proj->forward(op, x)));
}

}  // namespace mobius
