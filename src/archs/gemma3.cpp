// Gemma 3 (transformers/models/gemma3/{configuration,modeling}_gemma3.py,
// Gemma3ForConditionalGeneration), task image-text-to-text (tasks/image_text_to_text.h,
// docs/vlm.md):
//   vision: pixel_values float32 [num_images, num_channels, image_size, image_size] -> the SigLIP
//     tower (archs/vision_towers.h; vision_config.model_type siglip_vision_model), its
//     last_hidden_state [num_images, patches, vision hidden] -> multi_modal_projector
//     (Gemma3MultiModalProjector): the patches' (image_size / patch_size)^2 grid average-pooled
//     in squares of side kernel = patches per side / sqrt(mm_tokens_per_image), mm_soft_emb_norm
//     (Gemma RMSNorm, 1 + weight, eps vision_config.layer_norm_eps), times
//     mm_input_projection_weight [vision hidden, text hidden]
//     -> image_features [num_images * mm_tokens_per_image, text hidden]
//   decoder: text_config's gemma3_text decoder (archs/gemma.h gemma_decoder_spec: sliding and
//     full layers, q/k norms, embeddings scaled by hidden_size**0.5), which also reads input_ids:
//     the tokens of each run of image_token_id attend to each other in both directions, in the
//     full layers and, within the window, the sliding ones (blocks/attention_overlay.h
//     image_block_overlay; transformers' token_type_ids are 1 exactly at the image tokens, which
//     onnxruntime-genai 0.18 feeds only to a vision graph, so the mask is derived in the graph
//     from the decoder's input_ids); lm_head's logits without text_config.final_logit_softcapping
//     (Gemma3ForConditionalGeneration does not cap; Gemma3ForCausalLM does).
//   embedding: an image_token_index outside the text vocabulary is embedded as token 0
//     (Gemma3Model.forward; archs/gemma.h gemma_vlm_token_ids).
// config.json: image_token_index (alias image_token_id, default 262144), mm_tokens_per_image
// (256), tie_word_embeddings (true). Checkpoint keys as transformers 5 saves them:
// vision_tower.*, multi_modal_projector.*, language_model.model.*, language_model.lm_head.
// onnxruntime-genai 0.18 runs it as model type gemma3 (processor gemma_3_image_processing, 256
// image tokens per image; its buffer for image_features holds one image's 256 rows whatever the
// number of images, so it runs prompts of one image).
#include <cmath>

#include "archs/archs.h"
#include "archs/gemma.h"
#include "archs/vision_towers.h"
#include "blocks/attention_overlay.h"
#include "blocks/norms.h"
#include "registry/config_defaults.h"
#include "tasks/image_text_to_text.h"
#include "util/error.h"

namespace mobius {

namespace {

// Gemma3MultiModalProjector: [images, side^2, vision] -> [images, (side / kernel)^2, text].
class Gemma3Projector : public Module {
 public:
  Gemma3Projector(int64_t side, int64_t kernel, int64_t vision_hidden, int64_t text_hidden, float eps, DataType dtype)
      : side_(side), kernel_(kernel), vision_hidden_(vision_hidden) {
    norm = child<RMSNorm>("mm_soft_emb_norm", NormOptions{.dim = vision_hidden, .eps = eps, .dtype = dtype,
                                                          .weight_offset_one = true});
    projection = param("mm_input_projection_weight", {vision_hidden, text_hidden}, dtype);
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    // AvgPool2d(kernel, stride kernel) over the row-major patch grid: row = tr * kernel + kr,
    // col = tc * kernel + kc; the mean over (kr, kc), the tokens row-major over (tr, tc)
    const int64_t t = side_ / kernel_;
    x = op.Reshape(x, std::vector<int64_t>{-1, t, kernel_, t, kernel_, vision_hidden_});
    x = op.ReduceMean(x, {2, 4}, {.keepdims = 0});
    x = op.Reshape(x, std::vector<int64_t>{-1, t * t, vision_hidden_});
    return op.MatMul(norm->forward(op, x), projection->value(op));
  }

  RMSNorm* norm;
  Parameter* projection;

