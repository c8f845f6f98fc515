// The shared config reading of the ViT-style towers, and the CLIP and SigLIP towers
// (archs/vision_towers.h).
#include "archs/vision_towers.h"

#include <cmath>

#include "blocks/activation.h"
#include "blocks/attention.h"
#include "registry/config_defaults.h"

namespace mobius {

namespace {

// image_size / patch_size: transformers also allows [height, width] pairs, which int_or refuses
// (square sizes given as one integer only).
int64_t square_size(const HfConfig& c, const char* key, int64_t value) {
  if (value < 1 || value > (int64_t{1} << 16)) c.fail(key, "expected a value in [1, 65536], got " + std::to_string(value));
  return value;
}

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

}  // namespace

VisionTransformerOptions vit_options(const HfConfig& c, DataType dtype) {
  VisionTransformerOptions o;
  VisionEmbeddingsOptions& e = o.embedding;
  e.image_size = square_size(c, "image_size", c.int_or("image_size", 224));
  e.patch_size = square_size(c, "patch_size", c.int_or("patch_size", 16));
  if (e.image_size % e.patch_size != 0)
    c.fail("patch_size", std::to_string(e.patch_size) + " must divide image_size " + std::to_string(e.image_size));
  if (e.image_size / e.patch_size > 1024)
    c.fail("patch_size", "at most 1024 patches per side are supported (image_size / patch_size)");
  e.num_channels = c.int_or("num_channels", 3);
  if (e.num_channels < 1 || e.num_channels > 64) c.fail("num_channels", "expected a value in [1, 64]");
  e.hidden_size = c.get_int("hidden_size");
  e.dtype = dtype;
  o.num_hidden_layers = c.get_int("num_hidden_layers");
  o.layer = vit_layer_options(c, dtype);
  return o;
}

VisionLayerOptions vit_attention_layer(const HfConfig& c, const char* act, DataType dtype) {
  VisionLayerOptions l;
  l.hidden_size = c.get_int("hidden_size");
  l.hidden_act = c.string_or("hidden_act", act);
  if (!is_known_activation(l.hidden_act) || l.hidden_act == "xielu")
    c.fail("hidden_act", "unsupported activation '" + l.hidden_act + "'");
  l.dtype = dtype;
  const int64_t heads = c.get_int("num_attention_heads");
  if (heads < 1 || l.hidden_size % heads != 0)
    c.fail("num_attention_heads", std::to_string(heads) + " must divide hidden_size " + std::to_string(l.hidden_size));
  l.attention = vision_attention(l.hidden_size, heads, {"q_proj", "k_proj", "v_proj", "out_proj"}, dtype);
  return l;
}

VisionLayerOptions vit_layer_options(const HfConfig& c, DataType dtype) {
  VisionLayerOptions l = vit_attention_layer(c, "gelu", dtype);
  l.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  return l;
}

std::unique_ptr<VisionTransformer> siglip_vision_tower(const HfConfig& vision_config, DataType dtype) {
  const HfConfig c = with_class_defaults(vision_config, "siglip_vision_model");
  VisionTransformerOptions o = vit_options(c, dtype);
  o.layer.intermediate_size = c.get_int("intermediate_size");
  o.post_norm = "post_layernorm";
  return std::make_unique<VisionTransformer>(o);
}

std::unique_ptr<VisionTransformer> clip_vision_tower(const HfConfig& vision_config, DataType dtype) {
  const HfConfig c = with_class_defaults(vision_config, "clip_vision_model");
  VisionTransformerOptions o = vit_options(c, dtype);
  o.layer.intermediate_size = c.get_int("intermediate_size");
  o.embedding.patch_bias = false;
  o.embedding.tokens = {"class_embedding"};
  o.embedding.token_rank1 = true;
  o.pre_norm = "pre_layrnorm";
  return std::make_unique<VisionTransformer>(o);
}

void read_head_dim(const HfConfig& c, VisionTransformerOptions& o) {
  if (std::optional<int64_t> d = c.opt_int("head_dim")) o.layer.attention.head_dim = *d;
}

HfConfig sub_config(const HfConfig& c, const char* key) {
  std::optional<HfConfig> sub = c.sub(key);
  return sub ? *sub : HfConfig(nlohmann::json::object(), c.file(), std::string(key) + ".");
}

MaskedPatchVisionTower::MaskedPatchVisionTower(const VisionTransformerOptions& o) : o_(o) {
  const VisionEmbeddingsOptions& e = o.embedding;
  side_ = e.image_size / e.patch_size;
  patch = child<PatchEmbedding>("embeddings.patch_embedding", e.num_channels, e.hidden_size, e.patch_size, true,
                                e.dtype);
  position = param("embeddings.position_embedding.weight", {side_ * side_, e.hidden_size}, e.dtype);
  for (int64_t i = 0; i < o.num_hidden_layers; ++i)
    layers.push_back(child<VisionEncoderLayer>("encoder.layers." + std::to_string(i), o.layer));
  post_layernorm = child<LayerNorm>(
      "post_layernorm", NormOptions{.dim = e.hidden_size, .eps = o.layer.layer_norm_eps, .dtype = e.dtype});
}

Value* MaskedPatchVisionTower::forward(Ops& op, Value* pixels, Value* real, int64_t num_layers) const {
  auto scope = enter(op);
  GraphBuilder& b = op.builder();
  const int64_t g = side_;
  Value* real_i = op.Cast(real, {.to = DataType::INT64});
  Value* rows = op.ReduceSum(op.Gather(real_i, b.scalar_i64(0), {.axis = 2}), {1}, {.keepdims = 0});  // [N]
  Value* cols = op.Gather(op.ReduceSum(real_i, {2}, {.keepdims = 0}), b.scalar_i64(0), {.axis = 1});  // [N]
  Value* flat_real = op.Reshape(real, std::vector<int64_t>{-1, g * g});
  // table row bucket(row) * side + bucket(column) for a real patch, 0 for a padded one: [N, g * g]
  Value* grid_ids = op.Add(op.Mul(op.Unsqueeze(bucket(op, rows), {2}), static_cast<double>(g)),
                           op.Unsqueeze(bucket(op, cols), {1}));
  Value* positions = op.Where(flat_real, op.Reshape(grid_ids, std::vector<int64_t>{-1, g * g}), b.scalar_i64(0));
  Value* x = op.Add(patch->forward(op, pixels), op.Gather(position->value(op), positions));
  Value* mask = padding_mask(op, op.Cast(flat_real, {.to = DataType::INT64}), o_.layer.dtype);
  const int64_t run = num_layers < 0 ? num_hidden_layers() : num_layers;
  for (int64_t i = 0; i < run; ++i) x = layers[static_cast<size_t>(i)]->forward(op, x, mask);
  return num_layers < 0 ? post_layernorm->forward(op, x) : x;
}

// torch.bucketize(min(i * (1 / n), 1 - 1e-6), arange(1/side, 1, 1/side), right=True) for i in
// 0..side-1: how many boundaries are <= the coordinate, in float32 as transformers computes them.
// n [N] -> [N, side].
Value* MaskedPatchVisionTower::bucket(Ops& op, Value* n) const {
  GraphBuilder& b = op.builder();
  const int64_t g = side_;
  std::vector<float> index(static_cast<size_t>(g));
  for (int64_t i = 0; i < g; ++i) index[static_cast<size_t>(i)] = static_cast<float>(i);
  Value* step = op.Div(1.0, op.Cast(n, {.to = DataType::FLOAT}));
  const auto clamp = static_cast<double>(static_cast<float>(1.0 - 1e-6));
  Value* coord = op.Min(op.Mul(op.Unsqueeze(step, {1}), b.constant_f32(index, {g})), clamp);
  const std::vector<float> bounds = torch_arange_f32(1.0 / static_cast<double>(g), 1.0, 1.0 / static_cast<double>(g));
  const auto count = static_cast<int64_t>(bounds.size());
  if (count == 0) return op.Cast(op.Mul(coord, 0.0), {.to = DataType::INT64});  // one patch a side: row 0
  Value* ge = op.GreaterOrEqual(op.Unsqueeze(coord, {2}), b.constant_f32(bounds, {count}));
  return op.ReduceSum(op.Cast(ge, {.to = DataType::INT64}), {2}, {.keepdims = 0});
}

namespace {

// CLIPEncoderLayer's options from a CLIP-style text config (its class defaults filled in).
VisionLayerOptions clip_text_layer_options(const HfConfig& c, DataType dtype) {
  VisionLayerOptions l = vit_attention_layer(c, "quick_gelu", dtype);
  l.intermediate_size = c.get_int("intermediate_size");
  l.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-5));
  return l;
}

}  // namespace

