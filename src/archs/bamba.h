// Bamba's Mamba-2 layers (archs/bamba.cpp), which GraniteMoeHybrid shares
// (archs/granitemoehybrid.cpp: GraniteMoeHybridMambaLayer is BambaMixer, its config the same
// mamba_* fields and defaults).
#pragma once

#include <string>
#include <vector>

#include "archs/mamba.h"
#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// The Mamba-2 mixer of BambaConfig's fields: mamba_n_heads, mamba_d_head ("auto": mamba_expand *
// hidden_size // mamba_n_heads), mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_expand,
// mamba_chunk_size, mamba_conv_bias, mamba_proj_bias, time_step_limit; its activation is
// hidden_act (s.mlp.hidden_act) and its gated norm's epsilon rms_norm_eps (s.norm_eps). Throws
// mobius::Error naming the field.
Mamba2Options bamba_mamba_options(const HfConfig& c, const DecoderSpec& s);

// DecoderSpec::make_mixer: the Mamba-2 mixer `m` as "mamba" on the layers whose layer_types entry
// is "linear_attention", self-attention on the others.
LayerMixerFactory mamba_on_linear_attention(std::vector<std::string> layer_types, const Mamba2Options& m);

}  // namespace mobius
