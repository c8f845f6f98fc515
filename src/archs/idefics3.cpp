// Idefics3 and SmolVLM (transformers/models/{idefics3,smolvlm}/{configuration,modeling}_*.py), task
// image-text-to-text (tasks/image_text_to_text.h, docs/vlm.md). SmolVLM is Idefics3 with its own
// config classes (the same fields and defaults) and the same graphs.
//   vision (model.vision_model, Idefics3VisionTransformer): a SigLIP-like tower over images of the
//     configured size whose padded pixels are masked: pixel_attention_mask marks the real pixels,
//     a patch is real when any of its pixels is; the real patches of an image take the learned
//     positions of the num_patches_per_side^2 table by bucketing their fractional (row, column)
//     coordinates (Idefics3VisionEmbeddings: NaViT's patch positions), padded patches position 0;
//     attention masks the padded patches as keys; post_layernorm. Then model.connector: the pixel
//     shuffle (scale_factor^2 neighbouring patches concatenated on the feature axis,
//     Idefics3Connector.pixel_shuffle) and modality_projection.proj (no bias).
//       pixel_values float32 [num_images, num_channels, image_size, image_size],
//       pixel_attention_mask int64 [num_images, image_size, image_size] (1 = real pixel)
//    -> image_features [num_images * (image_size / patch_size / scale_factor)^2, text hidden_size]
//     Image splitting: the processor cuts each image into tiles of image_size (plus the resized
//     global image); the graph takes those tiles as images, in the processor's order, and the
//     prompt holds each tile's image tokens. The all-zero images transformers drops from a padded
//     [batch, max_images, ...] pixel_values (get_image_features' real_images_inds) are left out by
//     the caller: every image fed is encoded.
//   decoder: text_config's llama decoder (archs/llama.cpp) at model.text_model, lm_head; 1-D
//     positions [batch, seq].
// onnxruntime-genai 0.18 has no idefics3 / smolvlm model type: no genai_config.json is written.
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/vision_towers.h"
#include "blocks/norms.h"
#include "registry/config_defaults.h"
#include "tasks/image_text_to_text.h"
#include "util/error.h"

namespace mobius {

namespace {

class Idefics3 : public ImageTextToText {
 public:
  // config_type: "idefics3" or "smolvlm" (the config class whose defaults fill omitted fields)
  Idefics3(const HfConfig& c, const std::string& config_type, DataType dtype) {
    const HfConfig cfg = with_class_defaults(c, config_type);
    // Idefics3Config.sub_configs_defaults: text_config is llama, rms_norm_eps 1e-5 when the
    // config has no text_config at all (the llama class default, 1e-6, otherwise)
    const std::optional<HfConfig> sub = cfg.sub("text_config");
    nlohmann::json text_json = sub ? sub->json() : nlohmann::json{{"rms_norm_eps", 1e-5}};
    const HfConfig text_cfg(text_json, cfg.file(), "text_config.");
    const std::string text_type = text_cfg.string_or("model_type", "llama");
    if (text_type != "llama")
      text_cfg.fail("model_type", "the text decoder '" + text_type + "' is not supported: llama");
    DecoderSpec s = llama_spec(with_class_defaults(text_cfg, "llama"), dtype);
    s.names.model = "model.text_model";
    s.names.lm_head = "lm_head";
    s.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", false);
    hidden_size_ = s.hidden_size;
    image_token_id_ = cfg.int_or("image_token_id", 128257);

    const HfConfig vision = with_class_defaults(sub_config(cfg, "vision_config"), config_type + "_vision");
    VisionTransformerOptions o = vit_options(vision, dtype);
    o.layer.intermediate_size = vision.get_int("intermediate_size");
    scale_ = cfg.int_or("scale_factor", 2);
    const int64_t side = o.embedding.image_size / o.embedding.patch_size;
    if (scale_ < 1 || side % scale_ != 0)
      cfg.fail("scale_factor", "must divide the patches per side (vision_config image_size / patch_size = " +
                                   std::to_string(side) + ")");
    image_size_ = o.embedding.image_size;
    patch_size_ = o.embedding.patch_size;
    num_channels_ = o.embedding.num_channels;
    vision_width_ = o.layer.hidden_size;
    text_ = adopt("", std::make_unique<DecoderCausalLM>(s));
    tower_ = child<MaskedPatchVisionTower>("model.vision_model", o);
    proj_ = child<Linear>("model.connector.modality_projection.proj",
                          LinearOptions{vision_width_ * scale_ * scale_, hidden_size_, false, dtype});
  }

  const CausalLM& text() const override { return *text_; }
  Value* embed_tokens(Ops& op, Value* input_ids) const override { return text_->embed(op, input_ids); }
  int64_t hidden_size() const override { return hidden_size_; }
  int64_t image_token_id() const override { return image_token_id_; }
  std::vector<GraphInput> vision_inputs() const override {
    return {{"pixel_values", DataType::FLOAT, {"num_images", num_channels_, image_size_, image_size_}},
            {"pixel_attention_mask", DataType::INT64, {"num_images", image_size_, image_size_}}};
  }
  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    Value* pixels = in.at(0);
    const DataType dt = text_->dtype();
    if (dt != DataType::FLOAT) pixels = op.Cast(pixels, {.to = dt});
    // a patch is real when any of its pixels is (get_image_features' patches_subgrid): [N, g, g]
    const int64_t p = patch_size_, side = tower_->side();
    Value* grid = op.Reshape(in.at(1), std::vector<int64_t>{-1, side, p, side, p});
    Value* real = op.Greater(op.ReduceMax(grid, {2, 4}, {.keepdims = 0}), 0.0);
    Value* x = tower_->forward(op, pixels, real);  // [N, g * g, D]
    auto s = op.builder().scope("model.connector");
    // Idefics3Connector.pixel_shuffle: [N, g, g / s, D s] -> (0, 2, 1, 3) -> [N, g / s, g / s, D s^2]
    // -> (0, 2, 1, 3) -> [N, (g / s)^2, D s^2]
    const int64_t g = tower_->side(), k = scale_, d = vision_width_;
    x = op.Reshape(x, std::vector<int64_t>{-1, g, g / k, d * k});
    x = op.Reshape(op.Transpose(x, {.perm = {0, 2, 1, 3}}), std::vector<int64_t>{-1, g / k, g / k, d * k * k});
    x = op.Reshape(op.Transpose(x, {.perm = {0, 2, 1, 3}}), std::vector<int64_t>{-1, d * k * k});
    return proj_->forward(op, x);
  }

 private:
  DecoderCausalLM* text_;
  MaskedPatchVisionTower* tower_;
  Linear* proj_;
  int64_t hidden_size_, image_token_id_, image_size_, patch_size_, num_channels_, vision_width_, scale_;
};

}  // namespace

std::unique_ptr<Architecture> create_idefics3(const HfConfig& c, DataType dtype) {
  return std::make_unique<Idefics3>(c, "idefics3", dtype);
}

std::unique_ptr<Architecture> create_smolvlm(const HfConfig& c, DataType dtype) {
  return std::make_unique<Idefics3>(c, "smolvlm", dtype);
}

}  // namespace mobius
