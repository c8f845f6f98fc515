// SigLIP (transformers/models/siglip/modeling_siglip.py; configuration_siglip.py):
//   siglip_vision_model  SiglipVisionModel (image-feature-extraction): the tower
//                        (archs/vision_towers.h) and, with vision_use_head (default true), the
//                        multihead attention pooling head: pooler_output = head(last_hidden_state)
//   siglip_text_model    SiglipTextModel (feature-extraction): the bidirectional text tower's
//                        last_hidden_state (its head(x[:, -1]) is the dual model's)
//   siglip               SiglipModel (zero-shot-image-classification): text_model.*,
//                        vision_model.*; text_embeds = normalize(text head(last[:, -1])),
//                        image_embeds = normalize(vision head(last)), logits_per_text =
//                        text_embeds @ image_embeds^T * exp(logit_scale) + logit_bias
//   siglip with SiglipForImageClassification (image-classification): vision_model.* only,
//                        logits = classifier(last_hidden_state.mean(1)) (the head is not used)
#include <cmath>

#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "blocks/activation.h"
#include "registry/config_defaults.h"
#include "tasks/feature_extraction.h"
#include "tasks/image_feature_extraction.h"
#include "tasks/zero_shot_image_classification.h"

namespace mobius {
namespace {

// SiglipMultiheadAttentionPoolingHead: a learned probe attends over the sequence with
// torch.nn.MultiheadAttention (in_proj_weight [3 * hidden, hidden] = q | k | v, in_proj_bias,
// out_proj), then h + mlp(layernorm(h)). forward: x [batch, seq, hidden] -> [batch, hidden].
class AttentionPoolingHead : public Module {
 public:
  explicit AttentionPoolingHead(const VisionLayerOptions& l) : l_(l) {
    const int64_t h = l.hidden_size;
    probe = param("probe", {1, 1, h}, l.dtype);
    in_proj_weight = param("attention.in_proj_weight", {h, 3 * h}, l.dtype, /*transpose=*/true);
    in_proj_bias = param("attention.in_proj_bias", {3 * h}, l.dtype);
    out_proj = child<Linear>("attention.out_proj", LinearOptions{h, h, true, l.dtype});
    layernorm = child<LayerNorm>("layernorm", NormOptions{.dim = h, .eps = l.layer_norm_eps, .dtype = l.dtype});
    fc1 = child<Linear>("mlp.fc1", LinearOptions{h, l.intermediate_size, true, l.dtype});
    fc2 = child<Linear>("mlp.fc2", LinearOptions{l.intermediate_size, h, true, l.dtype});
  }

  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    const int64_t h = l_.hidden_size, heads = l_.attention.num_attention_heads, d = l_.attention.head_dim;
    auto project = [&](Value* y) { return op.Add(op.MatMul(y, in_proj_weight->value(op)), in_proj_bias->value(op)); };
    auto to_heads = [&](Value* y) { return op.Transpose(op.Reshape(y, {0, 0, heads, d}), {.perm = {0, 2, 1, 3}}); };
    std::vector<Value*> kv = op.Split(project(x), {h, h, h}, {.axis = -1});
    Value* batch = op.Shape(x, {.start = 0, .end = 1});
    Value* q_all = project(op.Expand(probe->value(op), op.Concat({batch, op.builder().ints({1, h})}, {.axis = 0})));
    Value* q = op.Slice(q_all, {0}, {h}, {2});
    AttentionOutputs a = op.Attention(to_heads(q), to_heads(kv[1]), to_heads(kv[2]), nullptr, nullptr, nullptr,
                                      {.scale = 1.0f / std::sqrt(static_cast<float>(d))});
    op.builder().producer(a.y).tags = {.num_heads = heads, .kv_num_heads = heads, .head_size = d};
    Value* y = out_proj->forward(op, op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1}));
    Value* m = fc2->forward(op, activation(op, l_.hidden_act, fc1->forward(op, layernorm->forward(op, y))));
    return op.Squeeze(op.Add(y, m), {1});
  }

  Parameter *probe, *in_proj_weight, *in_proj_bias;
  Linear *out_proj, *fc1, *fc2;
  LayerNorm* layernorm;

 private:
  VisionLayerOptions l_;
};

