// The parts the LLaVA family shares (archs/llava.cpp, vipllava.cpp, llava_next.cpp; task
// image-text-to-text, docs/vlm.md): the text decoder, the vision tower with the selection of its
// hidden states, and multi_modal_projector's MLP. Source: transformers/models/llava/
// modeling_llava.py (LlavaModel.get_image_features, LlavaMultiModalProjector), vipllava/ and
// llava_next/modeling_*.py, which build the same parts. Checkpoint keys as transformers 5 saves
// them: vision_tower.*, multi_modal_projector.*, language_model.model.*, language_model.lm_head.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "blocks/decoder.h"
#include "blocks/linear.h"
#include "blocks/vision_transformer.h"
#include "config/hf_config.h"
#include "tasks/image_text_to_text.h"

namespace mobius {

// The image-text-to-text model of a LLaVA relative: text_config's registered llama (the default),
// mistral or qwen2 decoder under language_model.*, tie_word_embeddings as LlavaConfig.__post_init__ (the
// top level's, or text_config's), image_token_id from config.json's image_token_index (read
// through the attribute_map alias image_token_id; default 32000). The family writes the vision
// side (vision_inputs, encode_images). Throws mobius::Error naming text_config.model_type when it
// is none of these.
class LlavaFamily : public ImageTextToText {
 public:
  const CausalLM& text() const override { return *text_; }
  Value* embed_tokens(Ops& op, Value* input_ids) const override { return text_->embed(op, input_ids); }
  int64_t hidden_size() const override { return hidden_size_; }
  int64_t image_token_id() const override { return image_token_id_; }

 protected:
  // cfg: the model's config.json with its attribute_map applied (image_token_id ->
  // image_token_index).
  LlavaFamily(const HfConfig& cfg, DataType dtype);

 private:
  DecoderCausalLM* text_;
  int64_t hidden_size_, image_token_id_;
};

// The vision tower of vision_config (clip_vision_model, the default, or siglip_vision_model;
// archs/vision_towers.h), registered as "vision_tower", run up to the deepest of
// vision_feature_layer (an index into the tower's num_hidden_layers + 1 hidden states, or a
// non-empty list of them; `default_layers` when config.json leaves the field out), the selected
// hidden states concatenated on the feature axis, without the first token when
// `drop_class_token` (CLIP's class token: strategy "default"; VipLLaVA always).
// Throws mobius::Error naming vision_config.model_type or vision_feature_layer (not an integer or
// a list of them, an index outside the hidden states).
class LlavaVisionFeatures : public Module {
 public:
  LlavaVisionFeatures(const HfConfig& cfg, DataType dtype, const std::vector<double>& default_layers,
                      bool drop_class_token);
  // The vision graph's input: pixel_values float32 [num_images, num_channels, image_size, image_size].
  GraphInput pixel_values() const;
  // pixels float32 [n, num_channels, image_size, image_size] (cast to the model dtype here) ->
  // [n, tokens(), width()] in the model dtype.
  Value* forward(Ops& op, Value* pixels) const;
  // The tower's hidden_size times the number of selected layers.
  int64_t width() const;
  // The rows per image: the tower's sequence length, less the class token when dropped.
  int64_t tokens() const;
  int64_t image_size() const { return tower_->options().embedding.image_size; }
  int64_t patch_size() const { return tower_->options().embedding.patch_size; }
  int64_t num_channels() const { return tower_->options().embedding.num_channels; }

 private:
  VisionTransformer* tower_;
  std::vector<int64_t> layers_;
  bool drop_class_token_;
  DataType dtype_;
};

// vision_feature_select_strategy: "default" (true: drop the class token) or "full" (false). Throws
// mobius::Error naming the field for another value.
bool drops_class_token(const HfConfig& cfg);

// The projector's MLP (LlavaMultiModalProjector): linear_2(act(linear_1(x))), x [..., in] ->
// [..., out]; register it as "multi_modal_projector". act: config.json's projector_hidden_act
// (default "gelu"; mobius::Error naming the field when unknown).
class LlavaProjector : public Module {
 public:
  LlavaProjector(const HfConfig& cfg, int64_t in, int64_t out, bool bias, DataType dtype);
  Value* forward(Ops& op, Value* x) const;

 private:
  Linear *linear_1_, *linear_2_;
  std::string act_;
};

}  // namespace mobius
