// Granite's parts its relatives reuse (archs/granite.cpp).
#pragma once

#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// GraniteSWAAttention's layer plan on `s` (granite_swa, granitemoe_swa; granite_swa/
// modular_granite_swa.py): a learned per-head sink logit (`sinks`; transformers scales the softmax
// output by sigmoid(logsumexp - sink), the same as a sink logit in the denominator),
// layer_types (default: layer i full when i % 4 == 0, else sliding by sliding_window, 128), and
// RoPE per layer from layer_rope_theta (0: NoPE; one nonzero theta per layer type). Throws
// mobius::Error naming the field.
void granite_swa_attention(const HfConfig& c, DecoderSpec& s);

}  // namespace mobius
