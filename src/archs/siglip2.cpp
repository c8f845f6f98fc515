// SigLIP 2 (transformers/models/siglip2/{configuration,modeling}_siglip2.py), the NaFlex vision
// encoder (tasks/image_feature_extraction.h PatchSequenceEncoder):
//   siglip2_vision_model  Siglip2VisionModel (image-feature-extraction): last_hidden_state
//                         (post_layernorm), pooler_output = the attention-pooling head over the
//                         image's patches (vision_use_head, default true)
//   siglip2               Siglip2Model (zero-shot-image-classification; the images as patch
//                         sequences, tasks/zero_shot_image_classification.h
//                         PatchSequenceImageTextModel): as SiglipModel, text_embeds =
//                         normalize(text_model.head(last[:, -1])), image_embeds =
//                         normalize(vision head), logits_per_text = exp(logit_scale) * cos +
//                         logit_bias
//   siglip2 with Siglip2ForImageClassification (image-classification): vision_model.*,
//                         logits = classifier(mean of last_hidden_state over the image's patches)
//   siglip2_text_model    Siglip2TextModel: SigLIP's text model (archs/siglip.cpp)
// The tower (Siglip2VisionEmbeddings, Siglip2Encoder): embeddings.patch_embedding (Linear over
// the flattened patches) + embeddings.position_embedding (a num_patches = side^2 table, as a
// side x side grid resized to each image's spatial_shapes (rows, cols) with
// F.interpolate(mode="bilinear", align_corners=False, antialias=True); the padding patches take
// the resized grid's first row), SigLIP's layers (archs/vision_towers.h VisionEncoderLayer)
// attending to the image's patches only (pixel_attention_mask), post_layernorm.
// The resize is computed in the graph for every image at once: antialiased bilinear resampling is
// separable, and output row r of an image with h rows reads table row y with the weight
// max(0, 1 - |y + 0.5 - (r + 0.5) * s| / max(s, 1)), s = side / h, normalized over y (PyTorch's
// _upsample_bilinear2d_aa, the triangle filter stretched by the scale when downsampling; ONNX
// Resize with mode linear, antialias 1, exclude_outside 1, coordinate_transformation_mode
// half_pixel computes the same). ONNX Resize itself takes one output size per node, while a
// batch's images each have their own, so the weights are formed per patch instead:
// position(r, c) = sum_{y,x} wy(r, y) wx(c, x) table[y * side + x].
#include <cmath>

#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "blocks/attention.h"
#include "registry/config_defaults.h"
#include "tasks/image_classification.h"
#include "tasks/zero_shot_image_classification.h"