 private:
  int64_t side_, kernel_, vision_hidden_;
};

class Gemma3 : public ImageTextToText {
 public:
  Gemma3(const HfConfig& c, DataType dtype) {
    const HfConfig cfg = with_attribute_map(c, {{"image_token_id", "image_token_index"},
                                                {"boi_token_id", "boi_token_index"},
                                                {"eoi_token_id", "eoi_token_index"}});
    const HfConfig text_cfg = sub_config(cfg, "text_config");
    const std::string text_type = text_cfg.string_or("model_type", "gemma3_text");
    if (text_type != "gemma3_text")
      text_cfg.fail("model_type", "Gemma 3's text decoder '" + text_type + "' is not supported: gemma3_text");
    const HfConfig text = with_class_defaults(text_cfg, text_type);
    if (text.bool_or("use_bidirectional_attention", false))
      text.fail("use_bidirectional_attention", "bidirectional attention is not a causal LM");
    DecoderSpec s = gemma_decoder_spec(text, dtype, text_type);
    s.names.model = "language_model.model";
    s.names.lm_head = "language_model.lm_head";
    s.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true);
    // Gemma3ForConditionalGeneration.forward returns lm_head's logits uncapped: only
    // Gemma3ForCausalLM applies text_config.final_logit_softcapping
    s.final_logit_softcapping = 0.0f;
    hidden_size_ = s.hidden_size;
    vocab_size_ = s.vocab_size;
    image_token_id_ = cfg.int_or("image_token_index", 262144);

    const HfConfig vision_cfg = sub_config(cfg, "vision_config");
    const std::string vision_type = vision_cfg.string_or("model_type", "siglip_vision_model");
    if (vision_type != "siglip_vision_model")
      vision_cfg.fail("model_type", "Gemma 3's vision tower '" + vision_type + "' is not supported: siglip_vision_model");
    auto tower = siglip_vision_tower(vision_cfg, dtype);
    const VisionEmbeddingsOptions& e = tower->options().embedding;
    image_size_ = e.image_size;
    num_channels_ = e.num_channels;
    const int64_t side = e.image_size / e.patch_size;
    const int64_t tokens = cfg.int_or("mm_tokens_per_image", 256);
    const auto per_side = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(tokens))));
    if (tokens <= 0 || per_side * per_side != tokens || side % per_side != 0)
      cfg.fail("mm_tokens_per_image", "must be a square whose side divides the " + std::to_string(side) +
                                          " patches per image side (vision_config image_size / patch_size)");
    const float eps = static_cast<float>(with_class_defaults(vision_cfg, vision_type).float_or("layer_norm_eps", 1e-6));
    const int64_t vision_hidden = tower->hidden_size();
    text_ = adopt("", std::make_unique<DecoderCausalLM>(s));
    tower_ = adopt("vision_tower", std::move(tower));
    projector_ = child<Gemma3Projector>("multi_modal_projector", side, side / per_side, vision_hidden, hidden_size_,
                                        eps, dtype);
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
    Value* x = projector_->forward(op, tower_->forward(op, pixels).last_hidden_state);
    return op.Reshape(x, std::vector<int64_t>{-1, hidden_size_});
  }
  bool decoder_input_ids() const override { return true; }
  Value* attention_overlay(Ops& op, const CausalLMInputs& in) const override {
    return image_block_overlay(op, in.input_ids, image_token_id_, in.attention_mask);
  }
  std::optional<GenaiMultimodal> genai_multimodal() const override {
    return GenaiMultimodal{.type = "gemma3", .patch_size = 0, .spatial_merge_size = 0, .temporal_patch_size = 0,
                           .token_ids = {}, .image_size = image_size_};
  }

 private:
  DecoderCausalLM* text_;
  VisionTransformer* tower_;
  Gemma3Projector* projector_;
  int64_t hidden_size_, vocab_size_, image_token_id_, image_size_, num_channels_;
};

}  // namespace

std::unique_ptr<Architecture> create_gemma3(const HfConfig& c, DataType dtype) {
  return std::make_unique<Gemma3>(c, dtype);
}

}  // namespace mobius
