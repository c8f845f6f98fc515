// Whisper (transformers/models/whisper/modeling_whisper.py, configuration_whisper.py) under
// speech-to-text (tasks/speech_to_text.h): WhisperForConditionalGeneration.
//   encoder: conv1 (Conv1d num_mel_bins -> d_model, kernel 3, padding 1), GELU, conv2 (d_model ->
//            d_model, kernel 3, stride 2, padding 1), GELU; + embed_positions.weight, the whole
//            [max_source_positions, d_model] table (sinusoidal, stored in the checkpoint); the
//            pre-norm layers of blocks/seq2seq_layer.h (k_proj without bias), layer_norm.
//            audio_features has 2 * max_source_positions frames (3000 for every released size).
//   decoder: embed_tokens + embed_positions (learned, positions past..past + seq), the pre-norm
//            decoder layers, layer_norm; proj_out tied to embed_tokens (tie_word_embeddings,
//            default true).
//   The encoder graph also projects every decoder layer's encoder_attn keys and values of its
//   output (the cross caches onnxruntime-genai carries); the decoder's cross-attention reads them.
// scale_embedding is read by transformers but never applied (WhisperEncoder / WhisperDecoder
// compute embed_scale and do not use it), so it is ignored here too. Sizes: every released size
// (tiny .. large-v3 with 128 mel bins, large-v3-turbo's 4 decoder layers) is one config.
// Fields: d_model, encoder_/decoder_layers, encoder_/decoder_attention_heads, encoder_/decoder_ffn_dim,
// activation_function, num_mel_bins, max_source_positions, max_target_positions,
// tie_word_embeddings; LayerNorm eps 1e-5. The float16 clamp of WhisperEncoderLayer (values past
// float16's range) is not modeled.
#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/conv.h"
#include "blocks/position_embedding.h"
#include "blocks/seq2seq_layer.h"
#include "registry/config_defaults.h"
#include "tasks/speech_to_text.h"

namespace mobius {
namespace {

struct WhisperSpec {
  int64_t vocab_size, d_model, num_mel_bins, max_source_positions, max_target_positions;
  int64_t encoder_layers, decoder_layers;
  Seq2SeqLayerOptions encoder, decoder;
  bool tied;
  DataType dtype;
};

// WhisperConfig's attribute_map aliases win over the fields; the class defaults of fields
// config.json leaves out are filled in before (registry/config_defaults.h).
WhisperSpec whisper_spec(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"hidden_size", "d_model"},
                                                 {"num_attention_heads", "encoder_attention_heads"},
                                                 {"num_key_value_heads", "encoder_attention_heads"},
                                                 {"num_hidden_layers", "encoder_layers"}});
  WhisperSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.d_model = c.int_or("d_model", 384);
  s.num_mel_bins = c.int_or("num_mel_bins", 80);
  s.max_source_positions = c.int_or("max_source_positions", 1500);
  s.max_target_positions = c.int_or("max_target_positions", 448);
  s.encoder_layers = c.int_or("encoder_layers", 4);
  s.decoder_layers = c.int_or("decoder_layers", 4);
  if (s.d_model < 1) c.fail("d_model", "must be at least 1");
  if (s.num_mel_bins < 1) c.fail("num_mel_bins", "must be at least 1");
  if (s.max_source_positions < 1) c.fail("max_source_positions", "must be at least 1");
  if (s.max_target_positions < 1) c.fail("max_target_positions", "must be at least 1");
  if (s.decoder_layers < 1) c.fail("decoder_layers", "must be at least 1");
  const std::string act = c.string_or("activation_function", "gelu");
  if (!is_known_activation(act)) c.fail("activation_function", "unsupported activation '" + act + "'");
  auto side = [&](const char* heads_field, int64_t num_heads, int64_t ffn_dim) {
    Seq2SeqLayerOptions o{.d_model = s.d_model, .num_heads = num_heads, .ffn_dim = ffn_dim,
                          .activation_function = act, .k_bias = false, .placement = NormPlacement::pre,
                          .dtype = dtype};
    if (o.num_heads <= 0 || s.d_model % o.num_heads != 0) c.fail(heads_field, "must divide d_model");
    return o;
  };
  s.encoder = side("encoder_attention_heads", c.int_or("encoder_attention_heads", 6), c.int_or("encoder_ffn_dim", 1536));
  s.decoder = side("decoder_attention_heads", c.int_or("decoder_attention_heads", 6), c.int_or("decoder_ffn_dim", 1536));
  s.tied = c.bool_or("tie_word_embeddings", true);
  return s;
}

NormOptions norm_options(const WhisperSpec& s) {
  return {.dim = s.d_model, .eps = 1e-5f, .dtype = s.dtype, .kind = NormKind::LayerNorm};
}