TextTransformer::TextTransformer(const HfConfig& text_config, const char* config_type, Mask mask, DataType dtype)
    : TextTransformer(with_class_defaults(text_config, config_type), mask, dtype) {}

TextTransformer::TextTransformer(const HfConfig& c, Mask mask, DataType dtype)
    : TextTransformer(c, clip_text_layer_options(c, dtype), mask, "final_layer_norm") {}

TextTransformer::TextTransformer(const HfConfig& c, const VisionLayerOptions& layer, Mask mask,
                                 const std::string& final_norm)
    : mask_(mask), layer_(layer) {
  const int64_t h = layer_.hidden_size;
  token_embedding = child<Embedding>("embeddings.token_embedding", c.get_int("vocab_size"), h, layer_.dtype);
  position_embedding =
      child<Embedding>("embeddings.position_embedding", c.int_or("max_position_embeddings", 77), h, layer_.dtype);
  const int64_t n = c.get_int("num_hidden_layers");
  for (int64_t i = 0; i < n; ++i) layers.push_back(child<VisionEncoderLayer>("encoder.layers." + std::to_string(i), layer_));
  const NormOptions norm{.dim = h, .eps = layer_.layer_norm_eps, .dtype = layer_.dtype, .kind = layer_.norm};
  this->final_norm = adopt(final_norm, make_norm(norm));
}

