// The "transient global" side inputs of LongT5's encoder attention (transformers/models/longt5/
// modeling_longt5.py: _make_global_fixed_block_ids, _make_side_relative_position_ids,
// _create_global_aggregates, LongT5TransientGlobalAttention.compute_side_bias; Guo et al.,
// arXiv:2112.07916). The sequence is cut into num_globals = seq // global_block_size fixed blocks
// by position (padding included); each block's tokens are summed into one global token, which
// every token attends to besides its local neighbours, with a relative bias of (global block -
// the token's own block). These functions reproduce transformers' arithmetic step for step
// (a cumulative sum of float32 1 / global_block_size accumulated in float64 as torch's CPU
// cumsum does, the "orphan" tokens past the last full block moved into it, padding as block -1),
// so the block ids equal transformers' on any padding.
#pragma once

#include "builder/ops.h"

namespace mobius {

struct GlobalBlocks {
  Value* block_ids;  // int64 [batch, seq]: the global block of each token, -1 for padding
  Value* segments;   // int64 [batch, num_globals]: 1 for a block up to the row's last block id, else 0
  Value* positions;  // int64 [num_globals]: 0 .. num_globals - 1
};

// _make_global_fixed_block_ids. attention_mask: int64 [batch, seq] (1 token, 0 padding).
GlobalBlocks fixed_global_blocks(Ops& op, Value* attention_mask, int64_t global_block_size);

// _create_global_aggregates: the sum of the tokens of each block (padding belongs to none).
// hidden: [batch, seq, d] -> [batch, num_globals, d].
Value* global_aggregates(Ops& op, Value* hidden, const GlobalBlocks& g);

// _make_side_relative_position_ids: global position - the token's block id, int64
// [batch, seq, num_globals] (the key-minus-query distance the side bias is looked up by).
Value* side_relative_positions(Ops& op, const GlobalBlocks& g);

// compute_side_bias' mask: a token (attention_mask 1) may attend the blocks whose segment is 1,
// a padding token those whose segment is 0. Returns bool [batch, 1, seq, num_globals].
Value* side_attention_allowed(Ops& op, Value* attention_mask, const GlobalBlocks& g);

}  // namespace mobius
