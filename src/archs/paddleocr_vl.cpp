// PaddleOCR-VL (transformers/models/paddleocr_vl/{configuration,modeling}_paddleocr_vl.py), task
// image-text-to-text (tasks/image_text_to_text.h, docs/vlm.md).
//   vision (visual.vision_model, PaddleOCRVisionModel): the processor's patches of images of any
//     size, in raster order per image (PaddleOCRVLImageProcessor.patchify; temporal_patch_size 1)
//     -> embeddings.patch_embedding (Conv2d with stride = kernel: one MatMul per patch) + the
//     learned square position table (image_size / patch_size a side) resampled bilinearly, without
//     aligned corners, to each image's (h, w) grid -> encoder.layers.{i} (SigLIP layers: layer_norm1,
//     self_attn q/k/v/out_proj with the 2-D axial RoPE of the patch's (row, column), attention
//     within the image frame; layer_norm2, mlp fc1/fc2) -> post_layernorm; then mlp_AR
//     (PaddleOCRProjector: pre_norm (LayerNorm, eps 1e-5), spatial_merge_size^2 neighbouring patches
//     concatenated, linear_1, GELU, linear_2).
//       pixel_values float32 [num_patches, num_channels, patch_size, patch_size],
//       image_grid_thw int64 [num_images, 3]
//    -> image_features [num_patches / spatial_merge_size^2, text hidden_size]
//     Every quantity is computed from image_grid_thw in the graph (blocks/vision_grid.h).
//   decoder (model.*, lm_head; tied by default): the ERNIE 4.5 layout (archs/ernie4_5.cpp: Llama
//     with use_bias on every projection) with rotate_half RoPE over multimodal positions
//     position_ids [3, batch, seq] in contiguous rope_parameters.mrope_section blocks
//     (PaddleOCRRotaryEmbedding; archs/mrope_decoder.h).
// The text fields are text_config's, or the top level's in checkpoints saved flat (the Hub's
// config.json; PaddleOCRVLConfig.__post_init__ pops them from there). onnxruntime-genai 0.18 has no
// paddleocr_vl model type: no genai_config.json is written.
#include <cmath>

#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/mrope_decoder.h"
#include "archs/vision_towers.h"
#include "blocks/activation.h"
#include "blocks/vision_transformer.h"
#include "blocks/vision_grid.h"
#include "registry/config_defaults.h"
#include "tasks/image_text_to_text.h"
#include "util/error.h"

