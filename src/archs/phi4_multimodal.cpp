// Phi-4-multimodal (transformers/models/phi4_multimodal/{configuration,modeling}_phi4_multimodal.py,
// Phi4MultimodalForCausalLM), task image-text-to-text (tasks/image_text_to_text.h, docs/vlm.md):
// vision, speech, embedding and decoder graphs.
//   vision (model.embed_tokens_extend.image_embed, Phi4MultimodalImageEmbedding): every crop of
//     every image through img_processor (Phi4MultimodalVisionModel: the SigLIP-like tower over
//     masked patches, archs/vision_towers.h MaskedPatchVisionTower) up to vision_config.feature_layer
//     (hidden_states[feature_layer], before post_layernorm), the patch grid (reflection-padded by
//     one when odd) average-pooled 2 x 2 (image_token_compression) to b x b tokens a crop; then per
//     image the HD transform: the h/crop x w/crop sub-crops (crops 1..) tiled row-major into one
//     grid, cut to the useful rows and columns of image_attention_mask, each grid row followed by
//     sub_img_feature_extensor; then global_img_feature_extensor; then the global crop (crop 0),
//     each of its b rows followed by sub_img_feature_extensor; then img_projection_up, GELU (erf),
//     img_projection_down.
//       pixel_values float32 [num_images, num_crops, num_channels, crop_size, crop_size],
//       image_attention_mask float32 [num_images, num_crops, side, side] (1 = real patch; side =
//         crop_size / patch_size), image_sizes int64 [num_images, 2] (the HD-resized height, width)
//    -> image_features [sum over images of (uh (uw + 1) + 1 + b (b + 1)), hidden_size]
//     The rows are computed as gather indices in the graph, so one run takes any number of images
//     with any crop layouts (num_crops: the largest, the others padded as the processor pads).
//   speech (model.embed_tokens_extend.audio_embed, archs/phi4_multimodal_audio.h): the conformer
//     audio encoder and projection, with onnxruntime-genai's phi4mm speech inputs
//       audio_embeds float32 [num_audios, num_frames, input_size], audio_attention_mask bool
//       [num_audios, num_frames], audio_sizes int64 [num_audios], audio_projection_mode int64 [1]
//    -> audio_features [sum(audio_sizes), hidden_size], scattered by the embedding graph at
//       audio_config.audio_token_id (200011, <|endoftext11|>)
//   decoder: the phi3 decoder (archs/phi3.cpp phi3_spec) at model.*, lm_head, on inputs_embeds;
//     image features go to the vision_config.image_token_id tokens (200010, <|endoftext10|>).
// config.json: the text fields at the top level (Phi4MultimodalConfig), vision_config
// (Phi4MultimodalVisionConfig: crop_size must equal image_size, feature_layer, image_token_id).
// Checkpoint keys as transformers 5.23 saves Phi4MultimodalForCausalLM: model.*, lm_head.*,
// model.embed_tokens_extend.{image_embed,audio_embed}.*; the vision tower's layers after
// feature_layer, post_layernorm and head are not read. The released
// checkpoint's vision-lora / speech-lora folders are PEFT adapters which transformers 5.23 does not
// apply by itself: mobius reads the base weights only (docs/vlm.md).
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/phi4_multimodal_audio.h"
#include "archs/vision_towers.h"
#include "blocks/activation.h"
#include "blocks/linear.h"
#include "registry/config_defaults.h"
#include "tasks/image_text_to_text.h"
#include "util/error.h"