namespace mobius {
namespace {

class Siglip2VisionTower : public Module {
 public:
  // vision_config: a siglip2_vision_model config (its class defaults filled here). Throws
  // mobius::Error naming num_patches (not a square), patch_size, num_channels, or a field of
  // vit_layer_options.
  Siglip2VisionTower(const HfConfig& vision_config, DataType dtype) {
    const HfConfig c = with_class_defaults(vision_config, "siglip2_vision_model");
    layer_ = vit_layer_options(c, dtype);
    layer_.intermediate_size = c.get_int("intermediate_size");
    const int64_t patch = c.int_or("patch_size", 16);
    if (patch < 1 || patch > 1024) c.fail("patch_size", "expected an integer in [1, 1024]");
    const int64_t channels = c.int_or("num_channels", 3);
    if (channels < 1 || channels > 64) c.fail("num_channels", "expected a value in [1, 64]");
    patch_dim_ = channels * patch * patch;
    const int64_t positions = c.int_or("num_patches", 256);
    side_ = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(positions))));
    if (positions < 1 || side_ * side_ != positions)
      c.fail("num_patches", "must be a square (the position embedding grid), got " + std::to_string(positions));
    const int64_t h = layer_.hidden_size;
    patch_embedding = child<Linear>("embeddings.patch_embedding", LinearOptions{patch_dim_, h, true, dtype});
    position_embedding = param("embeddings.position_embedding.weight", {positions, h}, dtype);
    const int64_t n = c.get_int("num_hidden_layers");
    for (int64_t i = 0; i < n; ++i)
      layers.push_back(child<VisionEncoderLayer>("encoder.layers." + std::to_string(i), layer_));
    post_layernorm = child<LayerNorm>("post_layernorm", NormOptions{.dim = h, .eps = layer_.layer_norm_eps, .dtype = dtype});
    if (c.bool_or("vision_use_head", true)) head = child<AttentionPoolingHead>("head", layer_);
  }

  // -> last_hidden_state [batch, num_patches, hidden] (after post_layernorm).
  Value* forward(Ops& op, const PatchSequence& in) const {
    auto s = enter(op);
    Value* x = op.Add(patch_embedding->forward(op, in.pixel_values), positions(op, in));
    Value* mask = padding_mask(op, in.pixel_attention_mask, layer_.dtype);
    for (const VisionEncoderLayer* layer : layers) x = layer->forward(op, x, mask);
    return post_layernorm->forward(op, x);
  }

  // The head over the image's patches: [batch, hidden]; null without vision_use_head.
  Value* pool(Ops& op, Value* last, Value* pixel_attention_mask) const {
    if (!head) return nullptr;
    Value* keep = op.Cast(op.Unsqueeze(pixel_attention_mask, {1, 2}), {.to = DataType::BOOL});  // [b, 1, 1, patches]
    return head->forward(op, last, additive_mask(op, keep, layer_.dtype));
  }

  int64_t patch_dim() const { return patch_dim_; }
  int64_t hidden_size() const { return layer_.hidden_size; }
  DataType dtype() const { return layer_.dtype; }

  Linear* patch_embedding;
  Parameter* position_embedding;
  std::vector<VisionEncoderLayer*> layers;
  LayerNorm* post_layernorm;
  AttentionPoolingHead* head = nullptr;

 private:
  // The position table resized to each image's grid (see the top of this file):
  // [batch, num_patches, hidden].
  Value* positions(Ops& op, const PatchSequence& in) const {
    auto s = op.builder().scope("resize_positional_embeddings");
    GraphBuilder& b = op.builder();
    Value* patches = op.Shape(in.pixel_values, {.start = 1, .end = 2});
    Value* p = op.Unsqueeze(op.Range(b.scalar_i64(0), op.Squeeze(patches, {0}), b.scalar_i64(1)), {0});  // [1, L]
    Value* rows = op.Slice(in.spatial_shapes, {0}, {1}, {1});  // [batch, 1]
    Value* cols = op.Slice(in.spatial_shapes, {1}, {2}, {1});
    Value* inside = op.Less(p, op.Mul(rows, cols));  // [batch, L]; the padding patches read (0, 0)
    Value* zero = b.scalar_i64(0);
    Value* r = op.Where(inside, op.Div(p, cols), zero);
    Value* c = op.Where(inside, op.Sub(p, op.Mul(op.Div(p, cols), cols)), zero);
    std::vector<float> taps;
    for (int64_t y = 0; y < side_; ++y) taps.push_back(static_cast<float>(y) + 0.5f);
    Value* centers = b.constant_f32(taps, {side_});
    // index [batch, L] of an axis of `size` [batch, 1] -> normalized weights [batch, L, side]
    auto weights = [&](Value* index, Value* size) {
      Value* scale = op.Div(static_cast<double>(side_), op.Cast(size, {.to = DataType::FLOAT}));  // [batch, 1]
      Value* inv_support = op.Unsqueeze(op.Div(1.0, op.Max(scale, 1.0)), {2});
      Value* center = op.Mul(op.Add(op.Cast(index, {.to = DataType::FLOAT}), 0.5), scale);  // [batch, L]
      Value* dist = op.Mul(op.Abs(op.Sub(centers, op.Unsqueeze(center, {2}))), inv_support);
      Value* w = op.Relu(op.Sub(1.0, dist));
      return op.Div(w, op.ReduceSum(w, {-1}));
    };
    Value* wy = op.Unsqueeze(weights(r, rows), {3});  // [batch, L, side, 1]
    Value* wx = op.Unsqueeze(weights(c, cols), {2});  // [batch, L, 1, side]
    Value* w = op.Reshape(op.Mul(wy, wx), {0, 0, side_ * side_});
    // [1, side^2, hidden]: a lookup table, not a projection (--precision keeps it float, as it
    // keeps the token embeddings: passes/matmul_nbits.cpp quantizes 2-D weights only)
    Value* table = op.Reshape(position_embedding->value(op), {1, side_ * side_, layer_.hidden_size});
    if (layer_.dtype != DataType::FLOAT) table = op.Cast(table, {.to = DataType::FLOAT});
    Value* out = op.MatMul(w, table);
    return layer_.dtype != DataType::FLOAT ? op.Cast(out, {.to = layer_.dtype}) : out;
  }

  VisionLayerOptions layer_;
  int64_t patch_dim_, side_;
};

