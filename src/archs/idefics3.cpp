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
#include <cmath>

#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/vision_towers.h"
#include "blocks/norms.h"
#include "registry/config_defaults.h"
#include "tasks/image_text_to_text.h"
#include "util/error.h"

namespace mobius {

namespace {

// Idefics3VisionTransformer: embeddings.patch_embedding, embeddings.position_embedding,
// encoder.layers.{i} (SigLIP layers), post_layernorm.
// torch.arange(start, end, step) in float32 as PyTorch's CPU kernel computes it (aten/src/ATen/native/
// cpu/RangeFactoriesKernel.cpp arange_kernel with cpu_serial_kernel_vec): ceil((end - start) / step)
// values; in blocks of 2 x 8 (two Vectorized<float>) value j of a vector starting at index b is
// float(float(start + b * step) + j * step) in double, the rest start + i * step in double,
// rounded to float. Checked equal to torch 2.13 for every step 1/n, n < 1200 (the values
// bucketize compares against, where one ulp moves a patch to the neighbouring position).
std::vector<float> torch_arange_f32(double start, double end, double step) {
  const auto count = static_cast<int64_t>(std::ceil((end - start) / step));
  std::vector<float> out;
  const int64_t vec = 8, vectorized = count / (2 * vec) * (2 * vec);
  for (int64_t i = 0; i < count; ++i) {
    if (i < vectorized) {
      const auto base = static_cast<float>(start + step * static_cast<double>(i - i % vec));
      out.push_back(static_cast<float>(static_cast<double>(base) + static_cast<double>(i % vec) * step));
    } else {
      out.push_back(static_cast<float>(start + step * static_cast<double>(i)));
    }
  }
  return out;
}

class Idefics3VisionTower : public Module {
 public:
  explicit Idefics3VisionTower(const VisionTransformerOptions& o) : o_(o) {
    const VisionEmbeddingsOptions& e = o.embedding;
    side_ = e.image_size / e.patch_size;
    patch = child<PatchEmbedding>("embeddings.patch_embedding", e.num_channels, e.hidden_size, e.patch_size, true, e.dtype);
    position = param("embeddings.position_embedding.weight", {side_ * side_, e.hidden_size}, e.dtype);
    for (int64_t i = 0; i < o.num_hidden_layers; ++i)
      layers.push_back(child<VisionEncoderLayer>("encoder.layers." + std::to_string(i), o.layer));
    post_layernorm = child<LayerNorm>(
        "post_layernorm", NormOptions{.dim = e.hidden_size, .eps = o.layer.layer_norm_eps, .dtype = e.dtype});
  }

  // pixels [num_images, C, S, S] in the model dtype, pixel_mask int64 [num_images, S, S] ->
  // last_hidden_state [num_images, side^2, hidden].
  Value* forward(Ops& op, Value* pixels, Value* pixel_mask) const {
    auto scope = enter(op);
    GraphBuilder& b = op.builder();
    const int64_t p = o_.embedding.patch_size, g = side_;
    // a patch is real when any of its pixels is (get_image_features' patches_subgrid): [N, g, g]
    Value* grid = op.Reshape(pixel_mask, std::vector<int64_t>{-1, g, p, g, p});
    Value* real = op.Greater(op.ReduceMax(grid, {2, 4}, {.keepdims = 0}), 0.0);
    Value* real_i = op.Cast(real, {.to = DataType::INT64});
    Value* rows = op.ReduceSum(op.Gather(real_i, b.scalar_i64(0), {.axis = 2}), {1}, {.keepdims = 0});  // [N]
    Value* cols = op.Gather(op.ReduceSum(real_i, {2}, {.keepdims = 0}), b.scalar_i64(0), {.axis = 1});  // [N]
    Value* flat_real = op.Reshape(real, std::vector<int64_t>{-1, g * g});
    Value* positions = op.Where(flat_real, op.Reshape(op.Add(op.Mul(op.Unsqueeze(bucket(op, rows), {2}), static_cast<double>(g)),
                                                             op.Unsqueeze(bucket(op, cols), {1})),
                                                      std::vector<int64_t>{-1, g * g}),
                                b.scalar_i64(0));
    Value* x = op.Add(patch->forward(op, pixels), op.Gather(position->value(op), positions));
    Value* mask = padding_mask(op, op.Cast(flat_real, {.to = DataType::INT64}), o_.layer.dtype);
    for (const VisionEncoderLayer* layer : layers) x = layer->forward(op, x, mask);
    return post_layernorm->forward(op, x);
  }

  int64_t side() const { return side_; }

  PatchEmbedding* patch;
  Parameter* position;
  std::vector<VisionEncoderLayer*> layers;
  LayerNorm* post_layernorm;

 private:
  // Each real-patch count n [N] -> the position-table row (or column) of coordinates 0..side-1:
  // [N, side], torch.bucketize(min(i * (1 / n), 1 - 1e-6), arange(1/side, 1, 1/side), right=True),
  // i.e. how many boundaries are <= the coordinate, in float32 as transformers computes them.
  Value* bucket(Ops& op, Value* n) const {
    GraphBuilder& b = op.builder();
    const int64_t g = side_;
    std::vector<float> index(static_cast<size_t>(g));
    for (int64_t i = 0; i < g; ++i) index[static_cast<size_t>(i)] = static_cast<float>(i);
    Value* step = op.Div(1.0, op.Cast(n, {.to = DataType::FLOAT}));
    Value* coord = op.Min(op.Mul(op.Unsqueeze(step, {1}), b.constant_f32(index, {g})), static_cast<double>(static_cast<float>(1.0 - 1e-6)));
    const std::vector<float> bounds = torch_arange_f32(1.0 / static_cast<double>(g), 1.0, 1.0 / static_cast<double>(g));
    const auto count = static_cast<int64_t>(bounds.size());
    if (count == 0) return op.Cast(op.Mul(coord, 0.0), {.to = DataType::INT64});  // one patch a side: row 0
    Value* ge = op.GreaterOrEqual(op.Unsqueeze(coord, {2}), b.constant_f32(bounds, {count}));
    return op.ReduceSum(op.Cast(ge, {.to = DataType::INT64}), {2}, {.keepdims = 0});
  }

  VisionTransformerOptions o_;
  int64_t side_;
};

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
    num_channels_ = o.embedding.num_channels;
    vision_width_ = o.layer.hidden_size;
    text_ = adopt("", std::make_unique<DecoderCausalLM>(s));
    tower_ = child<Idefics3VisionTower>("model.vision_model", o);
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
    Value* x = tower_->forward(op, pixels, in.at(1));  // [N, g * g, D]
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
  Idefics3VisionTower* tower_;
  Linear* proj_;
  int64_t hidden_size_, image_token_id_, image_size_, num_channels_, vision_width_, scale_;
};

}  // namespace

std::unique_ptr<Architecture> create_idefics3(const HfConfig& c, DataType dtype) {
  return std::make_unique<Idefics3>(c, "idefics3", dtype);
}

std::unique_ptr<Architecture> create_smolvlm(const HfConfig& c, DataType dtype) {
  return std::make_unique<Idefics3>(c, "smolvlm", dtype);
}

}  // namespace mobius