namespace mobius {

namespace {

constexpr const char* kImageEmbed = "model.embed_tokens_extend.image_embed";

class Phi4Multimodal : public ImageTextToText {
 public:
  Phi4Multimodal(const HfConfig& c, DataType dtype) {
    const HfConfig cfg = with_class_defaults(c, "phi4_multimodal");
    // Phi4MultimodalConfig has no head_dim field: an explicit null is what its rope validation and
    // attention read (getattr(config, "head_dim", ...)), and both fail on it
    if (cfg.json().contains("head_dim") && !cfg.has("head_dim"))
      cfg.fail("head_dim", "null is refused by transformers (Phi4MultimodalConfig); leave it out");
    DecoderSpec s = phi3_spec(cfg, dtype);
    hidden_size_ = s.hidden_size;

    const HfConfig vision = with_class_defaults(sub_config(cfg, "vision_config"), "phi4_multimodal_vision");
    VisionTransformerOptions o = vit_options(vision, dtype);
    o.layer.intermediate_size = vision.get_int("intermediate_size");
    const VisionEmbeddingsOptions& e = o.embedding;
    crop_size_ = vision.int_or("crop_size", 448);
    if (crop_size_ != e.image_size)
      vision.fail("crop_size", "must equal image_size (" + std::to_string(e.image_size) +
                                   "): the crops are the tower's images");
    patch_size_ = e.patch_size;
    side_ = e.image_size / e.patch_size;
    if (side_ < 2)
      vision.fail("patch_size", "image_size / patch_size must be at least 2 (the 2 x 2 token compression)");
    pooled_ = (side_ + 1) / 2;
    const int64_t layers = o.num_hidden_layers;
    const int64_t feature_layer = vision.int_or("feature_layer", -2);
    if (feature_layer < -(layers + 1) || feature_layer > layers)
      vision.fail("feature_layer", "must index the " + std::to_string(layers + 1) +
                                       " hidden states (embeddings and one per layer)");
    feature_layers_ = (feature_layer + layers + 1) % (layers + 1);
    image_token_id_ = vision.int_or("image_token_id", 200010);
    num_channels_ = e.num_channels;
    vision_width_ = o.layer.hidden_size;

    const HfConfig audio = with_class_defaults(sub_config(cfg, "audio_config"), "phi4_multimodal_audio");
    audio_token_id_ = audio.int_or("audio_token_id", 200011);
    text_ = adopt("", std::make_unique<DecoderCausalLM>(s));
    audio_ = child<Phi4AudioEmbedding>("model.embed_tokens_extend.audio_embed", audio, hidden_size_, dtype);
    const std::string p = kImageEmbed;
    tower_ = child<MaskedPatchVisionTower>(p + ".img_processor", o);
    up_ = child<Linear>(p + ".img_projection_up", LinearOptions{vision_width_, hidden_size_, true, dtype});
    down_ = child<Linear>(p + ".img_projection_down", LinearOptions{hidden_size_, hidden_size_, true, dtype});
    glb_ = param(p + ".global_img_feature_extensor", {1, 1, vision_width_}, dtype);
    sub_ = param(p + ".sub_img_feature_extensor", {1, 1, 1, vision_width_}, dtype);
  }

  const CausalLM& text() const override { return *text_; }
  Value* embed_tokens(Ops& op, Value* input_ids) const override { return text_->embed(op, input_ids); }
  int64_t hidden_size() const override { return hidden_size_; }
  int64_t image_token_id() const override { return image_token_id_; }
  std::vector<GraphInput> vision_inputs() const override {
    return {{"pixel_values", DataType::FLOAT, {"num_images", "num_crops", num_channels_, crop_size_, crop_size_}},
            {"image_attention_mask", DataType::FLOAT, {"num_images", "num_crops", side_, side_}},
            {"image_sizes", DataType::INT64, {"num_images", 2}}};
  }
  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    auto scope = op.builder().scope(kImageEmbed);
    Value* pixels = op.Reshape(in.at(0), std::vector<int64_t>{-1, num_channels_, crop_size_, crop_size_});
    const DataType dt = text_->dtype();
    if (dt != DataType::FLOAT) pixels = op.Cast(pixels, {.to = dt});
    Value* real = op.Not(op.Equal(in.at(1), 0.0));  // [N, C, g, g]
    Value* x = tower_->forward(op, pixels, op.Reshape(real, std::vector<int64_t>{-1, side_, side_}), feature_layers_);
    Value* table = op.Concat({compress(op, x), op.Reshape(sub_->value(op), std::vector<int64_t>{1, vision_width_}),
                              op.Reshape(glb_->value(op), std::vector<int64_t>{1, vision_width_})},
                             {.axis = 0});
    Value* rows = hd_rows(op, op.Shape(in.at(0)), real, in.at(2));
    Value* y = activation(op, "gelu", up_->forward(op, op.Gather(table, rows)));
    return down_->forward(op, y);
  }
  std::vector<GraphInput> speech_inputs() const override {
    return {{"audio_embeds", DataType::FLOAT, {"num_audios", "num_frames", audio_->input_size()}},
            {"audio_attention_mask", DataType::BOOL, {"num_audios", "num_frames"}},
            {"audio_sizes", DataType::INT64, {"num_audios"}},
            {"audio_projection_mode", DataType::INT64, {1}}};
  }
  Value* encode_audio(Ops& op, const std::vector<Value*>& in) const override {
    Value* features = in.at(0);
    if (text_->dtype() != DataType::FLOAT) features = op.Cast(features, {.to = text_->dtype()});
    return audio_->forward(op, features, in.at(1), in.at(2), in.at(3));
  }
  int64_t audio_token_id() const override { return audio_token_id_; }
  // onnxruntime-genai 0.18's phi4mm pipeline: onnxruntime-extensions' Phi4VisionProcessor counts
  // 256 + 16 global tokens a image and 14-pixel patches, so only the released 448 / 14 layout runs
  // there; other sizes get no genai_config.json.
  std::optional<GenaiMultimodal> genai_multimodal() const override {
    if (crop_size_ != 448 || patch_size_ != 14) return std::nullopt;
    return GenaiMultimodal{.type = "phi4mm", .patch_size = 0, .spatial_merge_size = 0, .temporal_patch_size = 0,
                           .token_ids = {}, .image_size = crop_size_};
  }

