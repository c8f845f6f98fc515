// BEiT (transformers/models/beit/modeling_beit.py, configuration_beit.py) and Data2VecVision
// (models/data2vec/modeling_data2vec_vision.py, the same model under data2vec_vision.):
//   embeddings  ViT's (archs/vision_towers.h): embeddings.cls_token, patch_embeddings.projection,
//               position_embeddings only with use_absolute_position_embeddings
//   each layer  h = x + lambda_1 * attention(layernorm_before(x));
//               out = h + lambda_2 * output.dense(act(intermediate.dense(layernorm_after(h))))
//               (lambda_* only with layer_scale_init_value > 0); attention.attention.{query,
//               key (no bias), value}, attention.output.dense, scores + the relative position bias
//               (per layer: attention.attention.relative_position_bias with
//               use_relative_position_bias; shared: encoder.relative_position_bias with
//               use_shared_relative_position_bias; both are added when both are set)
//   last_hidden_state  layernorm(x), or x with use_mean_pooling (BeitModel's Identity)
//   pooler_output      pooler.layernorm(x[:, 1:].mean(1)) with use_mean_pooling, else x[:, 0]
//                      (BeitModel; Data2VecVisionModel has no pooler)
//   *ForImageClassification (beit. / data2vec_vision.): logits = classifier(pooler_output)
// BeitRelativePositionBias: a table [(2W - 1)^2 + 3, heads] (W = image_size / patch_size)
// gathered by the relative position index of every (query, key) pair of the W x W patches and the
// class token (generate_relative_position_index), computed here at build time: [1, heads, S, S].
#include <cmath>

#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "blocks/activation.h"

namespace mobius {
namespace {

class BeitRelativePositionBias : public Module {
 public:
  BeitRelativePositionBias(int64_t window, int64_t heads, DataType dtype) : window_(window) {
    table = param("relative_position_bias_table", {(2 * window - 1) * (2 * window - 1) + 3, heads}, dtype);
  }
  // [1, heads, W * W + 1, W * W + 1]
  Value* forward(Ops& op) const {
    auto s = enter(op);
    const int64_t w = window_, area = w * w, n = area + 1, distances = (2 * w - 1) * (2 * w - 1) + 3;
    std::vector<int64_t> index(n * n);
    for (int64_t a = 0; a < area; ++a)
      for (int64_t b = 0; b < area; ++b) {
        const int64_t dy = a / w - b / w + w - 1, dx = a % w - b % w + w - 1;
        index[(a + 1) * n + b + 1] = dy * (2 * w - 1) + dx;
      }
    for (int64_t j = 0; j < n; ++j) index[j] = distances - 3;      // class token to patch
    for (int64_t i = 0; i < n; ++i) index[i * n] = distances - 2;  // patch to class token
    index[0] = distances - 1;                                        // class token to itself
    Value* bias = op.Gather(table->value(op), op.builder().constant_i64(index, {n, n}));  // [n, n, heads]
    return op.Unsqueeze(op.Transpose(bias, {.perm = {2, 0, 1}}), {0});
  }

  Parameter* table;

 private:
  int64_t window_;
};

struct BeitOptions {
  VisionTransformerOptions tower;  // embeddings and sizes (tower.layer)
  bool relative_bias;              // use_relative_position_bias
  bool shared_bias;                // use_shared_relative_position_bias
  bool layer_scale;                // layer_scale_init_value > 0
  bool mean_pooling;               // use_mean_pooling
};

class BeitLayer : public Module {
 public:
  explicit BeitLayer(const BeitOptions& o) : l_(o.tower.layer) {
    const int64_t h = l_.hidden_size, width = l_.attention.num_attention_heads * l_.attention.head_dim;
    const NormOptions norm{.dim = h, .eps = l_.layer_norm_eps, .dtype = l_.dtype};
    layernorm_before = child<LayerNorm>("layernorm_before", norm);
    query = child<Linear>("attention.attention.query", LinearOptions{h, width, true, l_.dtype});
    key = child<Linear>("attention.attention.key", LinearOptions{h, width, false, l_.dtype});
    value = child<Linear>("attention.attention.value", LinearOptions{h, width, true, l_.dtype});
    dense = child<Linear>("attention.output.dense", LinearOptions{width, h, true, l_.dtype});
    if (o.relative_bias) {
      const VisionEmbeddingsOptions& e = o.tower.embedding;
      bias = child<BeitRelativePositionBias>("attention.attention.relative_position_bias", e.image_size / e.patch_size,
                                         l_.attention.num_attention_heads, l_.dtype);
    }
    if (o.layer_scale) {
      lambda_1 = param("lambda_1", {h}, l_.dtype);
      lambda_2 = param("lambda_2", {h}, l_.dtype);
    }
    layernorm_after = child<LayerNorm>("layernorm_after", norm);
    fc1 = child<Linear>("intermediate.dense", LinearOptions{h, l_.intermediate_size, true, l_.dtype});
    fc2 = child<Linear>("output.dense", LinearOptions{l_.intermediate_size, h, true, l_.dtype});
  }