Value* TextTransformer::forward(Ops& op, Value* input_ids, Value* attention_mask) const {
  return final_norm->forward(op, hidden_states(op, input_ids, attention_mask).back());
}

std::vector<Value*> TextTransformer::hidden_states(Ops& op, Value* input_ids, Value* attention_mask) const {
  Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
  Value* positions = op.Range(op.builder().scalar_i64(0), seq, op.builder().scalar_i64(1));
  std::vector<Value*> states = {
      op.Add(token_embedding->forward(op, input_ids), position_embedding->forward(op, positions))};
  Value* mask = mask_ == Mask::causal ? causal_mask(op, attention_mask, input_ids, layer_.dtype)
                                      : padding_mask(op, attention_mask, layer_.dtype);
  for (const VisionEncoderLayer* layer : layers) states.push_back(layer->forward(op, states.back(), mask));
  return states;
}

AttentionPoolingHead::AttentionPoolingHead(const VisionLayerOptions& l) : l_(l) {
  const int64_t h = l.hidden_size;
  probe = param("probe", {1, 1, h}, l.dtype);
  in_proj_weight = param("attention.in_proj_weight", {h, 3 * h}, l.dtype, /*transpose=*/true);
  in_proj_bias = param("attention.in_proj_bias", {3 * h}, l.dtype);
  out_proj = child<Linear>("attention.out_proj", LinearOptions{h, h, true, l.dtype});
  layernorm = child<LayerNorm>("layernorm", NormOptions{.dim = h, .eps = l.layer_norm_eps, .dtype = l.dtype});
  fc1 = child<Linear>("mlp.fc1", LinearOptions{h, l.intermediate_size, true, l.dtype});
  fc2 = child<Linear>("mlp.fc2", LinearOptions{l.intermediate_size, h, true, l.dtype});
}

Value* AttentionPoolingHead::forward(Ops& op, Value* x, Value* mask) const {
  auto s = enter(op);
  const int64_t h = l_.hidden_size, heads = l_.attention.num_attention_heads, d = l_.attention.head_dim;
  auto project = [&](Value* y) { return op.Add(op.MatMul(y, in_proj_weight->value(op)), in_proj_bias->value(op)); };
  auto to_heads = [&](Value* y) { return op.Transpose(op.Reshape(y, {0, 0, heads, d}), {.perm = {0, 2, 1, 3}}); };
  std::vector<Value*> kv = op.Split(project(x), {h, h, h}, {.axis = -1});
  Value* batch = op.Shape(x, {.start = 0, .end = 1});
  Value* q_all = project(op.Expand(probe->value(op), op.Concat({batch, op.builder().ints({1, h})}, {.axis = 0})));
  Value* q = op.Slice(q_all, {0}, {h}, {2});
  AttentionOutputs a = op.Attention(to_heads(q), to_heads(kv[1]), to_heads(kv[2]), mask, nullptr, nullptr,
                                    {.scale = 1.0f / std::sqrt(static_cast<float>(d))});
  op.builder().producer(a.y).tags = {.num_heads = heads, .kv_num_heads = heads, .head_size = d};
  Value* y = out_proj->forward(op, op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1}));
  Value* m = fc2->forward(op, activation(op, l_.hidden_act, fc1->forward(op, layernorm->forward(op, y))));
  return op.Squeeze(op.Add(y, m), {1});
}

MeanPooledClassifier::MeanPooledClassifier(std::unique_ptr<VisionTransformer> t, int64_t num_labels, int64_t first_token)
    : labels_(num_labels), first_token_(first_token) {
  set_tower("vision_model", std::move(t));
  classifier = child<Linear>("classifier", LinearOptions{hidden_size(), labels_, true, dtype()});
}

ImageEncoderOutputs MeanPooledClassifier::forward(Ops& op, Value* pixel_values) const {
  Value* last = tower->forward(op, pixel_values).last_hidden_state;
  return {last, nullptr, classifier->forward(op, mean_tokens(op, last, first_token_))};
}

}  // namespace mobius