 private:
  // get_img_features after the tower: [M, g * g, D] -> the b x b pooled tokens of every crop,
  // flattened row-major: [M * b * b, D] (image_token_compression: AvgPool2d(2, 2); an odd grid
  // first ReflectionPad2d((0, 1, 0, 1)): row and column g - 2 repeated after the last).
  Value* compress(Ops& op, Value* x) const {
    const int64_t g = side_, d = vision_width_, b = pooled_;
    x = op.Reshape(x, std::vector<int64_t>{-1, g, g, d});
    if (g % 2 != 0) {
      x = op.Concat({x, op.Slice(x, {g - 2}, {g - 1}, {2})}, {.axis = 2});
      x = op.Concat({x, op.Slice(x, {g - 2}, {g - 1}, {1})}, {.axis = 1});
    }
    x = op.ReduceMean(op.Reshape(x, std::vector<int64_t>{-1, b, 2, b, 2, d}), {2, 4}, {.keepdims = 0});
    return op.Reshape(x, std::vector<int64_t>{-1, d});
  }

  // The row of the table [pooled crops; sub_img_feature_extensor; global_img_feature_extensor]
  // for every output token of every image, in Phi4MultimodalImageEmbedding.forward's order:
  // pixel_shape = Shape(pixel_values) (N, C, ...), real bool [N, C, g, g], sizes int64 [N, 2]
  // -> int64 [T].
  Value* hd_rows(Ops& op, Value* pixel_shape, Value* real, Value* sizes) const {
    GraphBuilder& b = op.builder();
    auto s = b.scope("hd_transform");
    const int64_t pb = pooled_;
    Value* crops = op.Gather(pixel_shape, b.scalar_i64(1));  // C
    Value* images = op.Gather(pixel_shape, b.scalar_i64(0));  // N
    Value* crop_h = op.Div(op.Gather(sizes, b.scalar_i64(0), {.axis = 1}), static_cast<double>(crop_size_));  // [N]
    Value* crop_w = op.Div(op.Gather(sizes, b.scalar_i64(1), {.axis = 1}), static_cast<double>(crop_size_));
    Value* area = op.Mul(crop_h, crop_w);
    // useful rows: the mask's first column over the first crop of each crop row (every other
    // patch row); useful columns: its first row over the first crop row (every other column)
    Value* m = op.Cast(real, {.to = DataType::INT64});  // [N, C, g, g]
    Value* even = b.ints({0});
    Value* col0 = op.Gather(op.Slice(m, even, b.ints({side_}), b.ints({2}), b.ints({2})), b.scalar_i64(0), {.axis = 3});
    Value* row0 = op.Gather(op.Slice(m, even, b.ints({side_}), b.ints({3}), b.ints({2})), b.scalar_i64(0), {.axis = 2});
    Value* colsum = op.ReduceSum(col0, {2}, {.keepdims = 0});  // [N, C]
    Value* rowsum = op.ReduceSum(row0, {2}, {.keepdims = 0});
    Value* k = op.Unsqueeze(op.Range(b.scalar_i64(0), crops, b.scalar_i64(1)), {0});  // [1, C]
    Value* w_col = op.Unsqueeze(crop_w, {1});
    Value* sub_crop = op.And(op.GreaterOrEqual(k, 1.0), op.LessOrEqual(k, op.Unsqueeze(area, {1})));
    Value* first_of_row = op.Equal(mod(op, op.Sub(k, 1.0), op.Max(w_col, 1.0)), 0.0);
    Value* in_row0 = op.And(op.GreaterOrEqual(k, 1.0), op.LessOrEqual(k, w_col));
    Value* zero = b.scalar_i64(0);
    Value* uh = op.ReduceSum(op.Where(op.And(sub_crop, first_of_row), colsum, zero), {1}, {.keepdims = 0});  // [N]
    Value* uw = op.ReduceSum(op.Where(in_row0, rowsum, zero), {1}, {.keepdims = 0});
    // tokens of image i: uh (uw + 1) sub tokens, 1 separator, b (b + 1) global tokens
    Value* sub_n = op.Mul(uh, op.Add(uw, 1.0));
    Value* count = op.Add(sub_n, static_cast<double>(1 + pb * (pb + 1)));
    Value* ends = op.CumSum(count, zero);
    Value* total = op.ReduceSum(count, {0}, {.keepdims = 1});
    Value* t = op.Range(b.scalar_i64(0), op.Reshape(total, std::vector<int64_t>{}), b.scalar_i64(1));  // [T]
    // the image of token t: how many images end at or before it
    Value* img = op.ReduceSum(op.Cast(op.GreaterOrEqual(op.Unsqueeze(t, {1}), op.Unsqueeze(ends, {0})),
                                      {.to = DataType::INT64}),
                              {1}, {.keepdims = 0});
    auto at = [&](Value* v) { return op.Gather(v, img); };
    Value* l = op.Sub(t, op.Sub(at(ends), at(count)));  // index within the image
    Value* uw_t = at(uw);
    Value* sub_len = at(sub_n);
    Value* first_crop = op.Mul(img, crops);  // crop 0 of the image among all crops
    auto row_of = [&](Value* crop, Value* r, Value* c) {  // table row of pooled token (r, c) of a crop
      return op.Add(op.Mul(op.Add(op.Mul(op.Add(first_crop, crop), static_cast<double>(pb)), r),
                           static_cast<double>(pb)),
                    c);
    };
    Value* pooled_rows = op.Mul(op.Mul(images, crops), static_cast<double>(pb * pb));
    Value* sub_gn = pooled_rows;
    Value* glb_gn = op.Add(pooled_rows, 1.0);
    // sub grid: (r, c) of the uh x (uw + 1) grid, c == uw the separator
    Value* width = op.Add(uw_t, 1.0);
    Value* r = op.Div(l, width);
    Value* c = op.Sub(l, op.Mul(r, width));
    Value* crop = op.Add(op.Add(op.Mul(op.Div(r, static_cast<double>(pb)), at(crop_w)), op.Div(c, static_cast<double>(pb))),
                         1.0);
    Value* in_sub = op.Where(op.Equal(c, uw_t), sub_gn,
                             row_of(crop, mod(op, r, b.scalar_i64(pb)), mod(op, c, b.scalar_i64(pb))));
    // global crop: (r, c) of the b x (b + 1) grid after the separator, c == b the separator
    Value* l2 = op.Sub(op.Sub(l, sub_len), 1.0);
    Value* r2 = op.Div(l2, static_cast<double>(pb + 1));
    Value* c2 = op.Sub(l2, op.Mul(r2, static_cast<double>(pb + 1)));
    Value* in_glb = op.Where(op.Equal(c2, static_cast<double>(pb)), sub_gn, row_of(zero, r2, c2));
    return op.Where(op.Less(l, sub_len), in_sub, op.Where(op.Equal(l, sub_len), glb_gn, in_glb));
  }

  // a mod n for a >= -1, n >= 1 (int64): a - trunc(a / n) n; -1 gives -1, which no caller takes
  // for a crop index.
  static Value* mod(Ops& op, Value* a, Value* n) { return op.Sub(a, op.Mul(op.Div(a, n), n)); }

  DecoderCausalLM* text_;
  Phi4AudioEmbedding* audio_;
  MaskedPatchVisionTower* tower_;
  Linear *up_, *down_;
  Parameter *glb_, *sub_;
  int64_t hidden_size_, image_token_id_, audio_token_id_, crop_size_, patch_size_, side_, pooled_, feature_layers_, num_channels_, vision_width_;
};

}  // namespace

std::unique_ptr<Architecture> create_phi4_multimodal(const HfConfig& c, DataType dtype) {
  return std::make_unique<Phi4Multimodal>(c, dtype);
}

}  // namespace mobius
