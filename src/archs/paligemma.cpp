// PaliGemma (transformers/models/paligemma/{configuration,modeling}_paligemma.py,
// PaliGemmaForConditionalGeneration), task image-text-to-text (tasks/image_text_to_text.h,
// docs/vlm.md):
//   vision: pixel_values float32 [num_images, num_channels, image_size, image_size] -> the SigLIP
//     tower (archs/vision_towers.h), its last_hidden_state -> multi_modal_projector.linear
//     (vision hidden -> projection_dim, with bias; projection_dim must equal the text
//     hidden_size) -> image_features [num_images * patches, hidden_size]
//   decoder: text_config's gemma decoder (archs/gemma.h gemma_decoder_spec), a prefix-LM: a prompt
//     given with an empty cache attends in both directions over all its tokens (image and text:
//     token_type_ids 0, the prefix, as PaliGemmaProcessor makes them without a suffix), later
//     steps causally (blocks/attention_overlay.h prompt_prefix_overlay). Its positions are
//     1-based: position_ids = transformers' (the index among the row's tokens) + 1. Its logits
//     are capped by text_config's final_logit_softcapping when the text config has one
//     (PaliGemmaForConditionalGeneration; c * tanh(logits / c)).
//   embedding: an image_token_index outside the text vocabulary is embedded as token 0
//     (PaliGemmaModel.forward; archs/gemma.h gemma_vlm_token_ids).
// config.json: image_token_index (alias image_token_id, default 256000), projection_dim (2048),
// tie_word_embeddings (true); a text_config or vision_config left out takes PaliGemmaConfig's
// sub-config defaults (paligemma-3b-224's sizes). Checkpoint keys as transformers 5 saves them:
// vision_tower.*, multi_modal_projector.linear.*, language_model.model.*, language_model.lm_head.
// onnxruntime-genai 0.18 has no paligemma model type: no genai_config.json is written.
#include "archs/archs.h"
#include "archs/gemma.h"
#include "archs/vision_towers.h"
#include "blocks/attention_overlay.h"
#include "blocks/linear.h"
#include "registry/config_defaults.h"
#include "tasks/image_text_to_text.h"
#include "util/error.h"

namespace mobius {

namespace {

// PaliGemmaConfig.sub_configs_defaults: a sub-config absent from config.json is built from these
// (a present one from its own class defaults only).
HfConfig paligemma_sub_config(const HfConfig& c, const char* key) {
  if (c.sub(key)) return sub_config(c, key);
  nlohmann::json j = std::string(key) == "text_config"
                         ? nlohmann::json{{"model_type", "gemma"}, {"hidden_size", 2048}, {"num_hidden_layers", 18},
                                          {"intermediate_size", 16384}, {"num_attention_heads", 8},
                                          {"num_key_value_heads", 1}, {"vocab_size", 257152}}
                         : nlohmann::json{{"model_type", "siglip_vision_model"}, {"intermediate_size", 4096},
                                          {"hidden_size", 1152}, {"patch_size", 14}, {"image_size", 224},
                                          {"num_hidden_layers", 27}, {"num_attention_heads", 16}};
  return HfConfig(j, c.file(), key);
}

class PaliGemma : public ImageTextToText {
 public:
  PaliGemma(const HfConfig& c, DataType dtype) {
    const HfConfig cfg = with_attribute_map(c, {{"image_token_id", "image_token_index"}});
    const HfConfig text_cfg = paligemma_sub_config(cfg, "text_config");
    const std::string text_type = text_cfg.string_or("model_type", "gemma");
    if (text_type != "gemma")
      text_cfg.fail("model_type", "PaliGemma's text decoder '" + text_type + "' is not supported: gemma");
    DecoderSpec s = gemma_decoder_spec(with_class_defaults(text_cfg, text_type), dtype, text_type);
    s.names.model = "language_model.model";
    s.names.lm_head = "language_model.lm_head";
    s.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true);
    // PaliGemmaForConditionalGeneration.forward caps the logits with the text config's
    // final_logit_softcapping when it has one (GemmaConfig keeps the key as an attribute, though
    // GemmaForCausalLM never reads it); absent or null: none
    s.final_logit_softcapping = read_softcap(text_cfg, "final_logit_softcapping", 0.0);
    hidden_size_ = s.hidden_size;
    vocab_size_ = s.vocab_size;
    image_token_id_ = cfg.int_or("image_token_index", 256000);
    const int64_t projection_dim = cfg.int_or("projection_dim", 2048);
    if (projection_dim != hidden_size_)
      cfg.fail("projection_dim", "must equal text_config.hidden_size (" + std::to_string(hidden_size_) +
                                     "): the projected image features replace token embeddings");

    const HfConfig vision_cfg = paligemma_sub_config(cfg, "vision_config");
    const std::string vision_type = vision_cfg.string_or("model_type", "siglip_vision_model");
    if (vision_type != "siglip_vision_model")
      vision_cfg.fail("model_type", "PaliGemma's vision tower '" + vision_type + "' is not supported: siglip_vision_model");
    auto tower = siglip_vision_tower(vision_cfg, dtype);
    image_size_ = tower->options().embedding.image_size;
    num_channels_ = tower->options().embedding.num_channels;
    const int64_t vision_hidden = tower->hidden_size();
    text_ = adopt("", std::make_unique<DecoderCausalLM>(s));
    tower_ = adopt("vision_tower", std::move(tower));
    linear_ = child<Linear>("multi_modal_projector.linear", LinearOptions{vision_hidden, projection_dim, true, dtype});
  }

  const CausalLM& text() const override { return *text_; }
  Value* embed_tokens(Ops& op, Value* input_ids) const override {
    return text_->embed(op, gemma_vlm_token_ids(op, input_ids, image_token_id_, vocab_size_));
  }
  int64_t hidden_size() const override { return hidden_size_; }
  int64_t image_token_id() const override { return image_token_id_; }
  std::vector<GraphInput> vision_inputs() const override {
    return {{"pixel_values", DataType::FLOAT, {"num_images", num_channels_, image_size_, image_size_}}};
  }
  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    Value* pixels = in.at(0);
    if (text_->dtype() != DataType::FLOAT) pixels = op.Cast(pixels, {.to = text_->dtype()});
    Value* x = tower_->forward(op, pixels).last_hidden_state;
    auto s = op.builder().scope("multi_modal_projector");
    return op.Reshape(linear_->forward(op, x), std::vector<int64_t>{-1, hidden_size_});
  }
  Value* attention_overlay(Ops& op, const CausalLMInputs& in) const override {
    return prompt_prefix_overlay(op, in.inputs_embeds, in.attention_mask);
  }

 private:
  DecoderCausalLM* text_;
  VisionTransformer* tower_;
  Linear* linear_;
  int64_t hidden_size_, vocab_size_, image_token_id_, image_size_, num_channels_;
};

}  // namespace

std::unique_ptr<Architecture> create_paligemma(const HfConfig& c, DataType dtype) {
  return std::make_unique<PaliGemma>(c, dtype);
}

}  // namespace mobius