  // x [batch, seq, hidden]; shared: the shared relative position bias or null.
  Value* forward(Ops& op, Value* x, Value* shared) const {
    auto s = enter(op);
    const int64_t heads = l_.attention.num_attention_heads, d = l_.attention.head_dim;
    Value* mask = shared;
    if (bias) mask = mask ? op.Add(bias->forward(op), mask) : bias->forward(op);
    Value* n = layernorm_before->forward(op, x);
    auto to_heads = [&](const Linear* p) {
      return op.Transpose(op.Reshape(p->forward(op, n), {0, 0, heads, d}), {.perm = {0, 2, 1, 3}});
    };
    AttentionOutputs a = op.Attention(to_heads(query), to_heads(key), to_heads(value), mask, nullptr, nullptr,
                                      {.scale = 1.0f / std::sqrt(static_cast<float>(d))});
    op.builder().producer(a.y).tags = {.num_heads = heads, .kv_num_heads = heads, .head_size = d};
    Value* y = dense->forward(op, op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1}));
    Value* h = op.Add(x, lambda_1 ? op.Mul(y, lambda_1->value(op)) : y);
    Value* f = fc2->forward(op, activation(op, l_.hidden_act, fc1->forward(op, layernorm_after->forward(op, h))));
    return op.Add(h, lambda_2 ? op.Mul(f, lambda_2->value(op)) : f);
  }

  LayerNorm *layernorm_before, *layernorm_after;
  Linear *query, *key, *value, *dense, *fc1, *fc2;
  BeitRelativePositionBias* bias = nullptr;
  Parameter *lambda_1 = nullptr, *lambda_2 = nullptr;

 private:
  VisionLayerOptions l_;
};

// BeitModel / Data2VecVisionModel under `prefix`, with or without its pooler.
class BeitBackbone : public Module {
 public:
  BeitBackbone(const BeitOptions& o, bool pooler) : pooler_(pooler) {
    embeddings = child<VisionEmbeddings>("embeddings", o.tower.embedding);
    const VisionLayerOptions& l = o.tower.layer;
    if (o.shared_bias)
      shared_bias = child<BeitRelativePositionBias>("encoder.relative_position_bias",
                                                o.tower.embedding.image_size / o.tower.embedding.patch_size,
                                                l.attention.num_attention_heads, l.dtype);
    for (int64_t i = 0; i < o.tower.num_hidden_layers; ++i)
      layers.push_back(child<BeitLayer>("encoder.layer." + std::to_string(i), o));
    const NormOptions norm{.dim = l.hidden_size, .eps = l.layer_norm_eps, .dtype = l.dtype};
    if (!o.mean_pooling) layernorm = child<LayerNorm>("layernorm", norm);
    else if (pooler) pooler_norm = child<LayerNorm>("pooler.layernorm", norm);
  }

  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const {
    Value* x = embeddings->forward(op, pixel_values);
    Value* shared = shared_bias ? shared_bias->forward(op) : nullptr;
    for (const BeitLayer* layer : layers) x = layer->forward(op, x, shared);
    if (layernorm) x = layernorm->forward(op, x);
    if (!pooler_) return {x};
    return {x, pooler_norm ? pooler_norm->forward(op, mean_tokens(op, x, 1)) : token_at(op, x, 0)};
  }

