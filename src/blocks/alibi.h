// ALiBi, attention with linear biases (Press et al., arXiv:2108.12409): each head h adds
// slope[h] * position(key j) to its attention scores, in place of position embeddings. Softmax is
// invariant to a constant per query row, so a bias on the key position alone equals the paper's
// -slope * (i - j). The bias is added to the additive causal mask given to the Attention op.
//   Bloom  (transformers/models/bloom/modeling_bloom.py build_alibi_tensor): slopes of
//          _get_alibi_slopes; position = (cumsum(attention_mask) - 1) * attention_mask, so a
//          left-padded row counts from its first token; added to the scaled scores.
//   Falcon (transformers/models/falcon/modeling_falcon.py build_alibi_tensor): the same slopes and
//          positions, the slopes and the product rounded to bfloat16; divided by sqrt(head_dim)
//          (scale) as FalconModel folds it into the mask (the SDPA path).
//   MPT    (transformers/models/mpt/modeling_mpt.py build_mpt_alibi_tensor): slopes
//          1 / 2^(k * alibi_bias_max / n) on the next power of two n; position j - (total - 1) of
//          the key in the cache, here j (the per-row constant dropped, so that the bias is never
//          negative and cannot push a masked score past the dtype's lowest value).
#pragma once

#include <vector>

#include "builder/ops.h"

namespace mobius {

enum class AlibiPositions {
  MaskCumsum,  // (cumsum(attention_mask) - 1) * attention_mask  (Bloom, Falcon)
  KeyIndex,    // j, the key's index in the cache                (MPT)
};

struct AlibiOptions {
  std::vector<float> slopes;  // one per attention head
  AlibiPositions positions = AlibiPositions::MaskCumsum;
  float scale = 1.0f;             // bias multiplier (Falcon: 1 / sqrt(head_dim))
  bool bfloat16_product = false;  // slope, position and product rounded to bfloat16 (Falcon)
};

// _get_alibi_slopes (Bloom; Falcon's build_alibi_tensor): with c the largest power of two <= n,
// (2^(-8/c))^k for k = 1..c, then (2^(-4/c))^k for odd k = 1, 3, .. up to n - c more heads.
std::vector<float> alibi_slopes(int64_t num_heads);
// build_mpt_alibi_tensor: with n the smallest power of two >= num_heads, 1 / 2^(k * max / n) for
// k = 1..n; when n != num_heads the odd-indexed slopes then the even-indexed, first num_heads.
std::vector<float> mpt_alibi_slopes(int64_t num_heads, double alibi_bias_max);

// The bias: attention_mask int64 [batch, total_seq] -> [batch or 1, heads, 1, total_seq] in
// `dtype` (computed in float32), to be added to a [batch, 1, seq, total_seq] causal mask.
Value* alibi_bias(Ops& op, const AlibiOptions& o, Value* attention_mask, DataType dtype);

}  // namespace mobius
