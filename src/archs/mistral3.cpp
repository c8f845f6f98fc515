// Mistral 3 (transformers/models/mistral3/{configuration,modeling}_mistral3.py,
// Mistral3ForConditionalGeneration), task image-text-to-text (tasks/image_text_to_text.h,
// docs/vlm.md): the Pixtral vision tower (archs/pixtral.h) on each image, the hidden states of
// vision_feature_layer (an index into the tower's num_hidden_layers + 1 hidden states), then
// multi_modal_projector: norm (RMSNorm over the vision width, eps text_config.rms_norm_eps),
// patch_merger (each spatial_merge_size x spatial_merge_size block of patches, concatenated
// channel-major as torch's unfold, through merging_layer, no bias), linear_1,
// projector_hidden_act, linear_2 (biases when multimodal_projector_bias), scattered at
// image_token_id (config field image_token_index) into the text decoder's embeddings. The text
// decoder is text_config's registered type: mistral (archs/llama.cpp mistral_spec; Mistral Small
// 3.x) or ministral3 (archs/ministral3.cpp ministral3_spec; Ministral 3).
//   vision: pixel_values float32 [num_images, num_channels, height, width], images of one size
//     (onnxruntime-genai runs the graph once per image, on the image cut out of its padded batch;
//     height and width multiples of patch_size * spatial_merge_size, as its processor resizes
//     them; a remainder is cut off as transformers does)
//        -> image_features [num_images * (height / (patch * merge)) * (width / (patch * merge)),
//           text hidden_size], each image's merged patches row-major
// Checkpoint keys as transformers 5 saves them: vision_tower.*, multi_modal_projector.*,
// language_model.model.*, language_model.lm_head (absent with tie_word_embeddings, default true).
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/pixtral.h"
#include "archs/vision_towers.h"
#include "blocks/activation.h"
#include "registry/config_defaults.h"
#include "tasks/image_text_to_text.h"

namespace mobius {

namespace {

class Mistral3 : public ImageTextToText {
 public:
  Mistral3(const HfConfig& c, DataType dtype) {
    // Mistral3Config: attribute_map image_token_id -> image_token_index; text_config a mistral
    // config, vision_config a pixtral one (required here: transformers fills an absent one with
    // Mistral-Small-3.1's sizes)
    const HfConfig cfg = with_attribute_map(c, {{"image_token_id", "image_token_index"}});
    const std::optional<HfConfig> text_sub = cfg.sub("text_config");
    if (!text_sub) cfg.fail("text_config", "is required for a Mistral 3 model: the text decoder's sizes");
    const std::string text_type = text_sub->string_or("model_type", "mistral");
    if (text_type != "mistral" && text_type != "ministral3")
      text_sub->fail("model_type", "Mistral 3's text decoder '" + text_type + "' is not supported: mistral or ministral3");
    const HfConfig text = with_class_defaults(*text_sub, text_type);
    DecoderSpec s = text_type == "mistral" ? mistral_spec(text, dtype) : ministral3_spec(text, dtype);
    s.names.model = "language_model.model";
    s.names.lm_head = "language_model.lm_head";
    s.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true);
    hidden_size_ = s.hidden_size;
    image_token_id_ = cfg.int_or("image_token_index", 10);

    const std::optional<HfConfig> vision = cfg.sub("vision_config");
    if (!vision) cfg.fail("vision_config", "is required for a Mistral 3 model: the vision tower's sizes");
    const std::string vision_type = vision->string_or("model_type", "pixtral");
    if (vision_type != "pixtral")
      vision->fail("model_type", "Mistral 3's vision tower '" + vision_type + "' is not supported: pixtral");
    auto tower = std::make_unique<PixtralVisionTower>(*vision, dtype);
    const int64_t num_layers = tower->num_hidden_layers();
    // vision_feature_layer: one index into hidden_states (a list would concatenate widths the
    // projector's norm and patch merger do not take)
    if (cfg.json().contains("vision_feature_layer") && !cfg.json()["vision_feature_layer"].is_number_integer())
      cfg.fail("vision_feature_layer", "expected one integer (a list of layers is not supported)");
    const int64_t pick = cfg.int_or("vision_feature_layer", -1);
    feature_layer_ = pick < 0 ? pick + num_layers + 1 : pick;
    if (feature_layer_ < 0 || feature_layer_ > num_layers)
      cfg.fail("vision_feature_layer", "index " + std::to_string(pick) + " is outside the tower's " +
                                           std::to_string(num_layers + 1) + " hidden states");
    merge_ = cfg.int_or("spatial_merge_size", 2);
    if (merge_ < 1 || merge_ > 64) cfg.fail("spatial_merge_size", "expected an integer in [1, 64]");
    const std::string act = cfg.string_or("projector_hidden_act", "gelu");
    if (!is_known_activation(act)) cfg.fail("projector_hidden_act", "unsupported activation '" + act + "'");
    projector_act_ = act;
    const bool bias = cfg.bool_or("multimodal_projector_bias", false);
    const int64_t width = tower->hidden_size();
    patch_ = tower->patch_size();
    num_channels_ = tower->num_channels();
    text_ = adopt("", std::make_unique<DecoderCausalLM>(s));
    tower_ = adopt("vision_tower", std::move(tower));
    norm_ = child<RMSNorm>("multi_modal_projector.norm", NormOptions{.dim = width, .eps = s.norm_eps, .dtype = dtype});
    merging_layer_ = child<Linear>("multi_modal_projector.patch_merger.merging_layer",
                                   LinearOptions{width * merge_ * merge_, width, false, dtype});
    linear_1_ = child<Linear>("multi_modal_projector.linear_1", LinearOptions{width, hidden_size_, bias, dtype});
    linear_2_ = child<Linear>("multi_modal_projector.linear_2", LinearOptions{hidden_size_, hidden_size_, bias, dtype});
  }

