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

}  // namespace

VisionTransformerOptions vit_options(const HfConfig& c, DataType dtype) {
  VisionTransformerOptions o;
  VisionEmbeddingsOptions& e = o.embedding;
  e.image_size = square_size(c, "image_size", c.int_or("image_size", 224));
  e.patch_size = square_size(c, "patch_size", c.int_or("patch_size", 16));
  if (e.image_size % e.patch_size != 0) c.fail("patch_size", "must divide image_size");
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

VisionLayerOptions vit_layer_options(const HfConfig& c, DataType dtype) {
  VisionLayerOptions l;
  l.hidden_size = c.get_int("hidden_size");
  l.hidden_act = c.string_or("hidden_act", "gelu");
  if (!is_known_activation(l.hidden_act) || l.hidden_act == "xielu")
    c.fail("hidden_act", "unsupported activation '" + l.hidden_act + "'");
  l.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  l.dtype = dtype;
  const int64_t heads = c.get_int("num_attention_heads");
  if (l.hidden_size % heads != 0) c.fail("num_attention_heads", "must divide hidden_size");
  l.attention = vision_attention(l.hidden_size, heads, {"q_proj", "k_proj", "v_proj", "out_proj"}, dtype);
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

TextTransformer::TextTransformer(const HfConfig& text_config, const char* config_type, Mask mask, DataType dtype)
    : mask_(mask) {
  const HfConfig c = with_class_defaults(text_config, config_type);
  layer_.hidden_size = c.get_int("hidden_size");
  layer_.intermediate_size = c.get_int("intermediate_size");
  layer_.hidden_act = c.string_or("hidden_act", "quick_gelu");
  if (!is_known_activation(layer_.hidden_act) || layer_.hidden_act == "xielu")
    c.fail("hidden_act", "unsupported activation '" + layer_.hidden_act + "'");
  layer_.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-5));
  layer_.dtype = dtype;
  const int64_t heads = c.get_int("num_attention_heads");
  if (layer_.hidden_size % heads != 0) c.fail("num_attention_heads", "must divide hidden_size");
  layer_.attention = vision_attention(layer_.hidden_size, heads, {"q_proj", "k_proj", "v_proj", "out_proj"}, dtype);
  const int64_t h = layer_.hidden_size;
  token_embedding = child<Embedding>("embeddings.token_embedding", c.get_int("vocab_size"), h, dtype);
  position_embedding = child<Embedding>("embeddings.position_embedding", c.int_or("max_position_embeddings", 77), h, dtype);
  const int64_t n = c.get_int("num_hidden_layers");
  for (int64_t i = 0; i < n; ++i) layers.push_back(child<VisionEncoderLayer>("encoder.layers." + std::to_string(i), layer_));
  final_layer_norm = child<LayerNorm>("final_layer_norm", NormOptions{.dim = h, .eps = layer_.layer_norm_eps, .dtype = dtype});
}

Value* TextTransformer::forward(Ops& op, Value* input_ids, Value* attention_mask) const {
  Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
  Value* positions = op.Range(op.builder().scalar_i64(0), seq, op.builder().scalar_i64(1));
  Value* x = op.Add(token_embedding->forward(op, input_ids), position_embedding->forward(op, positions));
  Value* mask = mask_ == Mask::causal ? causal_mask(op, attention_mask, input_ids, layer_.dtype)
                                      : padding_mask(op, attention_mask, layer_.dtype);
  for (const VisionEncoderLayer* layer : layers) x = layer->forward(op, x, mask);
  return final_layer_norm->forward(op, x);
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
