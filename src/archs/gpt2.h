// The GPT-2 module layout, shared by gpt2, gpt_bigcode and gpt_neo (transformers/models/
// {gpt2,gpt_bigcode,gpt_neo}/modeling_*.py):
//   transformer.wte + transformer.wpe(position_ids) -> transformer.h.{i}: pre-norm
//   ln_1 -> attn -> ln_2 -> mlp.c_fc -> act -> mlp.c_proj -> transformer.ln_f -> lm_head (tied by
//   default to wte); LayerNorm with bias (layer_norm_epsilon), no RoPE.
#pragma once

#include "archs/attention_config.h"
#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// vocab_size, the width and depth in fields `hidden_size` and `num_hidden_layers` (each family's
// names: n_embd / n_layer, d_model / n_layers, …), LayerNorm with bias of epsilon
// layer_norm_epsilon (default 1e-5), lm_head tied to the embedding unless tie_word_embeddings is
// false, every layer "full_attention": what the GPT-2-style configs (gpt2, gpt_bigcode, gpt_neo,
// gptj, opt, bloom, mpt, falcon) read alike. Throws mobius::Error naming a missing field.
DecoderSpec gpt_decoder_sizes(const HfConfig& c, DataType dtype, const char* hidden_size,
                              const char* num_hidden_layers);

// The config fields of each family (and the config class's defaults where they differ).
struct Gpt2Fields {
  const char* hidden_size;
  const char* num_layers;
  const char* num_heads;
  const char* max_positions;
  const char* inner_dim;           // the MLP width; null in the config: 4 * hidden_size
  const char* default_activation;  // when activation_function is absent
};

// The shared spec: names, LayerNorm, learned positions, MLP (activation_function, with bias),
// multi-head attention with biases and the projections named c_attn / c_proj (each family then
// sets its q/k/v layout). Throws mobius::Error naming the config field on a missing size, a head
// count that does not divide the hidden size or an unknown activation_function.
DecoderSpec gpt2_layout_spec(const HfConfig& c, DataType dtype, const Gpt2Fields& f);

}  // namespace mobius
