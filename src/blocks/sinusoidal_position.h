// Fixed sinusoidal position embeddings in the non-interleaved layout of Marian
// (transformers/models/marian/modeling_marian.py, MarianSinusoidalPositionalEmbedding.create_weight):
//   angle[pos][j] = pos / 10000 ** (2 * (j // 2) / dim)
//   row pos = [sin(angle[pos][0::2]) | cos(angle[pos][1::2])]  (the sin half first; for an odd
//   dim it has the extra column)
// computed in float64 and rounded to float32 as transformers does (torch.FloatTensor of numpy's
// values), then to the model dtype. Marian does not store the table in its checkpoint.
#pragma once

#include "nn/module.h"

namespace mobius {

// position_ids: int64 [...] in [0, num_positions) -> [..., dim] in `dtype` (a Gather from the
// table, a constant [num_positions, dim] of the graph).
Value* sinusoidal_positions(Ops& op, Value* position_ids, int64_t num_positions, int64_t dim, DataType dtype);

}  // namespace mobius
