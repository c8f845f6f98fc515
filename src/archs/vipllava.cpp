// VipLLaVA (transformers/models/vipllava/{configuration,modeling}_vipllava.py), task
// image-text-to-text (docs/vlm.md): LLaVA's parts (archs/llava.h) with VipLlavaMultiModalProjector:
// the hidden states of every vision_feature_layer (default [-2, -5, -8, -11, 6]; config.json may
// spell it vision_feature_layers, the attribute_map alias), each without its first token (always:
// VipLlavaModel.get_image_features has no select strategy), concatenated on the feature axis,
// then projector_layernorm (LayerNorm, projector_layernorm_eps), linear_1, projector_hidden_act,
// linear_2 (biases always).
//   vision: pixel_values float32 [num_images, num_channels, image_size, image_size]
//        -> image_features [num_images * patches, text hidden_size]
// onnxruntime-genai 0.18 has no vipllava model type, so no genai_config.json is written.
#include <cstdint>

#include "archs/archs.h"
#include "archs/llava.h"
#include "blocks/norms.h"
#include "registry/config_defaults.h"

namespace mobius {

namespace {

class VipLlava : public LlavaFamily {
 public:
  VipLlava(const HfConfig& cfg, DataType dtype) : LlavaFamily(cfg, dtype) {
    // VipLlavaConfig.vision_feature_layer's default (a tuple, which config_defaults leaves to the family)
    features_ = child<LlavaVisionFeatures>("", cfg, dtype, std::vector<double>{-2, -5, -8, -11, 6}, true);
    const auto eps = static_cast<float>(cfg.float_or("projector_layernorm_eps", 1e-5));
    NormOptions norm{.dim = features_->width(), .eps = eps, .dtype = dtype, .kind = NormKind::LayerNorm};
    norm_ = child<LayerNorm>("multi_modal_projector.projector_layernorm", norm);
    projector_ = child<LlavaProjector>("multi_modal_projector", cfg, features_->width(), hidden_size(), true, dtype);
  }

  std::vector<GraphInput> vision_inputs() const override { return {features_->pixel_values()}; }
  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    Value* x = projector_->forward(op, norm_->forward(op, features_->forward(op, in.at(0))));
    return op.Reshape(x, std::vector<int64_t>{-1, hidden_size()});
  }

 private:
  LlavaVisionFeatures* features_;
  LayerNorm* norm_;
  LlavaProjector* projector_;
};

}  // namespace

std::unique_ptr<Architecture> create_vipllava(const HfConfig& c, DataType dtype) {
  // VipLlavaConfig.attribute_map
  const HfConfig cfg =
      with_attribute_map(c, {{"image_token_id", "image_token_index"}, {"vision_feature_layers", "vision_feature_layer"}});
  return std::make_unique<VipLlava>(cfg, dtype);
}

}  // namespace mobius
