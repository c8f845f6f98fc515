// Rotary position embedding (RoFormer, arXiv:2104.09864) as transformers computes it
// (modeling_rope_utils.py): cos/sin of position_ids * inv_freq, scaled by attention_factor.
// The cos/sin tables are computed once per graph and shared by every layer's attention.
#pragma once

#include "builder/ops.h"
#include "config/rope_config.h"

namespace mobius {

struct RopeTables {
  Value* cos;  // [batch, seq, rotary_dim / 2], model dtype
  Value* sin;
  int64_t rotary_dim;  // 0 = the whole head
};

// position_ids: int64 [batch, seq]. "dynamic" recomputes the base from
// seq_len = max(max(position_ids) + 1, max_position_embeddings); "longrope" picks the long factors
// when max(position_ids) + 1 > original_max_position_embeddings (both as transformers'
// dynamic_rope_update does).
RopeTables rope_tables(Ops& op, const RopeConfig& rope, Value* position_ids, DataType dtype);

// Applies the rotation to x: [batch, heads, seq, head_dim] (first rotary_dim channels rotated,
// rotate_half layout unless `interleaved`).
Value* apply_rope(Ops& op, Value* x, const RopeTables& t, bool interleaved = false);

}  // namespace mobius