// WhisperEncoder: the front-end, the positions, the layers and the final norm.
class WhisperEncoder : public Module {
 public:
  explicit WhisperEncoder(const WhisperSpec& s) {
    conv1 = child<Conv1d>("conv1", Conv1dOptions{.in_channels = s.num_mel_bins, .out_channels = s.d_model,
                                                 .kernel_size = 3, .padding = 1, .dtype = s.dtype});
    conv2 = child<Conv1d>("conv2", Conv1dOptions{.in_channels = s.d_model, .out_channels = s.d_model,
                                                 .kernel_size = 3, .stride = 2, .padding = 1, .dtype = s.dtype});
    embed_positions = child<Embedding>("embed_positions", s.max_source_positions, s.d_model, s.dtype);
    for (int64_t i = 0; i < s.encoder_layers; ++i)
      layers.push_back(child<Seq2SeqEncoderLayer>("layers." + std::to_string(i), s.encoder));
    layer_norm = adopt("layer_norm", make_norm(norm_options(s)));
  }
  // input_features [batch, num_mel_bins, 2 * max_source_positions] -> [batch, max_source_positions, d_model]
  Value* forward(Ops& op, Value* input_features) const {
    auto sc = enter(op);
    Value* h = op.Gelu(conv1->forward(op, input_features));
    h = op.Gelu(conv2->forward(op, h));
    h = op.Add(op.Transpose(h, {.perm = {0, 2, 1}}), embed_positions->weight->value(op));
    for (const Seq2SeqEncoderLayer* l : layers) h = l->forward(op, h, nullptr);
    return layer_norm->forward(op, h);
  }

  Conv1d *conv1, *conv2;
  Embedding* embed_positions;
  std::vector<Seq2SeqEncoderLayer*> layers;
  Norm* layer_norm;
};

// WhisperDecoder without its layers' loop: the embeddings and the final norm.
class WhisperDecoder : public Module {
 public:
  explicit WhisperDecoder(const WhisperSpec& s) {
    embed_tokens = child<Embedding>("embed_tokens", s.vocab_size, s.d_model, s.dtype);
    embed_positions = child<LearnedPositionEmbedding>("embed_positions", s.max_target_positions, s.d_model, 0, s.dtype);
    for (int64_t i = 0; i < s.decoder_layers; ++i)
      layers.push_back(child<Seq2SeqDecoderLayer>("layers." + std::to_string(i), s.decoder));
    layer_norm = adopt("layer_norm", make_norm(norm_options(s)));
  }
  // input_ids [batch, seq]; past: int64 [1], the position of the first token.
  Value* embed(Ops& op, Value* input_ids, Value* past) const {
    auto sc = enter(op);
    Value* start = op.Squeeze(past, {0});
    Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
    Value* ids = op.Unsqueeze(op.Range(start, op.Add(start, seq), op.builder().scalar_i64(1)), {0});
    return op.Add(embed_tokens->forward(op, input_ids), embed_positions->forward(op, ids));
  }
  Value* finish(Ops& op, Value* h) const {
    auto sc = enter(op);
    return layer_norm->forward(op, h);
  }

  Embedding* embed_tokens;
  LearnedPositionEmbedding* embed_positions;
  std::vector<Seq2SeqDecoderLayer*> layers;
  Norm* layer_norm;
};

class WhisperForConditionalGeneration : public SpeechToText {
 public:
  explicit WhisperForConditionalGeneration(const WhisperSpec& s) : s_(s) {
    encoder = child<WhisperEncoder>("model.encoder", s_);
    decoder = child<WhisperDecoder>("model.decoder", s_);
    proj_out = child<LMHead>("proj_out", LMHeadOptions{s.d_model, s.vocab_size, false, s.dtype},
                             s.tied ? decoder->embed_tokens : nullptr);
  }

  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.d_model; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  int64_t num_mel_bins() const override { return s_.num_mel_bins; }
  int64_t num_frames() const override { return 2 * s_.max_source_positions; }
  Dim encoder_sequence_length() const override { return s_.max_source_positions; }
  std::vector<LayerStates> decoder_states() const override {
    return self_and_cross_states(s_.decoder_layers, s_.decoder.num_heads, s_.d_model / s_.decoder.num_heads);
  }

  SpeechEncoderOutputs encode(Ops& op, Value* audio_features, Value*) const override {
    SpeechEncoderOutputs out;
    out.encoder_hidden_states = encoder->forward(op, audio_features);
    return out;
  }

  std::vector<std::vector<KVPair>> project_cross(Ops& op, Value* encoder_hidden_states) const override {
    std::vector<std::vector<KVPair>> cross;
    for (const Seq2SeqDecoderLayer* l : decoder->layers) {
      auto sc = op.builder().scope(l->path());  // the layer's nodes under its own name
      cross.push_back({l->encoder_attn->project(op, encoder_hidden_states)});
    }
    return cross;
  }

  SpeechDecoderOutputs decode(Ops& op, const SpeechDecoderInputs& in) const override {
    SpeechDecoderOutputs out;
    Value* past = op.Shape(in.past[0][0].key, {.start = 2, .end = 3});
    Value* h = decoder->embed(op, in.input_ids, past);
    Value* self_mask = decoder_causal_mask(op, in.input_ids, past, s_.dtype);
    for (size_t i = 0; i < decoder->layers.size(); ++i) {
      auto [y, present] = decoder->layers[i]->forward(op, h, self_mask, in.encoder_hidden_states, nullptr, in.past[i]);
      h = y;
      // the self cache; the cross cache is the encoder's, or (Optimum's contract) carried here
      if (!in.encoder_hidden_states) present.resize(1);
      out.present.push_back(present);
    }
    out.logits = proj_out->forward(op, decoder->finish(op, h));
    return out;
  }

  WhisperEncoder* encoder;
  WhisperDecoder* decoder;
  LMHead* proj_out;

 private:
  WhisperSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_whisper(const HfConfig& c, DataType dtype) {
  return std::make_unique<WhisperForConditionalGeneration>(whisper_spec(c, dtype));
}

}  // namespace mobius