  VisionEmbeddings* embeddings;
  BeitRelativePositionBias* shared_bias = nullptr;
  std::vector<BeitLayer*> layers;
  LayerNorm* layernorm = nullptr;
  LayerNorm* pooler_norm = nullptr;

 private:
  bool pooler_;
};

// head_dim: BeitAttention reads config.json's head_dim, Data2VecVisionSelfAttention does not.
BeitOptions beit_options(const HfConfig& c, DataType dtype, bool reads_head_dim) {
  BeitOptions o;
  o.tower = vit_options(c, dtype);
  o.tower.layer.intermediate_size = c.get_int("intermediate_size");
  if (reads_head_dim) read_head_dim(c, o.tower);
  VisionEmbeddingsOptions& e = o.tower.embedding;
  e.patch = "patch_embeddings.projection";
  e.tokens = {"cls_token"};
  e.position = c.bool_or("use_absolute_position_embeddings", false) ? "position_embeddings" : "";
  e.position_rank3 = true;
  o.relative_bias = c.bool_or("use_relative_position_bias", false);
  o.shared_bias = c.bool_or("use_shared_relative_position_bias", false);
  if ((o.relative_bias || o.shared_bias) && e.image_size / e.patch_size > 64)
    c.fail("patch_size", "the relative position bias is supported for at most 64 x 64 patches (its index is a "
                         "constant of (patches + 1)^2 entries)");
  o.layer_scale = c.float_or("layer_scale_init_value", 0.1) > 0;
  o.mean_pooling = c.bool_or("use_mean_pooling", true);
  return o;
}

// The shapes of every BEiT model: those of its backbone.
template <class Task>
class BeitBase : public Task {
 public:
  DataType dtype() const override { return o_.tower.layer.dtype; }
  int64_t num_channels() const override { return o_.tower.embedding.num_channels; }
  int64_t image_size() const override { return o_.tower.embedding.image_size; }
  int64_t sequence_length() const override { return 1 + num_patches(o_.tower.embedding); }
  int64_t hidden_size() const override { return o_.tower.layer.hidden_size; }

 protected:
  BeitOptions o_;
};

class BeitModel : public BeitBase<ImageEncoder> {
 public:
  BeitModel(const BeitOptions& o, bool pooler) {
    o_ = o;
    backbone = adopt("", std::make_unique<BeitBackbone>(o, pooler));
  }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override { return backbone->forward(op, pixel_values); }

  BeitBackbone* backbone;
};

class BeitClassifier : public BeitBase<ImageClassifier> {
 public:
  BeitClassifier(const BeitOptions& o, const std::string& prefix, int64_t labels) : labels_(labels) {
    o_ = o;
    backbone = adopt(prefix, std::make_unique<BeitBackbone>(o, true));
    classifier = child<Linear>("classifier", LinearOptions{hidden_size(), labels, true, dtype()});
  }
  int64_t num_labels() const override { return labels_; }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    ImageEncoderOutputs b = backbone->forward(op, pixel_values);
    return {b.last_hidden_state, nullptr, classifier->forward(op, b.pooler_output)};
  }

  BeitBackbone* backbone;
  Linear* classifier;

 private:
  int64_t labels_;
};

std::unique_ptr<Architecture> make(const HfConfig& c, const char* prefix, bool model_pooler, const BeitOptions& o) {
  if (is_image_classification(c)) return std::make_unique<BeitClassifier>(o, prefix, label_count(c));
  return std::make_unique<BeitModel>(o, model_pooler);
}

}  // namespace

std::unique_ptr<Architecture> create_beit(const HfConfig& c, DataType dtype) {
  return make(c, "beit", true, beit_options(c, dtype, true));
}

std::unique_ptr<Architecture> create_data2vec_vision(const HfConfig& c, DataType dtype) {
  return make(c, "data2vec_vision", false, beit_options(c, dtype, false));
}

}  // namespace mobius
