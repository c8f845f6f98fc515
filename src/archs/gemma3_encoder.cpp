// EmbeddingGemma: gemma3_text with use_bidirectional_attention (transformers/models/gemma3/
// modeling_gemma3.py Gemma3TextModel, configuration_gemma3.py), task feature-extraction, the
// Transformer module of a sentence-transformers model (google/embeddinggemma-300m: mean pooling,
// two Dense layers, Normalize; tasks/sentence_embedding.h):
//   the gemma3_text decoder of archs/gemma.h gemma_decoder_spec (embeddings scaled by
//   hidden_size**0.5, sandwich norms, q/k norms, RoPE per layer type), its layers run once over
//   the whole sequence without a cache, last_hidden_state = norm(layers(...));
//   attention (Gemma3Attention.is_causal = not use_bidirectional_attention): a full_attention layer
//   sees every token of attention_mask; a sliding_attention layer the tokens with |i - j| <
//   sliding_window (Gemma3TextConfig.__post_init__ makes it config.json's sliding_window // 2 + 1,
//   _bidirectional_window_overlay or-ed with the causal window), i.e. |i - j| <= sliding_window // 2
//   of config.json; positions 0..seq-1 (RoPE and the window depend on i - j only, so padding on
//   either side does not change a token's result).
// Checkpoint keys as Gemma3TextModel saves them: embed_tokens, layers.*, norm (no "model." prefix);
// the encoder: archs/bidirectional_decoder.h.
#include "archs/bidirectional_decoder.h"
#include "archs/gemma.h"

namespace mobius {

std::unique_ptr<Architecture> create_gemma3_text_encoder(const HfConfig& c, DataType dtype) {
  const DecoderSpec s = gemma_decoder_spec(c, dtype, "gemma3_text");
  return std::make_unique<BidirectionalDecoder>(s, s.sliding_window / 2);
}

}  // namespace mobius
