// CLIP (transformers/models/clip/modeling_clip.py; configuration_clip.py):
//   clip_vision_model  CLIPVisionModel (image-feature-extraction): the tower
//                      (archs/vision_towers.h); pooler_output = post_layernorm(x[:, 0])
//   clip_text_model    CLIPTextModel (feature-extraction): the causal text tower's
//                      last_hidden_state (its pooled eos token is the dual model's)
//   clip               CLIPModel (zero-shot-image-classification): text_model.*, vision_model.*,
//                      text_embeds = normalize(text_projection(last[i_eos])),
//                      image_embeds = normalize(visual_projection(vision pooler_output)),
//                      logits_per_text = text_embeds @ image_embeds^T * exp(logit_scale)
//   clip with CLIPForImageClassification (image-classification): vision_model.* only,
//                      logits = classifier(last_hidden_state[:, 1:].mean(1))
// i_eos: the first position of eos_token_id in each row of input_ids (the largest id when
// eos_token_id is 2, configs before transformers PR #24773); every row is assumed to hold one.
#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "registry/config_defaults.h"
#include "tasks/feature_extraction.h"
#include "tasks/zero_shot_image_classification.h"

namespace mobius {
namespace {

class ClipVisionModel : public TowerModel<ImageEncoder> {
 public:
  ClipVisionModel(const HfConfig& c, DataType dtype) {
    set_tower("", clip_vision_tower(c, dtype));
    const VisionLayerOptions& l = tower->options().layer;
    post_layernorm = child<LayerNorm>("post_layernorm",
                                      NormOptions{.dim = l.hidden_size, .eps = l.layer_norm_eps, .dtype = dtype});
  }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    Value* last = tower->forward(op, pixel_values).last_hidden_state;
    return {last, post_layernorm->forward(op, token_at(op, last, 0))};
  }

  LayerNorm* post_layernorm;
};

class ClipTextModel : public Encoder {
 public:
  ClipTextModel(const HfConfig& c, DataType dtype) : dtype_(dtype) {
    text = adopt("", std::make_unique<TextTransformer>(c, "clip_text_model", TextTransformer::Mask::causal, dtype));
  }
  DataType dtype() const override { return dtype_; }
  int64_t hidden_size() const override { return text->hidden_size(); }
  bool has_token_type_ids() const override { return false; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    return text->forward(op, in.input_ids, in.attention_mask);
  }

  TextTransformer* text;

 private:
  DataType dtype_;
};

// x [batch, seq, hidden] at the first position of `eos` in each row of ids (the first largest id
// when eos is 2) -> [batch, hidden]: a one-hot row times x (exact: one 1, zeros elsewhere).
Value* eos_token(Ops& op, Value* x, Value* ids, int64_t eos) {
  Value* target = eos == 2 ? op.ReduceMax(ids, {1}) : op.builder().scalar_i64(eos);
  Value* hit = op.Cast(op.Equal(ids, target), {.to = x->dtype});  // [batch, seq]
  Value* seq = op.Shape(ids, {.start = 1, .end = 2});
  Value* pos = op.Range(op.builder().scalar_i64(0), op.Squeeze(seq, {0}), op.builder().scalar_i64(1));
  // seq - pos on the hits, 0 elsewhere: the first hit has the largest value
  Value* rank = op.Mul(hit, op.Cast(op.Sub(seq, pos), {.to = x->dtype}));
  Value* first = op.Cast(op.Equal(rank, op.ReduceMax(rank, {1})), {.to = x->dtype});
  return op.Squeeze(op.MatMul(op.Unsqueeze(first, {1}), x), {1});
}

class ClipModel : public ImageTextModel {
 public:
  ClipModel(const HfConfig& c, DataType dtype) : dtype_(dtype) {
    const HfConfig text_config = with_class_defaults(sub_config(c, "text_config"), "clip_text_model");
    // CLIPTextConfig's eos_token_id default (read without a *_or accessor: the generated defaults
    // table would give every type an eos_token_id row)
    eos_ = text_config.has("eos_token_id") ? text_config.get_int("eos_token_id") : 49407;
    text = adopt("text_model", std::make_unique<TextTransformer>(text_config, "clip_text_model",
                                                                 TextTransformer::Mask::causal, dtype));
    vision = adopt("vision_model", clip_vision_tower(sub_config(c, "vision_config"), dtype));
    const VisionLayerOptions& l = vision->options().layer;
    post_layernorm = child<LayerNorm>("vision_model.post_layernorm",
                                      NormOptions{.dim = l.hidden_size, .eps = l.layer_norm_eps, .dtype = dtype});
    projection_dim_ = c.int_or("projection_dim", 512);
    if (projection_dim_ < 1 || projection_dim_ > kMaxHiddenSize) c.fail("projection_dim", "expected a positive width");
    visual_projection = child<Linear>("visual_projection", LinearOptions{l.hidden_size, projection_dim_, false, dtype});
    text_projection = child<Linear>("text_projection", LinearOptions{text->hidden_size(), projection_dim_, false, dtype});
    logit_scale = param("logit_scale", {}, dtype);
  }
  DataType dtype() const override { return dtype_; }
  int64_t num_channels() const override { return vision->options().embedding.num_channels; }
  int64_t image_size() const override { return vision->options().embedding.image_size; }
  int64_t embed_size() const override { return projection_dim_; }
  ImageTextOutputs forward(Ops& op, Value* ids, Value* mask, Value* pixels) const override {
    Value* t = text_projection->forward(op, eos_token(op, text->forward(op, ids, mask), ids, eos_));
    Value* last = vision->forward(op, pixels).last_hidden_state;
    Value* i = visual_projection->forward(op, post_layernorm->forward(op, token_at(op, last, 0)));
    return contrastive(op, t, i, logit_scale->value(op));
  }

  TextTransformer* text;
  VisionTransformer* vision;
  LayerNorm* post_layernorm;
  Linear *visual_projection, *text_projection;
  Parameter* logit_scale;

 private:
  DataType dtype_;
  int64_t eos_;
  int64_t projection_dim_;
};

}  // namespace

std::unique_ptr<Architecture> create_clip_vision_model(const HfConfig& c, DataType dtype) {
  return std::make_unique<ClipVisionModel>(c, dtype);
}

std::unique_ptr<Architecture> create_clip_text_model(const HfConfig& c, DataType dtype) {
  return std::make_unique<ClipTextModel>(c, dtype);
}

std::unique_ptr<Architecture> create_clip(const HfConfig& c, DataType dtype) {
  if (is_image_classification(c)) return std::make_unique<MeanPooledClassifier>(
        clip_vision_tower(sub_config(c, "vision_config"), dtype), label_count(c), 1);
  return std::make_unique<ClipModel>(c, dtype);
}

}  // namespace mobius
