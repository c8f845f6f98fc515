#include "blocks/low_rank_adapter.h"

namespace mobius {

LowRankPath::LowRankPath(const LowRankOptions& o) {
  down = child<Linear>("0", LinearOptions{o.in_features, o.rank, false, o.dtype});
  up = child<Linear>("1", LinearOptions{o.rank, o.out_features, false, o.dtype});
}

Value* LowRankPath::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return up->forward(op, down->forward(op, x));
}

Value* AdaptedLinear::forward(Ops& op, Value* x) const {
  Value* y = base->forward(op, x);
  return path ? op.Add(y, path->forward(op, x)) : y;
}

}  // namespace mobius
