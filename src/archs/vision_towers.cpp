// The shared config reading of the ViT-style towers, and the CLIP and SigLIP towers
// (archs/vision_towers.h).
#include "archs/vision_towers.h"

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
  VisionLayerOptions& l = o.layer;
  l.hidden_size = e.hidden_size;
  l.hidden_act = c.string_or("hidden_act", "gelu");
  if (!is_known_activation(l.hidden_act) || l.hidden_act == "xielu")
    c.fail("hidden_act", "unsupported activation '" + l.hidden_act + "'");
  l.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  l.dtype = dtype;
  const int64_t heads = c.get_int("num_attention_heads");
  if (e.hidden_size % heads != 0) c.fail("num_attention_heads", "must divide hidden_size");
  l.attention = vision_attention(e.hidden_size, heads, {"q_proj", "k_proj", "v_proj", "out_proj"}, dtype);
  return o;
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
