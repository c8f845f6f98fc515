// The Pixtral vision tower (archs/pixtral.h), and the standalone `pixtral` type (PixtralVisionModel,
// task image-feature-extraction) built on it.
#include "archs/pixtral.h"

#include <cmath>
#include <memory>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/vision_grid.h"
#include "config/rope_config.h"
#include "registry/config_defaults.h"

namespace mobius {

PixtralVisionTower::PixtralVisionTower(const HfConfig& vision_config, DataType dtype) : dtype_(dtype) {
  const HfConfig c = with_class_defaults(vision_config, "pixtral");
  hidden_ = c.get_int("hidden_size");
  patch_ = c.int_or("patch_size", 16);
  if (patch_ < 1 || patch_ > 4096) c.fail("patch_size", "expected an integer in [1, 4096]");
  channels_ = c.int_or("num_channels", 3);
  if (channels_ < 1 || channels_ > 64) c.fail("num_channels", "expected a value in [1, 64]");
  const int64_t heads = c.get_int("num_attention_heads");
  if (heads < 1 || hidden_ % heads != 0 || (hidden_ / heads) % 4 != 0)
    c.fail("num_attention_heads", "must divide hidden_size into heads whose size is a multiple of 4 (2-D RoPE)");
  head_dim_ = hidden_ / heads;  // PixtralVisionConfig.__post_init__: config.json's head_dim is not read
  // PixtralVisionConfig (default_rope_type "axial"): a rope_type "default" becomes "axial", and
  // rope_theta is the rope dict's, else the top-level field's (a legacy config.json)
  theta_ = c.float_or("rope_theta", 10000.0);
  if (std::optional<HfConfig> p = RopeConfig::params(c)) {
    const std::string type = p->string_or("rope_type", "axial");
    if (type != "axial" && type != "default")
      p->fail("rope_type", "Pixtral's vision RoPE is \"axial\", got \"" + type + "\"");
    theta_ = p->float_or("rope_theta", theta_);
  }
  const std::string act = c.string_or("hidden_act", "gelu");
  if (!is_known_activation(act)) c.fail("hidden_act", "unsupported activation '" + act + "'");

  DecoderSpec s;  // PixtralAttentionLayer: a pre-norm layer with RMSNorm (eps 1e-5) and a gated MLP
  s.hidden_size = hidden_;
  s.dtype = dtype;
  s.norm_eps = 1e-5f;
  s.norm_kind = NormKind::RMSNorm;
  s.names.input_layernorm = "attention_norm";
  s.names.post_attention_layernorm = "ffn_norm";
  s.names.self_attn = "attention";
  s.names.mlp = "feed_forward";
  AttentionOptions& a = s.attention;
  a.hidden_size = hidden_;
  a.num_attention_heads = a.num_key_value_heads = heads;
  a.head_dim = head_dim_;
  a.qkv_bias = a.o_bias = false;
  a.dtype = dtype;
  s.mlp = {.hidden_size = hidden_, .intermediate_size = c.get_int("intermediate_size"), .hidden_act = act,
           .bias = false, .dtype = dtype, .gated = true};
  patch_conv = child<PatchEmbedding>("patch_conv", channels_, hidden_, patch_, false, dtype);
  ln_pre = child<RMSNorm>("ln_pre", NormOptions{.dim = hidden_, .eps = 1e-5f, .dtype = dtype});
  const int64_t n = c.get_int("num_hidden_layers");
  if (n < 0) c.fail("num_hidden_layers", "must not be negative");
  for (int64_t i = 0; i < n; ++i)
    layers_.push_back(child<DecoderLayer>("transformer.layers." + std::to_string(i), s, i));
}

RopeTables PixtralVisionTower::rope(Ops& op, Value* pixel_values) const {
  GraphBuilder& b = op.builder();
  // the patch grid: rows = height / patch, cols = width / patch (the Conv's output size)
  Value* hw = op.Div(op.Shape(pixel_values, {.start = 2, .end = 4}), static_cast<double>(patch_));
  Value* cols = op.Gather(hw, b.scalar_i64(1));
  Value* idx = op.Range(b.scalar_i64(0), op.Mul(op.Gather(hw, b.scalar_i64(0)), cols), b.scalar_i64(1));
  RopeTables t = rope_at(op, op.Div(idx, cols), op.Sub(idx, op.Mul(op.Div(idx, cols), cols)));
  // [num_images, patches, head_dim / 2]: RotaryEmbedding takes one table row per batch row
  Value* shape = op.Concat({op.Shape(pixel_values, {.start = 0, .end = 1}), b.ints({1, 1})}, {.axis = 0});
  return {op.Expand(t.cos, shape), op.Expand(t.sin, shape), 0};
}

RopeTables PixtralVisionTower::rope_at(Ops& op, Value* row, Value* col) const {
  auto s = op.builder().scope("patch_positional_embedding");
  GraphBuilder& b = op.builder();
  auto column = [&](Value* v) { return op.Unsqueeze(op.Cast(v, {.to = DataType::FLOAT}), {1}); };
  Value* h = column(row);
  Value* w = column(col);
  // inv_freq[j] = theta^(-2j / head_dim): rows take the even j, columns the odd j
  std::vector<float> even, odd;
  for (int64_t j = 0; j < head_dim_ / 2; ++j)
    (j % 2 == 0 ? even : odd)
        .push_back(static_cast<float>(1.0 / std::pow(theta_, 2.0 * static_cast<double>(j) / static_cast<double>(head_dim_))));
  const int64_t quarter = head_dim_ / 4;
  Value* freqs = op.Concat({op.Mul(h, b.constant_f32(even, {quarter})), op.Mul(w, b.constant_f32(odd, {quarter}))},
                           {.axis = 1});
  freqs = op.Unsqueeze(freqs, {0});
  Value* cos = op.Cos(freqs);
  Value* sin = op.Sin(freqs);
  if (dtype_ != DataType::FLOAT) {
    cos = op.Cast(cos, {.to = dtype_});
    sin = op.Cast(sin, {.to = dtype_});
  }
  return {cos, sin, 0};
}

Value* PixtralVisionTower::forward_packed(Ops& op, Value* pixel_values, Value* image_sizes) const {
  auto scope = enter(op);
  GraphBuilder& b = op.builder();
  Value* zero = b.scalar_i64(0);
  Value* one = b.scalar_i64(1);
  // the padded patch grid [num_images, rows * cols, hidden] and each image's patch rows and columns
  Value* x = patch_conv->forward(op, pixel_values);
  Value* grid = op.Div(op.Shape(pixel_values, {.start = 2, .end = 4}), static_cast<double>(patch_));
  Value* grid_cols = op.Gather(grid, one);
  Value* sizes = op.Div(image_sizes, static_cast<double>(patch_));  // [num_images, 2]
  Value* rows = op.Gather(sizes, zero, {.axis = 1});
  Value* cols = op.Gather(sizes, one, {.axis = 1});
  // patch k of the sequence: its image (the number of images ending at or before it), its row
  // and column there, and its index in the flattened padded grid
  Value* counts = op.Mul(rows, cols);
  Value* ends = op.CumSum(counts, zero);
  Value* k = op.Range(zero, op.ReduceSum(counts, {0}, {.keepdims = 0}), one);
  Value* image = op.ReduceSum(op.Cast(op.GreaterOrEqual(op.Unsqueeze(k, {1}), op.Unsqueeze(ends, {0})),
                                      {.to = DataType::INT64}),
                              {1}, {.keepdims = 0});
  Value* local = op.Sub(k, op.Sub(op.Gather(ends, image), op.Gather(counts, image)));
  Value* image_cols = op.Gather(cols, image);
  Value* row = op.Div(local, image_cols);
  Value* col = op.Sub(local, op.Mul(row, image_cols));
  Value* per_image = op.Mul(op.Gather(grid, zero), grid_cols);
  Value* flat = op.Add(op.Mul(image, per_image), op.Add(op.Mul(row, grid_cols), col));
  x = op.Gather(op.Reshape(x, std::vector<int64_t>{-1, hidden_}), flat);
  x = ln_pre->forward(op, op.Unsqueeze(x, {0}));  // [1, patches, hidden]
  // generate_block_attention_mask: a patch attends to the patches of its image
  const AttentionContext ctx{frame_mask(op, image, nullptr, nullptr, dtype_), rope_at(op, row, col)};
  for (const DecoderLayer* layer : layers_) x = layer->forward(op, x, ctx, {}).hidden;
  return x;
}

std::vector<Value*> PixtralVisionTower::forward(Ops& op, Value* pixel_values, int64_t layers) const {
  auto scope = enter(op);
  const int64_t n = layers < 0 ? num_hidden_layers() : layers;
  Value* x = ln_pre->forward(op, patch_conv->forward(op, pixel_values));  // [images, patches, hidden]
  const AttentionContext ctx{nullptr, rope(op, pixel_values)};
  std::vector<Value*> hidden_states = {x};
  for (int64_t i = 0; i < n; ++i) {
    x = layers_[static_cast<size_t>(i)]->forward(op, x, ctx, {}).hidden;
    hidden_states.push_back(x);
  }
  return hidden_states;
}

namespace {

// The standalone PixtralVisionModel, task image-feature-extraction (docs/vision.md), as
// transformers returns it: all images one sequence (PixtralVisionTower::forward_packed).
//   inputs : pixel_values [num_images, num_channels, height, width] float (the model dtype), the
//            images zero-padded to one size; image_sizes int64 [num_images, 2] (height, width)
//   outputs: last_hidden_state [1, num_patches, hidden_size], num_patches = Σ (height / patch) *
//            (width / patch)
class PixtralVisionModel : public Architecture {
 public:
  PixtralVisionModel(const HfConfig& c, DataType dtype)
      : tower_(adopt("", std::make_unique<PixtralVisionTower>(c, dtype))), dtype_(dtype) {}

  std::string task() const override { return "image-feature-extraction"; }
  std::vector<NamedGraph> build_graphs() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* pixels = b.input("pixel_values", dtype_, {"num_images", tower_->num_channels(), "height", "width"});
    Value* sizes = b.input("image_sizes", DataType::INT64, {"num_images", 2});
    b.output(tower_->forward_packed(op, pixels, sizes), "last_hidden_state", {1, "num_patches", tower_->hidden_size()});
    return single_graph(std::move(model), GraphLowering::attention);
  }

 private:
  PixtralVisionTower* tower_;
  DataType dtype_;
};

}  // namespace

std::unique_ptr<Architecture> create_pixtral(const HfConfig& c, DataType dtype) {
  return std::make_unique<PixtralVisionModel>(c, dtype);
}

}  // namespace mobius