class SiglipVisionModel : public TowerModel<ImageEncoder> {
 public:
  SiglipVisionModel(const HfConfig& c, DataType dtype) {
    set_tower("", siglip_vision_tower(c, dtype));
    if (with_class_defaults(c, "siglip_vision_model").bool_or("vision_use_head", true))
      head = child<AttentionPoolingHead>("head", tower->options().layer);
  }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    Value* last = tower->forward(op, pixel_values).last_hidden_state;
    return {last, head ? head->forward(op, last) : nullptr};
  }

  AttentionPoolingHead* head = nullptr;
};

class SiglipTextModel : public Encoder {
 public:
  SiglipTextModel(const HfConfig& c, DataType dtype) : dtype_(dtype) {
    text = adopt("", std::make_unique<TextTransformer>(c, "siglip_text_model", TextTransformer::Mask::bidirectional,
                                                       dtype));
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

class SiglipModel : public ImageTextModel {
 public:
  SiglipModel(const HfConfig& c, DataType dtype) : dtype_(dtype) {
    const HfConfig text_config = with_class_defaults(sub_config(c, "text_config"), "siglip_text_model");
    const HfConfig vision_config = with_class_defaults(sub_config(c, "vision_config"), "siglip_vision_model");
    text = adopt("text_model", std::make_unique<TextTransformer>(text_config, "siglip_text_model",
                                                                 TextTransformer::Mask::bidirectional, dtype));
    const int64_t width = text_config.opt_int("projection_size").value_or(text->hidden_size());
    text_head = child<Linear>("text_model.head", LinearOptions{text->hidden_size(), width, true, dtype});
    vision = adopt("vision_model", siglip_vision_tower(vision_config, dtype));
    if (!vision_config.bool_or("vision_use_head", true))
      vision_config.fail("vision_use_head", "SiglipModel pools the image with the head: it must be true");
    vision_head = child<AttentionPoolingHead>("vision_model.head", vision->options().layer);
    if (width != vision->hidden_size())
      text_config.fail("projection_size", "must equal vision_config.hidden_size (the image embedding width)");
    logit_scale = param("logit_scale", {1}, dtype);
    logit_bias = param("logit_bias", {1}, dtype);
  }
  DataType dtype() const override { return dtype_; }
  int64_t num_channels() const override { return vision->options().embedding.num_channels; }
  int64_t image_size() const override { return vision->options().embedding.image_size; }
  int64_t embed_size() const override { return vision->hidden_size(); }
  ImageTextOutputs forward(Ops& op, Value* ids, Value* mask, Value* pixels) const override {
    Value* t = text_head->forward(op, token_at(op, text->forward(op, ids, mask), -1));
    Value* i = vision_head->forward(op, vision->forward(op, pixels).last_hidden_state);
    ImageTextOutputs out = contrastive(op, t, i, logit_scale->value(op));
    out.logits_per_text = op.Add(out.logits_per_text, logit_bias->value(op));
    return out;
  }

  TextTransformer* text;
  Linear* text_head;
  VisionTransformer* vision;
  AttentionPoolingHead* vision_head;
  Parameter *logit_scale, *logit_bias;

 private:
  DataType dtype_;
};

}  // namespace

std::unique_ptr<Architecture> create_siglip_vision_model(const HfConfig& c, DataType dtype) {
  return std::make_unique<SiglipVisionModel>(c, dtype);
}

std::unique_ptr<Architecture> create_siglip_text_model(const HfConfig& c, DataType dtype) {
  return std::make_unique<SiglipTextModel>(c, dtype);
}

std::unique_ptr<Architecture> create_siglip(const HfConfig& c, DataType dtype) {
  if (is_image_classification(c)) return std::make_unique<MeanPooledClassifier>(
        siglip_vision_tower(sub_config(c, "vision_config"), dtype), label_count(c), 0);
  return std::make_unique<SiglipModel>(c, dtype);
}

}  // namespace mobius