class Siglip2VisionModel : public PatchSequenceEncoder {
 public:
  Siglip2VisionModel(const HfConfig& c, DataType dtype) {
    tower = adopt("", std::make_unique<Siglip2VisionTower>(c, dtype));
  }
  DataType dtype() const override { return tower->dtype(); }
  int64_t patch_dim() const override { return tower->patch_dim(); }
  int64_t hidden_size() const override { return tower->hidden_size(); }
  ImageEncoderOutputs forward(Ops& op, const PatchSequence& in) const override {
    Value* last = tower->forward(op, in);
    return {last, tower->pool(op, last, in.pixel_attention_mask)};
  }

  Siglip2VisionTower* tower;
};

// Siglip2ForImageClassification: the head is not used; the patches' mean under the mask.
class Siglip2Classifier : public PatchSequenceEncoder {
 public:
  Siglip2Classifier(const HfConfig& c, DataType dtype) : labels_(label_count(c)) {
    tower = adopt("vision_model", std::make_unique<Siglip2VisionTower>(sub_config(c, "vision_config"), dtype));
    classifier = child<Linear>("classifier", LinearOptions{tower->hidden_size(), labels_, true, dtype});
  }
  DataType dtype() const override { return tower->dtype(); }
  int64_t patch_dim() const override { return tower->patch_dim(); }
  int64_t hidden_size() const override { return tower->hidden_size(); }
  int64_t num_labels() const override { return labels_; }
  ImageEncoderOutputs forward(Ops& op, const PatchSequence& in) const override {
    Value* last = tower->forward(op, in);
    Value* keep = op.Unsqueeze(op.Cast(in.pixel_attention_mask, {.to = tower->dtype()}), {2});  // [b, L, 1]
    Value* pooled = op.Div(op.ReduceSum(op.Mul(last, keep), {1}, {.keepdims = 0}), op.ReduceSum(keep, {1}, {.keepdims = 0}));
    return {last, nullptr, classifier->forward(op, pooled)};
  }

  Siglip2VisionTower* tower;
  Linear* classifier;

 private:
  int64_t labels_;
};

// Siglip2Model: text_model (SigLIP's text tower, archs/vision_towers.h TextTransformer, and its
// head on the last position), vision_model (the NaFlex tower and its head), logit_scale,
// logit_bias: as SiglipModel (archs/siglip.cpp).
class Siglip2Model : public PatchSequenceImageTextModel {
 public:
  Siglip2Model(const HfConfig& c, DataType dtype) : dtype_(dtype) {
    const HfConfig text_config = with_class_defaults(sub_config(c, "text_config"), "siglip2_text_model");
    text = adopt("text_model", std::make_unique<TextTransformer>(text_config, "siglip2_text_model",
                                                                 TextTransformer::Mask::bidirectional, dtype));
    const int64_t width = text_config.opt_int("projection_size").value_or(text->hidden_size());
    text_head = child<Linear>("text_model.head", LinearOptions{text->hidden_size(), width, true, dtype});
    const HfConfig vision_config = sub_config(c, "vision_config");
    vision = adopt("vision_model", std::make_unique<Siglip2VisionTower>(vision_config, dtype));
    if (!vision->head)
      vision_config.fail("vision_use_head", "Siglip2Model pools the image with the head: it must be true");
    if (width != vision->hidden_size())
      text_config.fail("projection_size", "must equal vision_config.hidden_size (the image embedding width)");
    logit_scale = param("logit_scale", {1}, dtype);
    logit_bias = param("logit_bias", {1}, dtype);
  }
  DataType dtype() const override { return dtype_; }
  int64_t patch_dim() const override { return vision->patch_dim(); }
  int64_t embed_size() const override { return vision->hidden_size(); }
  ImageTextOutputs forward(Ops& op, Value* ids, Value* mask, const PatchSequence& images) const override {
    Value* t = text_head->forward(op, token_at(op, text->forward(op, ids, mask), -1));
    Value* i = vision->pool(op, vision->forward(op, images), images.pixel_attention_mask);
    ImageTextOutputs out = contrastive(op, t, i, logit_scale->value(op));
    out.logits_per_text = op.Add(out.logits_per_text, logit_bias->value(op));
    return out;
  }

  TextTransformer* text;
  Linear* text_head;
  Siglip2VisionTower* vision;
  Parameter *logit_scale, *logit_bias;

 private:
  DataType dtype_;
};

}  // namespace

std::unique_ptr<Architecture> create_siglip2_vision_model(const HfConfig& c, DataType dtype) {
  return std::make_unique<Siglip2VisionModel>(c, dtype);
}

std::unique_ptr<Architecture> create_siglip2(const HfConfig& c, DataType dtype) {
  if (is_image_classification(c)) return std::make_unique<Siglip2Classifier>(c, dtype);
  return std::make_unique<Siglip2Model>(c, dtype);
}

}  // namespace mobius
