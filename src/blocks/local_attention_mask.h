// The additive mask of local (sliding-window) bidirectional attention over a padded batch: query i
// attends to key j iff j is a token (attention_mask 1) and |i - j| <= one_sided. It is what the
// blocked local attentions compute for the tokens they keep: LongT5LocalAttention
// (transformers/models/longt5/modeling_longt5.py, _get_local_attention_mask: |i - j| < block_len =
// local_radius + 1) and Longformer's sliding chunks in LED's encoder
// (transformers/models/led/modeling_led.py, one-sided attention_window / 2), built here as full
// attention under a band.
#pragma once

#include <cstdint>
#include <vector>

#include "builder/ops.h"
#include "config/hf_config.h"

namespace mobius {

// attention_mask int64 [batch, seq], one_sided >= 0 -> additive [batch, 1, seq, seq] in `dtype`
// (0 where attended, the dtype's lowest value elsewhere: blocks/attention.h additive_mask).
// global_keys (bool [batch, seq], tokens only; null: none): keys every query also attends, inside
// the band or not (Longformer's global attention: LongformerSelfAttention's global key columns).
Value* local_padding_mask(Ops& op, Value* attention_mask, int64_t one_sided, DataType dtype,
                          Value* global_keys = nullptr);

// config.json's attention_window as LongformerConfig / LEDConfig hold it (LongformerSelfAttention,
// transformers/models/longformer/modeling_longformer.py): one window per layer, from an int (every
// layer) or a list of `layers` ints; absent or null: 512 (the class default). Throws mobius::Error
// naming attention_window for a list of another length, a non-integer, or a window that is not
// even and positive (up to 2^30).
std::vector<int64_t> longformer_attention_windows(const HfConfig& c, int64_t layers);

}  // namespace mobius
