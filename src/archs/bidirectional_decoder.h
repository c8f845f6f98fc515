// A Llama-style decoder stack (blocks/decoder.h TextDecoder) run as a bidirectional text encoder,
// task feature-extraction, with the family's heads (tasks/text_heads.h) where it has them:
//   last_hidden_state = norm(layers(embed_tokens(input_ids) * embed_scale)), each layer run once
//   over the whole sequence without a cache; positions 0..seq-1 (RoPE per layer type:
//   DecoderSpec::rope_for); a "full_attention" layer sees every token of attention_mask, a
//   "sliding_attention" layer the tokens j with |i - j| <= `window` (blocks/local_attention_mask.h).
// RoPE and the window depend on i - j only, so padding on either side leaves a token's result as
// the unpadded sequence's. Without DecoderSpec::names.norm no final norm (ESM C adds its own).
// Used by EmbeddingGemma (archs/gemma3_encoder.cpp), EuroBERT (archs/eurobert.cpp), UltraBERT
// (archs/ultrabert.cpp) and ESM C (archs/esmc.cpp). Module names: DecoderSpec::names
// (embed_tokens, layers.*, norm; the encoder at the root of its own checkpoint, under the heads'
// base_model_prefix in a head checkpoint).
#pragma once

#include <optional>

#include "blocks/decoder.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"

namespace mobius {

class BidirectionalDecoder : public Encoder {
 public:
  // s: the decoder (its DecoderSpec::check_spec'd sizes); window: the one-sided reach of the
  // sliding_attention layers (unread without one); heads: none for a type without head classes.
  BidirectionalDecoder(const DecoderSpec& s, int64_t window, std::optional<TextHeadLayout> heads = {});
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return false; }
  const Embedding* word_embeddings() const override { return model->embed_tokens; }
  const TextHeadLayout* head_layout() const override { return heads_ ? &*heads_ : nullptr; }
  // input_ids, attention_mask int64 [batch, seq] -> last_hidden_state [batch, seq, hidden_size].
  Value* forward(Ops& op, const EncoderInputs& in) const override;

  TextDecoder* model;

 private:
  DecoderSpec spec_;
  int64_t window_;
  std::optional<TextHeadLayout> heads_;
};

}  // namespace mobius
