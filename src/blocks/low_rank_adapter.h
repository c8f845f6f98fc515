// A Linear plus an optional additive low-rank path: y = base(x) + up(down(x)). Zamba2's
// per-application adapters on the linears of its shared transformer block
// (transformers/models/zamba2/modeling_zamba2.py Zamba2Attention linear_{q,k,v}_adapter_list,
// Zamba2MLP gate_up_proj_adapter_list: nn.Sequential(Linear(in, rank), Linear(rank, out)), both
// without bias, so the checkpoint names the two ".0" and ".1"). One base Linear is shared by every
// application of the block; each application owns its path (or none).
#pragma once

#include "blocks/linear.h"

namespace mobius {

struct LowRankOptions {
  int64_t in_features;
  int64_t rank;
  int64_t out_features;
  DataType dtype = DataType::FLOAT;
};

// The low-rank path: children "0" (in -> rank) and "1" (rank -> out), no bias.
class LowRankPath : public Module {
 public:
  explicit LowRankPath(const LowRankOptions& o);
  // x: [..., in] -> [..., out].
  Value* forward(Ops& op, Value* x) const;
  Linear *down, *up;
};

// A projection as one application of a shared block sees it: the block's Linear, plus that
// application's low-rank path where it has one (null: the Linear alone).
struct AdaptedLinear {
  const Linear* base;
  const LowRankPath* path = nullptr;
  // x: [..., in] -> base(x) + path(x) [..., out].
  Value* forward(Ops& op, Value* x) const;
};

}  // namespace mobius
