// SigLIP (transformers/models/siglip/modeling_siglip.py; configuration_siglip.py):
//   siglip_vision_model  SiglipVisionModel (image-feature-extraction): the tower
//                        (archs/vision_towers.h) and, with vision_use_head (default true), the
//                        multihead attention pooling head: pooler_output = head(last_hidden_state)
//   siglip_text_model    SiglipTextModel (feature-extraction): the bidirectional text tower's
//                        last_hidden_state (its head(x[:, -1]) is the dual model's); also
//                        siglip2_text_model (Siglip2TextModel, modeling_siglip2.py: the same)
//   siglip               SiglipModel (zero-shot-image-classification): text_model.*,
//                        vision_model.*; text_embeds = normalize(text head(last[:, -1])),
//                        image_embeds = normalize(vision head(last)), logits_per_text =
//                        text_embeds @ image_embeds^T * exp(logit_scale) + logit_bias
//   siglip with SiglipForImageClassification (image-classification): vision_model.* only,
//                        logits = classifier(last_hidden_state.mean(1)) (the head is not used)
#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "registry/config_defaults.h"
#include "tasks/feature_extraction.h"
#include "tasks/image_feature_extraction.h"
#include "tasks/zero_shot_image_classification.h"

namespace mobius {
namespace {

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

// config_type: siglip_text_model, or siglip2_text_model (Siglip2TextModel is the same model).
std::unique_ptr<TextTowerEncoder> siglip_text_model(const HfConfig& c, const char* config_type, DataType dtype) {
  return std::make_unique<TextTowerEncoder>(
      "", std::make_unique<TextTransformer>(c, config_type, TextTransformer::Mask::bidirectional, dtype), dtype);
}

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
  return siglip_text_model(c, "siglip_text_model", dtype);
}

std::unique_ptr<Architecture> create_siglip2_text_model(const HfConfig& c, DataType dtype) {
  return siglip_text_model(c, "siglip2_text_model", dtype);
}

std::unique_ptr<Architecture> create_siglip(const HfConfig& c, DataType dtype) {
  if (is_image_classification(c)) return std::make_unique<MeanPooledClassifier>(
        siglip_vision_tower(sub_config(c, "vision_config"), dtype), label_count(c), 0);
  return std::make_unique<SiglipModel>(c, dtype);
}

}  // namespace mobius
