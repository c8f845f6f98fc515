// SEW-D (transformers/models/sew_d/modeling_sew_d.py, configuration_sew_d.py; SEWDModel,
// SEWDForCTC): SEW's conv feature encoder, feature projection and squeezed encoder (archs/sew.h,
// layer_norm eps feature_layer_norm_eps, conv layers SEWDConfig's 13 by default) around
// SEWDTransformerEncoder, a DeBERTa-v2 encoder (registered "encoder.encoder"):
//   r = LayerNorm(rel_embeddings.weight)        (norm_rel_ebd "layer_norm"; [2 * span, hidden])
//   each layer (SEWDLayer, post-norm BERT):
//     a = attention.output.LayerNorm(attention.output.dense(attention.self(h, r)) + h)
//     h = output.LayerNorm(output.dense(hidden_act(intermediate.dense(a))) + a)
//   after layer 0, with conv_kernel_size > 0 (ConvLayer, `conv`):
//     h = LayerNorm(h + conv_act(conv(h0) with padded frames zeroed)) * frame mask, h0 the layer's input
// attention.self is the disentangled attention (blocks/disentangled_attention.h): pos_att_type
// (c2p, p2c), share_att_key, position_buckets, max_relative_positions (< 1: max_position_embeddings),
// relative_attention. The squeezed frame mask is the padding mask of every layer (XSoftmax).
// Fields read as the config class and the modeling code do (getattr defaults): conv_kernel_size 0,
// conv_groups 1, conv_act "tanh", max_relative_positions -1, hidden_act "gelu_python" (exact GELU).
// attention_mask is a graph input for feat_extract_norm "layer", as for wav2vec2 (archs/wav2vec2.h).
#include <algorithm>
#include <cctype>
#include <sstream>

#include "archs/archs.h"
#include "archs/sew.h"
#include "blocks/activation.h"
#include "blocks/conv.h"
#include "blocks/disentangled_attention.h"

namespace mobius {
namespace {

struct SEWDOptions {
  AudioEncoderOptions encoder;
  DisentangledAttentionOptions attention;
  bool norm_rel_ebd = true;       // "layer_norm" in norm_rel_ebd
  int64_t conv_kernel_size = 0;   // > 0: ConvLayer after layer 0
  int64_t conv_groups = 1;
  std::string conv_act = "tanh";
};

NormOptions layer_norm(const AudioEncoderOptions& o) {
  return {.dim = o.hidden_size, .eps = o.layer_norm_eps, .dtype = o.dtype, .kind = NormKind::LayerNorm};
}

// SEWDLayer: forward(h [batch, n, hidden]) -> same.
class SEWDLayer : public Module {
 public:
  explicit SEWDLayer(const SEWDOptions& o) : act_(o.encoder.hidden_act) {
    const AudioEncoderOptions& e = o.encoder;
    self = child<DisentangledSelfAttention>("attention.self", o.attention);
    attention_dense = child<Linear>("attention.output.dense", LinearOptions{e.hidden_size, e.hidden_size, true, e.dtype});
    attention_norm = child<LayerNorm>("attention.output.LayerNorm", layer_norm(e));
    intermediate = child<Linear>("intermediate.dense", LinearOptions{e.hidden_size, e.intermediate_size, true, e.dtype});
    output = child<Linear>("output.dense", LinearOptions{e.intermediate_size, e.hidden_size, true, e.dtype});
    output_norm = child<LayerNorm>("output.LayerNorm", layer_norm(e));
  }
  Value* forward(Ops& op, Value* h, Value* rel, Value* index, Value* mask) const {
    auto s = enter(op);
    Value* a = self->forward(op, h, rel, index, mask);
    a = attention_norm->forward(op, op.Add(attention_dense->forward(op, a), h));
    Value* i = activation(op, act_, intermediate->forward(op, a));
    return output_norm->forward(op, op.Add(output->forward(op, i), a));
  }
  DisentangledSelfAttention* self;
  Linear *attention_dense, *intermediate, *output;
  LayerNorm *attention_norm, *output_norm;

