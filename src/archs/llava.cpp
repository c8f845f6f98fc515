// LLaVA (transformers/models/llava/{configuration,modeling}_llava.py), task image-text-to-text
// (tasks/image_text_to_text.h, docs/vlm.md): a CLIP or SigLIP vision tower (archs/vision_towers.h,
// vision_config.model_type clip_vision_model (default) or siglip_vision_model), the hidden states
// of vision_feature_layer (an index into the tower's output_hidden_states, or a list of them
// concatenated on the feature axis), without the class token when vision_feature_select_strategy
// is "default", through multi_modal_projector (linear_1, projector_hidden_act, linear_2; biases
// when multimodal_projector_bias), scattered at image_token_id (config field image_token_index)
// into the text decoder's embeddings. The text decoder is text_config's registered type: llama
// (the default), mistral (LLaVA-NeXT's llava-v1.6-mistral) or qwen2 (archs/llama.cpp). The parts
// are archs/llava.h's, shared with VipLLaVA and LLaVA-NeXT.
//   vision: pixel_values float32 [num_images, num_channels, image_size, image_size]
//        -> image_features [num_images * patches, text hidden_size]
// Checkpoint keys as transformers 5 saves them: vision_tower.*, multi_modal_projector.*,
// language_model.model.*, language_model.lm_head. onnxruntime-genai 0.18 has no llava model type,
// so no genai_config.json is written.
#include "archs/llava.h"

#include <algorithm>
#include <cstdint>

#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/vision_towers.h"
#include "blocks/activation.h"
#include "registry/config_defaults.h"
#include "util/error.h"

