// wav2vec2-bert, the w2v-BERT 2.0 encoder (transformers/models/wav2vec2_bert/modular_wav2vec2_bert.py,
// Wav2Vec2BertModel): no conv front-end; input_features, the stacked 80-bin filterbank frames
// of SeamlessM4TFeatureExtractor [batch, frames, feature_projection_input_dim], with the frame-level
// attention_mask ->
//   feature_projection: LayerNorm(feature_projection_input_dim, eps layer_norm_eps) -> projection
//   encoder: the conformer stack in its wav2vec2-bert layout (blocks/conformer.h,
//     ConformerLayout::bert), position_embeddings_type "relative_key" (default), "relative",
//     "rotary" or null
//   -> last_hidden_state; lm_head for Wav2Vec2BertForCTC.
// Keys nest under "wav2vec2_bert." for every head but the bare model (archs/wav2vec2.h rule).
// Not supported: add_adapter (the conv adapter after the encoder), and with it
// use_intermediate_ffn_before_adapter (which Wav2Vec2BertConfig accepts only with an adapter).
#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/conformer.h"
#include "tasks/audio_feature_extraction.h"

namespace mobius {
namespace {

struct Wav2Vec2BertSizes {
  ConformerOptions conformer;
  int64_t input_dim;
  std::string prefix;
  int64_t ctc_vocab_size = 0;
};

class Wav2Vec2BertModel : public AudioEncoder {
 public:
  explicit Wav2Vec2BertModel(const Wav2Vec2BertSizes& s) : s_(s) {
    const AudioEncoderOptions& e = s.conformer.encoder;
    feature_norm = child<LayerNorm>(s.prefix + "feature_projection.layer_norm",
                                    NormOptions{.dim = s.input_dim, .eps = e.layer_norm_eps, .dtype = e.dtype,
                                                .kind = NormKind::LayerNorm});
    projection = child<Linear>(s.prefix + "feature_projection.projection",
                               LinearOptions{s.input_dim, e.hidden_size, true, e.dtype});
    encoder = child<ConformerEncoder>(s.prefix + "encoder", s.conformer);
    if (s.ctc_vocab_size > 0)
      lm_head = child<Linear>("lm_head", LinearOptions{e.hidden_size, s.ctc_vocab_size, true, e.dtype});
  }
  DataType dtype() const override { return s_.conformer.encoder.dtype; }
  int64_t hidden_size() const override { return s_.conformer.encoder.hidden_size; }
  int64_t ctc_vocab_size() const override { return s_.ctc_vocab_size; }
  bool uses_attention_mask() const override { return true; }
  int64_t feature_size() const override { return s_.input_dim; }

  AudioEncoderOutputs forward(Ops& op, Value* input_features, Value* attention_mask) const override {
    Value* h = projection->forward(op, feature_norm->forward(op, input_features));
    h = encoder->forward(op, h, op.Cast(attention_mask, {.to = DataType::BOOL}));
    return {h, lm_head ? lm_head->forward(op, h) : nullptr};
  }

  LayerNorm* feature_norm;
  Linear* projection;
  ConformerEncoder* encoder;
  Linear* lm_head = nullptr;

 private:
  Wav2Vec2BertSizes s_;
};

}  // namespace

std::unique_ptr<Architecture> create_wav2vec2_bert(const HfConfig& c, DataType dtype) {
  if (c.bool_or("add_adapter", false))
    c.fail("add_adapter", "the adapter after the encoder is not supported (only add_adapter false)");
  Wav2Vec2BertSizes s;
  ConformerOptions& o = s.conformer;
  o.layout = ConformerLayout::bert;
  AudioEncoderOptions& e = o.encoder;
  e.hidden_size = c.get_int("hidden_size");
  e.num_hidden_layers = c.get_int("num_hidden_layers");
  e.num_attention_heads = c.get_int("num_attention_heads");
  if (e.num_attention_heads < 1 || e.hidden_size % e.num_attention_heads != 0)
    c.fail("num_attention_heads", std::to_string(e.num_attention_heads) + " must divide hidden_size " +
                                      std::to_string(e.hidden_size));
  e.intermediate_size = c.get_int("intermediate_size");
  e.hidden_act = c.string_or("hidden_act", "swish");
  if (!is_known_activation(e.hidden_act) || e.hidden_act == "xielu")
    c.fail("hidden_act", "unsupported activation '" + e.hidden_act + "'");
  e.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-5));
  e.dtype = dtype;
  s.input_dim = c.int_or("feature_projection_input_dim", 160);
  if (s.input_dim < 1 || s.input_dim > kMaxHiddenSize)
    c.fail("feature_projection_input_dim", "expected a value in [1, " + std::to_string(kMaxHiddenSize) + "]");
  if (c.json().contains("position_embeddings_type") && c.json()["position_embeddings_type"].is_null()) {
    o.positions = ConformerPositions::none;
  } else {
    const std::string type = c.string_or("position_embeddings_type", "relative_key");
    if (type == "relative_key") o.positions = ConformerPositions::relative_key;
    else if (type == "relative") o.positions = ConformerPositions::relative;
    else if (type == "rotary") o.positions = ConformerPositions::rotary;
    else c.fail("position_embeddings_type", "expected 'relative_key', 'relative', 'rotary' or null, got '" + type + "'");
  }
  o.rotary_embedding_base = c.float_or("rotary_embedding_base", 10000);
  if (!(o.rotary_embedding_base > 0)) c.fail("rotary_embedding_base", "expected a value > 0");
  o.left_max_position_embeddings = c.int_or("left_max_position_embeddings", 64);
  o.right_max_position_embeddings = c.int_or("right_max_position_embeddings", 8);
  if (o.left_max_position_embeddings < 0 || o.left_max_position_embeddings > kMaxPositions)
    c.fail("left_max_position_embeddings", "expected a value in [0, 2^24]");
  if (o.right_max_position_embeddings < 0 || o.right_max_position_embeddings > kMaxPositions)
    c.fail("right_max_position_embeddings", "expected a value in [0, 2^24]");
  o.conv_depthwise_kernel_size = c.int_or("conv_depthwise_kernel_size", 31);
  if (o.conv_depthwise_kernel_size < 1 || o.conv_depthwise_kernel_size % 2 == 0 ||
      o.conv_depthwise_kernel_size > kMaxPositions)
    c.fail("conv_depthwise_kernel_size", "expected an odd kernel size");
  if (c.bool_or("use_intermediate_ffn_before_adapter", false))
    c.fail("use_intermediate_ffn_before_adapter", "needs add_adapter (Wav2Vec2BertConfig), which is not supported");
  std::string arch;
  if (c.json().contains("architectures") && c.json()["architectures"].is_array() && !c.json()["architectures"].empty() &&
      c.json()["architectures"][0].is_string())
    arch = c.json()["architectures"][0].get<std::string>();
  s.prefix = arch.empty() || arch.ends_with("Model") ? "" : "wav2vec2_bert.";
  if (arch.ends_with("ForCTC")) s.ctc_vocab_size = c.get_int("vocab_size");
  return std::make_unique<Wav2Vec2BertModel>(s);
}

}  // namespace mobius
