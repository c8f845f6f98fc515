// The one validation step every architecture goes through: the relations between the sizes of a
// built DecoderSpec or EncoderSpec (config.json's fields after each architecture's reading and
// defaults), checked before any module is constructed. The ranges of single fields are checked
// where they are read (config/hf_config.h); this checks what only the combination says:
//   - sizes positive and within the caps of config/hf_config.h (computed ones too, such as
//     head_dim = hidden_size / num_attention_heads), their products within int64;
//   - num_key_value_heads divides num_attention_heads (grouped-query attention, transformers
//     repeat_kv);
//   - every RoPE in use rotates an even number of channels, at least 2 (rotate_half splits them in
//     halves), with rope_theta and factor finite and positive, and max_position_embeddings within
//     the cap (the tables are sized from it);
//   - eps finite and positive, multipliers finite, sliding_window not negative.
// Throws mobius::FieldError "field '<HF field>': <what>" (util/error.h; build_package names the file).
#pragma once

#include "blocks/decoder.h"
#include "blocks/encoder.h"
#include "blocks/gated_delta_net.h"
#include "blocks/mamba.h"
#include "blocks/mamba2.h"

namespace mobius {

void check_spec(const DecoderSpec& spec);
// One size, computed or read, within [min, max] (the caps of config/hf_config.h). Throws
// mobius::FieldError "field '<field>': is V, expected MIN to MAX".
void check_size(const std::string& field, int64_t v, int64_t max, int64_t min = 1);
// The sizes of a SparseMoE feed-forward, and of the dense MLP of the other layers when there are
// any (blocks/decoder.h sparse_moe).
void check_moe(const MoEOptions& m, const MLPOptions& dense, bool dense_layers);
// The sizes of one attention part (heads, head_dim, their products), for an architecture that
// injects its own (DecoderSpec::make_attention).
void check_attention(const AttentionOptions& a);
// A learned position table of `rows` rows, read from config field `field`, within the cap.
void check_position_table(const std::string& field, int64_t rows);
void check_spec(const EncoderSpec& spec);
// The sizes of a Mamba mixer (blocks/mamba.h): hidden_size, intermediate_size (expand *
// hidden_size), state_size, time_step_rank within the caps, conv_kernel 2 to kMaxSmallSize (the
// conv state keeps kernel - 1 inputs), a known hidden_act, mixer_rms_eps in (0, 1].
void check_mamba(const MambaOptions& o);
// The sizes of a Mamba-2 mixer (blocks/mamba2.h): num_heads, head_dim, n_groups (dividing
// num_heads and the intermediate size), state_size, conv_kernel (2 to kMaxSmallSize), chunk_size within the
// caps, the projection and conv widths too; a known hidden_act, layer_norm_epsilon in (0, 1].
void check_mamba2(const Mamba2Options& o);
// The sizes of a gated DeltaNet mixer (blocks/gated_delta_net.h): hidden_size, the key and value
// heads (linear_num_key_heads dividing linear_num_value_heads) and head dims within the caps,
// linear_conv_kernel_dim 2 to kMaxSmallSize, the projection and conv widths too; a known
// hidden_act, rms_norm_eps in (0, 1].
void check_gated_delta_net(const GatedDeltaNetOptions& o);

}  // namespace mobius