 private:
  std::string act_;
};

// ConvLayer: h0, residual [batch, n, hidden]; valid bool [batch, n] or null -> [batch, n, hidden].
class ConvLayer : public Module {
 public:
  explicit ConvLayer(const SEWDOptions& o) : act_(o.conv_act) {
    const AudioEncoderOptions& e = o.encoder;
    conv = child<Conv1d>("conv", Conv1dOptions{.in_channels = e.hidden_size, .out_channels = e.hidden_size,
                                               .kernel_size = o.conv_kernel_size,
                                               .padding = (o.conv_kernel_size - 1) / 2,
                                               .groups = o.conv_groups, .dtype = e.dtype});
    norm = child<LayerNorm>("LayerNorm", layer_norm(e));
  }
  Value* forward(Ops& op, Value* h0, Value* residual, Value* valid) const {
    auto s = enter(op);
    Value* out = op.Transpose(conv->forward(op, op.Transpose(h0, {.perm = {0, 2, 1}})), {.perm = {0, 2, 1}});
    Value* frame = valid ? op.Unsqueeze(valid, {-1}) : nullptr;
    if (frame) out = op.Where(frame, out, 0.0);
    Value* y = norm->forward(op, op.Add(residual, activation(op, act_, out)));
    return frame ? op.Where(frame, y, 0.0) : y;
  }
  Conv1d* conv;
  LayerNorm* norm;

 private:
  std::string act_;
};

// SEWDTransformerEncoder.
class SEWDTransformerEncoder : public SpeechEncoderBody {
 public:
  explicit SEWDTransformerEncoder(const SEWDOptions& o) : o_(o) {
    for (int64_t i = 0; i < o.encoder.num_hidden_layers; ++i)
      layers.push_back(child<SEWDLayer>("layer." + std::to_string(i), o));
    if (o.attention.relative_attention) {
      rel_embeddings = child<Embedding>("rel_embeddings", 2 * o.attention.span(), o.encoder.hidden_size, o.encoder.dtype);
      if (o.norm_rel_ebd) rel_norm = child<LayerNorm>("LayerNorm", layer_norm(o.encoder));
    }
    if (o.conv_kernel_size > 0) conv = child<ConvLayer>("conv", o);
  }
  Value* forward(Ops& op, Value* h, Value* valid) const override {
    auto s = enter(op);
    Value* mask = valid ? padding_mask(op, op.Cast(valid, {.to = DataType::INT64}), o_.encoder.dtype) : nullptr;
    Value* rel = nullptr;
    Value* index = nullptr;
    if (rel_embeddings) {
      rel = rel_embeddings->weight->value(op);
      if (rel_norm) rel = rel_norm->forward(op, rel);
      index = disentangled_position_index(op, op.Shape(h, {.start = 1, .end = 2}), o_.attention);
    }
    Value* h0 = h;
    for (size_t i = 0; i < layers.size(); ++i) {
      h = layers[i]->forward(op, h, rel, index, mask);
      if (i == 0 && conv) h = conv->forward(op, h0, h, valid);
    }
    return h;
  }
  std::vector<SEWDLayer*> layers;
  Embedding* rel_embeddings = nullptr;
  LayerNorm* rel_norm = nullptr;
  ConvLayer* conv = nullptr;

 private:
  SEWDOptions o_;
};

// "a|b" -> {"a", "b"}, each stripped of spaces.
std::vector<std::string> split_entries(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, '|');) {
    const size_t first = part.find_first_not_of(' ');
    out.push_back(first == std::string::npos ? "" : part.substr(first, part.find_last_not_of(' ') - first + 1));
  }
  return out;
}

