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

// The same layout with the angles in float32, as CTRL's positional_encoding
// (transformers/models/ctrl/modeling_ctrl.py) computes them in torch:
//   rate[j] = 1 / 10000 ** (float32(2 * (j // 2)) / dim), angle = float32(pos) * rate[j]
// The power is rounded from float64 (torch's float32 pow differs from it by an ulp on a few
// exponents: the table then differs from transformers' by <= 4e-6 at CTRL's 256 x 1280).
// position_ids: int64 [...] in [0, num_positions) -> [..., dim] in `dtype`.
Value* sinusoidal_positions_f32(Ops& op, Value* position_ids, int64_t num_positions, int64_t dim, DataType dtype);

// The tensor2tensor layout of M2M100 (transformers/models/m2m_100/modeling_m2m_100.py,
// M2M100SinusoidalPositionalEmbedding.get_embedding), computed in float32 as torch does:
//   freq[k] = exp(k * -(log(10000) / (dim / 2 - 1))), row pos = [sin(pos * freq) | cos(pos * freq)]
//   (a zero column appended for an odd dim), the row padding_idx all zeros.
// position_ids: int64 [...] in [0, num_positions) -> [..., dim] in `dtype`.
Value* sinusoidal_positions_t2t(Ops& op, Value* position_ids, int64_t num_positions, int64_t dim,
                                int64_t padding_idx, DataType dtype);

// The same tensor2tensor layout for any position, computed in the graph in float32 (no table, no
// padding row; an even dim): PegasusXSinusoidalPositionalEmbedding
// (transformers/models/pegasus_x/modeling_pegasus_x.py, max_scale 10000).
// position_ids: int64 [...] -> [..., dim] in `dtype`.
Value* sinusoidal_positions_computed(Ops& op, Value* position_ids, int64_t dim, DataType dtype);

}  // namespace mobius
