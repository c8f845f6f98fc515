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
// Checkpoint keys as Gemma3TextModel saves them: embed_tokens, layers.*, norm (no "model." prefix).
#include <map>

#include "archs/gemma.h"
#include "blocks/local_attention_mask.h"
#include "blocks/spec_check.h"
#include "tasks/feature_extraction.h"

namespace mobius {
namespace {

class Gemma3TextEncoder : public Encoder {
 public:
  explicit Gemma3TextEncoder(const DecoderSpec& s) : spec_(s) {
    check_spec(s);
    model = child<TextDecoder>("", s);
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return false; }
  const Embedding* word_embeddings() const override { return model->embed_tokens; }

  Value* forward(Ops& op, const EncoderInputs& in) const override {
    GraphBuilder& b = op.builder();
    Value* h = model->embed_tokens->forward(op, in.input_ids);
    if (spec_.embed_scale != 1.0f) h = op.Mul(h, spec_.embed_scale);
    Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
    Value* positions = op.Expand(op.Range(b.scalar_i64(0), seq, b.scalar_i64(1)), op.Shape(in.input_ids));
    std::map<std::string, AttentionContext> contexts;
    for (const std::string& type : spec_.layer_types) {
      if (contexts.count(type)) continue;
      Value* mask = type == "sliding_attention"
                        ? local_padding_mask(op, in.attention_mask, spec_.sliding_window / 2, spec_.dtype)
                        : padding_mask(op, in.attention_mask, spec_.dtype);
      contexts.emplace(type, AttentionContext{mask, rope_tables(op, spec_.rope_for(type), positions, spec_.dtype)});
    }
    for (size_t i = 0; i < model->layers.size(); ++i)
      h = model->layers[i]->forward(op, h, contexts.at(spec_.layer_types[i]), {}).hidden;
    return model->norm->forward(op, h);
  }

  TextDecoder* model;

 private:
  DecoderSpec spec_;
};

}  // namespace

std::unique_ptr<Architecture> create_gemma3_text_encoder(const HfConfig& c, DataType dtype) {
  return std::make_unique<Gemma3TextEncoder>(gemma_decoder_spec(c, dtype, "gemma3_text"));
}

}  // namespace mobius