  const CausalLM& text() const override { return *text_; }
  Value* embed_tokens(Ops& op, Value* input_ids) const override { return text_->embed(op, input_ids); }
  int64_t hidden_size() const override { return hidden_size_; }
  int64_t image_token_id() const override { return image_token_id_; }
  std::vector<GraphInput> vision_inputs() const override {
    return {{"pixel_values", DataType::FLOAT, {"num_images", num_channels_, "height", "width"}}};
  }
  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    Value* pixels = in.at(0);
    const DataType dt = text_->dtype();
    if (dt != DataType::FLOAT) pixels = op.Cast(pixels, {.to = dt});
    Value* x = tower_->forward(op, pixels, feature_layer_).at(static_cast<size_t>(feature_layer_));
    auto s = op.builder().scope("multi_modal_projector");
    return linear_2_->forward(op, activation(op, projector_act_, linear_1_->forward(op, merge(op, norm_->forward(op, x), pixels))));
  }
  std::optional<GenaiMultimodal> genai_multimodal() const override {
    return GenaiMultimodal{"mistral3", patch_, merge_, 1, {}};
  }

 private:
  // Mistral3PatchMerger: x [images, rows * cols, width] (the patch grid of `pixels`) -> each
  // merge x merge block (rows and cols cut to multiples of merge), blocks row-major, its features
  // ordered (channel, block row, block column) as torch's unfold -> merging_layer:
  // [images * blocks, width].
  Value* merge(Ops& op, Value* x, Value* pixels) const {
    auto s = op.builder().scope("patch_merger");
    GraphBuilder& b = op.builder();
    const int64_t m = merge_;
    const int64_t width = tower_->hidden_size();
    Value* grid = op.Div(op.Shape(pixels, {.start = 2, .end = 4}), static_cast<double>(patch_));  // [rows, cols]
    Value* blocks = op.Div(grid, static_cast<double>(m));                                        // [rows / m, cols / m]
    Value* images = op.Shape(pixels, {.start = 0, .end = 1});
    x = op.Reshape(x, op.Concat({images, grid, b.ints({width})}, {.axis = 0}));  // [images, rows, cols, width]
    x = op.Slice(x, b.ints({0, 0}), op.Mul(blocks, static_cast<double>(m)), b.ints({1, 2}));
    Value* br = op.Slice(blocks, b.ints({0}), b.ints({1}));
    Value* bc = op.Slice(blocks, b.ints({1}), b.ints({2}));
    x = op.Reshape(x, op.Concat({images, br, b.ints({m}), bc, b.ints({m, width})}, {.axis = 0}));
    x = op.Transpose(x, {.perm = {0, 1, 3, 5, 2, 4}});  // [images, rows / m, cols / m, width, m, m]
    return merging_layer_->forward(op, op.Reshape(x, std::vector<int64_t>{-1, width * m * m}));
  }

  DecoderCausalLM* text_;
  PixtralVisionTower* tower_;
  RMSNorm* norm_;
  Linear *merging_layer_, *linear_1_, *linear_2_;
  std::string projector_act_;
  int64_t feature_layer_, merge_, patch_, num_channels_, hidden_size_, image_token_id_;
};

}  // namespace

std::unique_ptr<Architecture> create_mistral3(const HfConfig& c, DataType dtype) {
  return std::make_unique<Mistral3>(c, dtype);
}

}  // namespace mobius