namespace mobius {

namespace {

struct PaddleVisionSpec {
  int64_t hidden_size, num_layers, num_channels, patch_size, side, merge;
  double rope_theta = 10000.0;
  DecoderSpec layer;  // the SigLIP layer as a pre-norm decoder layer without cache
};

// vision_config (PaddleOCRVisionConfig and its defaults). image_size need not be a multiple of
// patch_size (384 and 14: PaddleOCRVisionEmbeddings' table is (image_size // patch_size)^2).
PaddleVisionSpec vision_spec(const HfConfig& c, DataType dtype) {
  const HfConfig v = with_class_defaults(sub_config(c, "vision_config"), "paddleocr_vl_vision");
  PaddleVisionSpec s;
  s.hidden_size = v.get_int("hidden_size");
  s.num_layers = v.get_int("num_hidden_layers");
  s.num_channels = v.int_or("num_channels", 3);
  if (s.num_channels < 1 || s.num_channels > 64) v.fail("num_channels", "expected a value in [1, 64]");
  s.patch_size = v.int_or("patch_size", 14);
  const int64_t image_size = v.int_or("image_size", 384);
  if (s.patch_size < 1 || s.patch_size > image_size || image_size > 65536)
    v.fail("patch_size", "expected a value in [1, image_size] (image_size at most 65536)");
  s.side = image_size / s.patch_size;
  s.merge = v.int_or("spatial_merge_size", 2);
  if (s.merge < 1 || s.merge > 16) v.fail("spatial_merge_size", "expected a value in [1, 16]");
  if (auto rope = v.sub("rope_parameters")) {
    const std::string type = rope->string_or("rope_type", "axial");
    if (type != "axial") rope->fail("rope_type", "PaddleOCR-VL's vision tower supports only \"axial\" RoPE");
    s.rope_theta = rope->float_or("rope_theta", 10000.0);
  }
  const int64_t heads = v.get_int("num_attention_heads");
  if (heads <= 0 || s.hidden_size % heads != 0 || (s.hidden_size / heads) % 4 != 0)
    v.fail("num_attention_heads", "must divide hidden_size into heads whose size is a multiple of 4 (2-D RoPE)");
  const std::string act = v.string_or("hidden_act", "gelu_pytorch_tanh");
  if (!is_known_activation(act) || act == "xielu") v.fail("hidden_act", "unsupported activation '" + act + "'");
  DecoderSpec& b = s.layer;
  b.hidden_size = s.hidden_size;
  b.dtype = dtype;
  b.norm_eps = static_cast<float>(v.float_or("layer_norm_eps", 1e-6));
  b.norm_kind = NormKind::LayerNorm;
  b.names.input_layernorm = "layer_norm1";
  b.names.post_attention_layernorm = "layer_norm2";
  b.attention = vision_attention(s.hidden_size, heads, {"q_proj", "k_proj", "v_proj", "out_proj"}, dtype);
  b.mlp = {.hidden_size = s.hidden_size, .intermediate_size = v.get_int("intermediate_size"),
           .hidden_act = act, .bias = true, .dtype = dtype, .gated = false};
  return s;
}

// PaddleOCRVisionModel + PaddleOCRProjector.
class PaddleVisionTower : public Module {
 public:
  PaddleVisionTower(const PaddleVisionSpec& s, int64_t out_hidden) : s_(s) {
    const DataType dt = s.layer.dtype;
    const int64_t d = s.hidden_size, merged = d * s.merge * s.merge;
    patch_weight = param("visual.vision_model.embeddings.patch_embedding.weight",
                         {d, s.num_channels, s.patch_size, s.patch_size}, dt);
    patch_bias = param("visual.vision_model.embeddings.patch_embedding.bias", {d}, dt);
    position = param("visual.vision_model.embeddings.position_embedding.weight", {s.side * s.side, d}, dt);
    for (int64_t i = 0; i < s.num_layers; ++i)
      layers.push_back(child<DecoderLayer>("visual.vision_model.encoder.layers." + std::to_string(i), s.layer, i));
    post_layernorm = child<LayerNorm>("visual.vision_model.post_layernorm",
                                      NormOptions{.dim = d, .eps = s.layer.norm_eps, .dtype = dt});
    pre_norm = child<LayerNorm>("mlp_AR.pre_norm", NormOptions{.dim = d, .eps = 1e-5f, .dtype = dt});
    linear_1 = child<Linear>("mlp_AR.linear_1", LinearOptions{merged, merged, true, dt});
    linear_2 = child<Linear>("mlp_AR.linear_2", LinearOptions{merged, out_hidden, true, dt});
  }

  // pixel_values float32 [patches, C, patch, patch], grid_thw int64 [images, 3] ->
  // [patches / merge^2, out_hidden] in the model dtype.
  Value* forward(Ops& op, Value* pixel_values, Value* grid_thw) const {
    const DataType dt = s_.layer.dtype;
    const int64_t d = s_.hidden_size, m = s_.merge;
    const PatchGrid raster = patch_grid(op, grid_thw, 1);
    Value* x = op.Reshape(pixel_values, std::vector<int64_t>{-1, s_.num_channels * s_.patch_size * s_.patch_size});
    if (dt != DataType::FLOAT) x = op.Cast(x, {.to = dt});
    Value* w = op.Reshape(patch_weight->value(op), std::vector<int64_t>{d, -1});
    x = op.Gemm(x, w, patch_bias->value(op), {.transB = 1});  // [patches, d]
    x = op.Add(x, resample_positions(op, position->value(op), s_.side, raster, false, dt));
    x = op.Unsqueeze(x, {0});
    const AttentionContext ctx{frame_mask(op, raster.frame_start, nullptr, nullptr, dt),
                               axial_rope(op, raster.row, raster.col, s_.layer.attention.head_dim, s_.rope_theta, dt)};
    for (const DecoderLayer* layer : layers) x = layer->forward(op, x, ctx, {}).hidden;
    x = post_layernorm->forward(op, op.Squeeze(x, {0}));

    auto scope = op.builder().scope("mlp_AR");
    x = pre_norm->forward(op, x);
    // the patches in merge-block order (per frame: blocks row-major, the m x m patches of a block
    // row-major): the raster index frame_start + row * width + col of each, then m^2 per row
    const PatchGrid blocks = patch_grid(op, grid_thw, m);
    Value* source = op.Add(blocks.frame_start, op.Add(op.Mul(blocks.row, blocks.width), blocks.col));
    x = op.Reshape(op.Gather(x, source), std::vector<int64_t>{-1, d * m * m});
    return linear_2->forward(op, op.Gelu(linear_1->forward(op, x)));
  }

