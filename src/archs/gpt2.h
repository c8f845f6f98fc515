// The GPT-2 module layout, shared by gpt2, gpt_bigcode and gpt_neo (transformers/models/
// {gpt2,gpt_bigcode,gpt_neo}/modeling_*.py):
//   transformer.wte + transformer.wpe(position_ids) -> transformer.h.{i}: pre-norm
//   ln_1 -> attn -> ln_2 -> mlp.c_fc -> act -> mlp.c_proj -> transformer.ln_f -> lm_head (tied by
//   default to wte); LayerNorm with bias (layer_norm_epsilon), no RoPE.
// GptCausalLM is the decoder of GPT-2 and of the relatives that differ from Llama's around the
// layers: learned absolute positions (GPT-2, GPT-Neo, GPTBigCode, OPT, BioGPT), fixed sinusoidal
// ones (XGLM, CTRL), a norm on the embeddings
// (Bloom), ALiBi added to the masks (Bloom, MPT, Falcon with alibi), OPT's project_in / project_out
// when its embeddings are narrower than the layers:
//   x0 = embed_layernorm(project_in(embed_tokens(ids) * embed_scale) + positions(position_ids));
//   out = lm_head(project_out(norm(h)))
#pragma once

#include <functional>
#include <optional>

#include "archs/attention_config.h"
#include "blocks/alibi.h"
#include "blocks/decoder.h"
#include "blocks/position_embedding.h"
#include "config/hf_config.h"

namespace mobius {

// Learned absolute positions: <model>.<name>, num_embeddings rows looked up at position_ids +
// offset (blocks/position_embedding.h).
struct PositionEmbeddingSpec {
  std::string name;  // wpe (GPT-2), embed_positions (OPT)
  int64_t num_embeddings;
  int64_t offset = 0;
};

// Fixed positions computed from position_ids (int64 [batch, seq]) -> [batch, seq, hidden_size] in
// the model dtype: a sinusoidal table of blocks/sinusoidal_position.h (XGLM, CTRL).
using FixedPositions = std::function<Value*(Ops& op, Value* position_ids)>;

// What a GPT-style decoder adds around the Llama-style layers of `decoder`.
struct GptSpec {
  DecoderSpec decoder;  // decoder.embedding_dim != hidden_size: project_in / project_out (OPT)
  std::optional<PositionEmbeddingSpec> positions = {};
  FixedPositions fixed_positions = {};  // added to the embeddings like `positions`; null: none
  std::string embed_layernorm = {};        // <model>.<name> on the embeddings; empty: none (Bloom:
                                           // word_embeddings_layernorm)
  std::optional<AlibiOptions> alibi = {};  // added to every layer's mask
};

class GptCausalLM : public DecoderCausalLM {
 public:
  // Throws mobius::FieldError on a position table beyond the cap (max_position_embeddings).
  explicit GptCausalLM(const GptSpec& s);

 protected:
  Value* stem(Ops& op, Value* h, const CausalLMInputs& in) const override;
  Value* attention_bias(Ops& op, const CausalLMInputs& in) const override;
  Value* head_input(Ops& op, Value* h) const override;

 private:
  std::optional<AlibiOptions> alibi_;
  FixedPositions fixed_positions_;
  LearnedPositionEmbedding* embed_positions_ = nullptr;
  Norm* embed_layernorm_ = nullptr;
  Linear *project_in_ = nullptr, *project_out_ = nullptr;
};

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

// The shared spec: names, LayerNorm, learned positions (wpe), MLP (activation_function, with bias),
// multi-head attention with biases and the projections named c_attn / c_proj (each family then
// sets its q/k/v layout). Throws mobius::Error naming the config field on a missing size, a head
// count that does not divide the hidden size or an unknown activation_function.
GptSpec gpt2_layout_spec(const HfConfig& c, DataType dtype, const Gpt2Fields& f);

}  // namespace mobius