// pos_att_type: a list of "c2p" / "p2c", a "|"-separated string (DeBERTa's spelling), or null.
void read_pos_att_type(const HfConfig& c, DisentangledAttentionOptions& a) {
  a.c2p = a.p2c = true;  // SEWDConfig's ("p2c", "c2p")
  if (!c.json().contains("pos_att_type")) return;
  const nlohmann::json& v = c.json()["pos_att_type"];
  std::vector<std::string> kinds;
  if (v.is_string()) {
    kinds = split_entries(v.get<std::string>());
  } else if (v.is_array()) {
    for (const auto& e : v) {
      if (!e.is_string()) c.fail("pos_att_type", "expected a list of \"c2p\" / \"p2c\"");
      kinds.push_back(e.get<std::string>());
    }
  } else if (!v.is_null()) {
    c.fail("pos_att_type", "expected a list of \"c2p\" / \"p2c\"");
  }
  a.c2p = a.p2c = false;
  for (const std::string& k : kinds) {
    if (k == "c2p") a.c2p = true;
    else if (k == "p2c") a.p2c = true;
    else c.fail("pos_att_type", "unsupported entry '" + k + "' (expected c2p, p2c)");
  }
}

}  // namespace

std::unique_ptr<Architecture> create_sew_d(const HfConfig& c, DataType dtype) {
  Wav2Vec2Sizes s = wav2vec2_sizes(c, dtype, "sew_d", sew_conv_layout());
  s.encoder.placement = NormPlacement::post;
  SEWDOptions o{.encoder = s.encoder, .attention = {}};
  DisentangledAttentionOptions& a = o.attention;
  a.hidden_size = s.encoder.hidden_size;
  a.num_attention_heads = s.encoder.num_attention_heads;
  a.head_dim = s.encoder.hidden_size / s.encoder.num_attention_heads;
  a.relative_attention = c.bool_or("relative_attention", true);
  a.share_att_key = c.bool_or("share_att_key", true);
  read_pos_att_type(c, a);
  a.position_buckets = c.int_or("position_buckets", 256);
  a.max_relative_positions = c.int_or("max_relative_positions", -1);
  if (a.max_relative_positions < 1) a.max_relative_positions = c.int_or("max_position_embeddings", 512);
  a.dtype = dtype;
  if (a.relative_attention) {
    if (a.position_buckets > kMaxPositions) c.fail("position_buckets", "expected at most 2^24");
    if (a.max_relative_positions > kMaxPositions)
      c.fail("max_relative_positions", "expected at most 2^24");
    if (a.span() < 1) c.fail("max_position_embeddings", "must be at least 1 (the relative embedding span)");
    if (a.position_buckets > 0 && a.position_buckets < 4)
      c.fail("position_buckets", "expected at least 4 (or <= 0 for no buckets)");
    if (a.position_buckets > 0 && a.max_relative_positions <= a.position_buckets / 2)
      c.fail("max_relative_positions", "must be above position_buckets / 2 (the log buckets' range)");
  }
  o.norm_rel_ebd = false;  // "layer_norm" among the "|"-separated, lowercased, stripped entries
  for (const std::string& part : split_entries(c.string_or("norm_rel_ebd", "layer_norm"))) {
    std::string lower = part;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    o.norm_rel_ebd = o.norm_rel_ebd || lower == "layer_norm";
  }
  o.conv_kernel_size = c.int_or("conv_kernel_size", 0);
  if (o.conv_kernel_size > 0) {
    if (o.conv_kernel_size % 2 == 0 || o.conv_kernel_size > kMaxHiddenSize)
      c.fail("conv_kernel_size", "expected an odd kernel size (ConvLayer keeps the length)");
    o.conv_groups = c.int_or("conv_groups", 1);
    if (o.conv_groups < 1 || s.encoder.hidden_size % o.conv_groups != 0)
      c.fail("conv_groups", std::to_string(o.conv_groups) + " must divide hidden_size " + std::to_string(s.encoder.hidden_size));
    o.conv_act = c.string_or("conv_act", "tanh");
    if (!is_known_activation(o.conv_act) || o.conv_act == "xielu")
      c.fail("conv_act", "unsupported activation '" + o.conv_act + "'");
  }
  const float feature_eps = static_cast<float>(c.float_or("feature_layer_norm_eps", 1e-5));
  return make_sew_family(s, sew_squeeze_factor(c), feature_eps, "encoder",
                         std::make_unique<SEWDTransformerEncoder>(o));
}

}  // namespace mobius