  Parameter *patch_weight, *patch_bias, *position;
  std::vector<DecoderLayer*> layers;
  LayerNorm *post_layernorm, *pre_norm;
  Linear *linear_1, *linear_2;

 private:
  PaddleVisionSpec s_;
};

class PaddleOCRVL : public ImageTextToText {
 public:
  PaddleOCRVL(const HfConfig& c, DataType dtype) {
    const HfConfig cfg = with_class_defaults(c, "paddleocr_vl");
    const std::optional<HfConfig> sub = cfg.sub("text_config");
    const HfConfig text = with_class_defaults(sub ? *sub : cfg, "paddleocr_vl_text");
    // PaddleOCRTextConfig (Ernie4_5Config): default_theta 500000; rope_type "mrope" is the default rope
    const RopeDefaults rope{.rope_theta = 500000.0, .rope_type_aliases = {{"mrope", "default"}}};
    DecoderSpec s = llama_spec(text, dtype, rope);
    const bool bias = text.bool_or("use_bias", false);
    s.attention.qkv_bias = s.attention.o_bias = bias;
    s.mlp.bias = bias;
    // tie_word_embeddings at the top level (default true), or in text_config (saved before transformers 5)
    s.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true) || text.bool_or("tie_word_embeddings", false);
    std::vector<int64_t> section;
    if (auto p = RopeConfig::params(text))
      if (p->has("mrope_section"))
        for (double v : p->float_list("mrope_section")) {
          if (!(v >= 0 && v <= static_cast<double>(kMaxHeadDim)) || v != std::trunc(v))  // before converting
            p->fail("mrope_section", "expected integers in [0, " + std::to_string(kMaxHeadDim) + "]");
          section.push_back(static_cast<int64_t>(v));
        }
    if (section.empty()) section = {16, 24, 24};  // PaddleOCRRotaryEmbedding's default
    if (section.size() != 3 || section[0] < 0 || section[1] < 0 || section[2] < 0 ||
        section[0] + section[1] + section[2] != s.rope.rotary_dim() / 2)
      text.fail("rope_parameters.mrope_section", "must be 3 numbers that sum to head_dim / 2 = " +
                                                     std::to_string(s.rope.rotary_dim() / 2));
    hidden_size_ = s.hidden_size;
    image_token_id_ = cfg.int_or("image_token_id", 100295);
    const PaddleVisionSpec v = vision_spec(cfg, dtype);
    num_channels_ = v.num_channels;
    patch_size_ = v.patch_size;
    text_ = adopt("", std::make_unique<MRopeDecoder>(s, section, false));
    tower_ = adopt("", std::make_unique<PaddleVisionTower>(v, hidden_size_));
  }

  const CausalLM& text() const override { return *text_; }
  Value* embed_tokens(Ops& op, Value* input_ids) const override { return text_->embed(op, input_ids); }
  int64_t hidden_size() const override { return hidden_size_; }
  int64_t image_token_id() const override { return image_token_id_; }
  std::vector<GraphInput> vision_inputs() const override {
    return {{"pixel_values", DataType::FLOAT, {"num_patches", num_channels_, patch_size_, patch_size_}},
            {"image_grid_thw", DataType::INT64, {"num_images", 3}}};
  }
  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    return tower_->forward(op, in.at(0), in.at(1));
  }
  Shape position_ids_shape() const override { return {3, "batch_size", "sequence_length"}; }

 private:
  MRopeDecoder* text_;
  PaddleVisionTower* tower_;
  int64_t hidden_size_, image_token_id_, num_channels_, patch_size_;
};

}  // namespace

std::unique_ptr<Architecture> create_paddleocr_vl(const HfConfig& c, DataType dtype) {
  return std::make_unique<PaddleOCRVL>(c, dtype);
}

}  // namespace mobius