namespace mobius {

LlavaFamily::LlavaFamily(const HfConfig& cfg, DataType dtype) {
  const HfConfig text_cfg = sub_config(cfg, "text_config");
  const std::string text_type = text_cfg.string_or("model_type", "llama");
  if (text_type != "llama" && text_type != "mistral" && text_type != "qwen2")
    text_cfg.fail("model_type", "LLaVA's text decoder '" + text_type + "' is not supported: llama, mistral or qwen2");
  const HfConfig text = with_class_defaults(text_cfg, text_type);
  DecoderSpec s = text_type == "qwen2"     ? qwen2_spec(text, dtype)
                  : text_type == "mistral" ? mistral_spec(text, dtype)
                                           : llama_spec(text, dtype);
  s.names.model = "language_model.model";
  s.names.lm_head = "language_model.lm_head";
  // LlavaConfig.__post_init__: tie_word_embeddings from text_config when the top level's is false
  s.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", false) || text.bool_or("tie_word_embeddings", false);
  hidden_size_ = s.hidden_size;
  image_token_id_ = cfg.int_or("image_token_index", 32000);
  text_ = adopt("", std::make_unique<DecoderCausalLM>(s));
}

LlavaVisionFeatures::LlavaVisionFeatures(const HfConfig& cfg, DataType dtype, const std::vector<double>& default_layers,
                                         bool drop_class_token)
    : drop_class_token_(drop_class_token), dtype_(dtype) {
  const HfConfig vision = sub_config(cfg, "vision_config");
  const std::string vision_type = vision.string_or("model_type", "clip_vision_model");
  if (vision_type != "clip_vision_model" && vision_type != "siglip_vision_model")
    vision.fail("model_type", "LLaVA's vision tower '" + vision_type +
                                  "' is not supported: clip_vision_model or siglip_vision_model");
  auto tower = vision_type == "clip_vision_model" ? clip_vision_tower(vision, dtype) : siglip_vision_tower(vision, dtype);
  const int64_t num_layers = tower->options().num_hidden_layers;
  // vision_feature_layer: an int or a list, indexing hidden_states (num_hidden_layers + 1 of them)
  std::vector<double> picks = default_layers;
  if (const nlohmann::json* f = cfg.json().contains("vision_feature_layer") ? &cfg.json()["vision_feature_layer"] : nullptr) {
    if (f->is_number_integer()) picks = {f->get<double>()};
    else if (f->is_array() && !f->empty()) picks = cfg.float_list("vision_feature_layer");
    else cfg.fail("vision_feature_layer", "expected an integer or a non-empty list of integers");
  }
  if (picks.size() > static_cast<size_t>(num_layers + 1))
    cfg.fail("vision_feature_layer", "a list of " + std::to_string(picks.size()) + " layers, more than the tower's " +
                                         std::to_string(num_layers + 1) + " hidden states");
  for (double p : picks) {
    if (!(p >= -static_cast<double>(num_layers + 1) && p <= static_cast<double>(num_layers)))  // before converting
      cfg.fail("vision_feature_layer", "index " + nlohmann::json(p).dump() + " is outside the tower's " +
                                           std::to_string(num_layers + 1) + " hidden states");
    const int64_t k = static_cast<int64_t>(p) < 0 ? static_cast<int64_t>(p) + num_layers + 1 : static_cast<int64_t>(p);
    if (p != static_cast<double>(static_cast<int64_t>(p)) || k < 0 || k > num_layers)
      cfg.fail("vision_feature_layer", "index " + nlohmann::json(p).dump() + " is outside the tower's " +
                                           std::to_string(num_layers + 1) + " hidden states");
    layers_.push_back(k);
  }
  tower_ = adopt("vision_tower", std::move(tower));
}

int64_t LlavaVisionFeatures::width() const { return tower_->hidden_size() * static_cast<int64_t>(layers_.size()); }

int64_t LlavaVisionFeatures::tokens() const { return tower_->sequence_length() - (drop_class_token_ ? 1 : 0); }

GraphInput LlavaVisionFeatures::pixel_values() const {
  return {"pixel_values", DataType::FLOAT, {"num_images", num_channels(), image_size(), image_size()}};
}

Value* LlavaVisionFeatures::forward(Ops& op, Value* pixels) const {
  if (dtype_ != DataType::FLOAT) pixels = op.Cast(pixels, {.to = dtype_});
  const int64_t deepest = *std::max_element(layers_.begin(), layers_.end());
  VisionTransformerOutputs out = tower_->forward(op, pixels, deepest);
  std::vector<Value*> picked;
  for (int64_t k : layers_) {
    Value* h = out.hidden_states.at(static_cast<size_t>(k));  // [images, sequence, width]
    picked.push_back(drop_class_token_ ? op.Slice(h, {1}, {INT64_MAX}, {1}) : h);
  }
  return picked.size() == 1 ? picked[0] : op.Concat(picked, {.axis = -1});
}

bool drops_class_token(const HfConfig& cfg) {
  const std::string strategy = cfg.string_or("vision_feature_select_strategy", "default");
  if (strategy != "default" && strategy != "full")
    cfg.fail("vision_feature_select_strategy", "expected \"default\" or \"full\", got \"" + strategy + "\"");
  return strategy == "default";
}

LlavaProjector::LlavaProjector(const HfConfig& cfg, int64_t in, int64_t out, bool bias, DataType dtype)
    : act_(cfg.string_or("projector_hidden_act", "gelu")) {
  if (!is_known_activation(act_)) cfg.fail("projector_hidden_act", "unsupported activation '" + act_ + "'");
  linear_1_ = child<Linear>("linear_1", LinearOptions{in, out, bias, dtype});
  linear_2_ = child<Linear>("linear_2", LinearOptions{out, out, bias, dtype});
}

Value* LlavaProjector::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return linear_2_->forward(op, activation(op, act_, linear_1_->forward(op, x)));
}

namespace {

class Llava : public LlavaFamily {
 public:
  Llava(const HfConfig& cfg, DataType dtype) : LlavaFamily(cfg, dtype) {
    features_ = child<LlavaVisionFeatures>("", cfg, dtype, std::vector<double>{-2.0}, drops_class_token(cfg));
    projector_ = child<LlavaProjector>("multi_modal_projector", cfg, features_->width(), hidden_size(),
                                       cfg.bool_or("multimodal_projector_bias", true), dtype);
  }

  std::vector<GraphInput> vision_inputs() const override { return {features_->pixel_values()}; }
  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    Value* x = projector_->forward(op, features_->forward(op, in.at(0)));
    return op.Reshape(x, std::vector<int64_t>{-1, hidden_size()});
  }

 private:
  LlavaVisionFeatures* features_;
  LlavaProjector* projector_;
};

}  // namespace

std::unique_ptr<Architecture> create_llava(const HfConfig& c, DataType dtype) {
  // LlavaConfig: attribute_map image_token_id -> image_token_index
  return std::make_unique<Llava>(with_attribute_map(c, {{"image_token_id", "image_token_index"}}), dtype);
}

}  // namespace mobius
