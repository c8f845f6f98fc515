// DINOv3 ViT (transformers/models/dinov3_vit/modeling_dinov3_vit.py, configuration_dinov3_vit.py),
// DINOv3ViTModel (image-feature-extraction):
//   embeddings  cls_token, register_tokens (num_register_tokens), Conv patch_embeddings; no
//               position table: positions enter through RoPE
//   each layer  layer.{i}: h = x + layer_scale1(attention(norm1(x))),
//               out = h + layer_scale2(mlp(norm2(h))); attention.{q,k,v,o}_proj with biases
//               query_bias / key_bias / value_bias / proj_bias, q and k of the patch tokens rotated
//               (rotate_half) by DINOv3ViTRopePositionEmbedding, the class and register tokens not;
//               mlp.{up,down}_proj (mlp_bias), or with use_gated_mlp down(act(gate(x)) * up(x))
//   last_hidden_state norm(x); pooler_output = last_hidden_state[:, 0]
// The RoPE tables are constants of the config's patch grid (get_patches_center_coordinates at
// inference: no shift / jitter / rescale): angle = 2 pi * (y or x) * inv_freq with patch centres in
// [-1, 1], inv_freq = 1 / rope_theta ** (4 i / head_dim), i < head_dim / 4; cos = sin = identity
// (cos 1, sin 0) on the prefix tokens.
#include <cmath>

#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "blocks/activation.h"
#include "blocks/rope.h"

namespace mobius {
namespace {

struct Dinov3Options {
  VisionTransformerOptions tower;
  bool query_bias, key_bias, value_bias, proj_bias, mlp_bias, gated_mlp;
  double rope_theta;
};

class Dinov3Layer : public Module {
 public:
  explicit Dinov3Layer(const Dinov3Options& o) : l_(o.tower.layer), gated_(o.gated_mlp) {
    const int64_t h = l_.hidden_size, f = l_.intermediate_size;
    const NormOptions norm{.dim = h, .eps = l_.layer_norm_eps, .dtype = l_.dtype};
    norm1 = child<LayerNorm>("norm1", norm);
    q_proj = child<Linear>("attention.q_proj", LinearOptions{h, h, o.query_bias, l_.dtype});
    k_proj = child<Linear>("attention.k_proj", LinearOptions{h, h, o.key_bias, l_.dtype});
    v_proj = child<Linear>("attention.v_proj", LinearOptions{h, h, o.value_bias, l_.dtype});
    o_proj = child<Linear>("attention.o_proj", LinearOptions{h, h, o.proj_bias, l_.dtype});
    lambda1 = param("layer_scale1.lambda1", {h}, l_.dtype);
    norm2 = child<LayerNorm>("norm2", norm);
    if (gated_) gate_proj = child<Linear>("mlp.gate_proj", LinearOptions{h, f, o.mlp_bias, l_.dtype});
    up_proj = child<Linear>("mlp.up_proj", LinearOptions{h, f, o.mlp_bias, l_.dtype});
    down_proj = child<Linear>("mlp.down_proj", LinearOptions{f, h, o.mlp_bias, l_.dtype});
    lambda2 = param("layer_scale2.lambda1", {h}, l_.dtype);
  }

  // x [batch, seq, hidden]; rope: cos / sin [batch, seq, head_dim / 2].
  Value* forward(Ops& op, Value* x, const RopeTables& rope) const {
    auto s = enter(op);
    const int64_t heads = l_.attention.num_attention_heads, d = l_.attention.head_dim;
    Value* n = norm1->forward(op, x);
    auto to_heads = [&](const Linear* p) {
      return op.Transpose(op.Reshape(p->forward(op, n), {0, 0, heads, d}), {.perm = {0, 2, 1, 3}});
    };
    AttentionOutputs a = op.Attention(apply_rope(op, to_heads(q_proj), rope), apply_rope(op, to_heads(k_proj), rope),
                                      to_heads(v_proj), nullptr, nullptr, nullptr,
                                      {.scale = 1.0f / std::sqrt(static_cast<float>(d))});
    op.builder().producer(a.y).tags = {.num_heads = heads, .kv_num_heads = heads, .head_size = d};
    Value* y = o_proj->forward(op, op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1}));
    Value* h = op.Add(x, op.Mul(y, lambda1->value(op)));
    Value* m = norm2->forward(op, h);
    Value* up = up_proj->forward(op, m);
    Value* inner = gated_ ? op.Mul(activation(op, l_.hidden_act, gate_proj->forward(op, m)), up)
                          : activation(op, l_.hidden_act, up);
    return op.Add(h, op.Mul(down_proj->forward(op, inner), lambda2->value(op)));
  }

  LayerNorm *norm1, *norm2;
  Linear *q_proj, *k_proj, *v_proj, *o_proj, *up_proj, *down_proj;
  Linear* gate_proj = nullptr;
  Parameter *lambda1, *lambda2;

 private:
  VisionLayerOptions l_;
  bool gated_;
};

class Dinov3VitModel : public ImageEncoder {
 public:
  explicit Dinov3VitModel(const Dinov3Options& o) : o_(o) {
    embeddings = child<VisionEmbeddings>("embeddings", o.tower.embedding);
    for (int64_t i = 0; i < o.tower.num_hidden_layers; ++i)
      layers.push_back(child<Dinov3Layer>("layer." + std::to_string(i), o));
    const VisionLayerOptions& l = o.tower.layer;
    norm = child<LayerNorm>("norm", NormOptions{.dim = l.hidden_size, .eps = l.layer_norm_eps, .dtype = l.dtype});
  }
  DataType dtype() const override { return o_.tower.layer.dtype; }
  int64_t num_channels() const override { return o_.tower.embedding.num_channels; }
  int64_t image_size() const override { return o_.tower.embedding.image_size; }
  int64_t sequence_length() const override { return prefix() + num_patches(o_.tower.embedding); }
  int64_t hidden_size() const override { return o_.tower.layer.hidden_size; }

  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    Value* x = embeddings->forward(op, pixel_values);
    const RopeTables rope = rope_tables(op, x);
    for (const Dinov3Layer* layer : layers) x = layer->forward(op, x, rope);
    Value* last = norm->forward(op, x);
    return {last, token_at(op, last, 0)};
  }

  VisionEmbeddings* embeddings;
  std::vector<Dinov3Layer*> layers;
  LayerNorm* norm;

 private:
  int64_t prefix() const { return 1 + o_.tower.embedding.num_registers; }

  // cos / sin [batch, seq, head_dim / 2] (float32 arithmetic as transformers'), x: the embeddings.
  RopeTables rope_tables(Ops& op, Value* x) const {
    const VisionEmbeddingsOptions& e = o_.tower.embedding;
    const int64_t d = o_.tower.layer.attention.head_dim, quarter = d / 4, side = e.image_size / e.patch_size;
    const int64_t seq = sequence_length(), half = d / 2;
    std::vector<float> inv_freq(quarter);
    for (int64_t i = 0; i < quarter; ++i)
      inv_freq[i] = 1.0f / std::pow(static_cast<float>(o_.rope_theta), static_cast<float>(i) * (4.0f / static_cast<float>(d)));
    std::vector<float> cos(seq * half, 1.0f), sin(seq * half, 0.0f);
    const float two_pi = static_cast<float>(2.0 * M_PI);
    for (int64_t p = 0; p < side * side; ++p) {
      const float yx[2] = {2.0f * ((static_cast<float>(p / side) + 0.5f) / static_cast<float>(side)) - 1.0f,
                           2.0f * ((static_cast<float>(p % side) + 0.5f) / static_cast<float>(side)) - 1.0f};
      for (int a = 0; a < 2; ++a)
        for (int64_t i = 0; i < quarter; ++i) {
          const float angle = two_pi * yx[a] * inv_freq[i];
          cos[(prefix() + p) * half + a * quarter + i] = std::cos(angle);
          sin[(prefix() + p) * half + a * quarter + i] = std::sin(angle);
        }
    }
    const DataType t = o_.tower.layer.dtype;
    Value* shape = op.Concat({op.Shape(x, {.start = 0, .end = 1}), op.builder().ints({seq, half})}, {.axis = 0});
    return {op.Expand(op.builder().constant_float(cos, {1, seq, half}, t), shape),
            op.Expand(op.builder().constant_float(sin, {1, seq, half}, t), shape), 0};
  }

  Dinov3Options o_;
};

}  // namespace

std::unique_ptr<Architecture> create_dinov3_vit(const HfConfig& c, DataType dtype) {
  Dinov3Options o;
  o.tower = vit_options(c, dtype);
  o.tower.layer.intermediate_size = c.get_int("intermediate_size");
  if (o.tower.layer.attention.head_dim % 4 != 0)
    c.fail("num_attention_heads", "hidden_size / num_attention_heads must be a multiple of 4 (2-D RoPE)");
  const int64_t side = o.tower.embedding.image_size / o.tower.embedding.patch_size;
  if (side * side * o.tower.layer.attention.head_dim > (int64_t{1} << 26))
    c.fail("image_size", "the RoPE tables (patches x head size) are limited to 2^26 entries");
  VisionEmbeddingsOptions& e = o.tower.embedding;
  e.patch = "patch_embeddings";
  e.tokens = {"cls_token"};
  e.position = "";
  const int64_t registers = c.int_or("num_register_tokens", 0);
  if (registers < 0 || registers > 1024) c.fail("num_register_tokens", "expected a value in [0, 1024]");
  if (registers > 0) {
    e.registers = "register_tokens";
    e.num_registers = registers;
  }
  o.query_bias = c.bool_or("query_bias", true);
  o.key_bias = c.bool_or("key_bias", false);
  o.value_bias = c.bool_or("value_bias", true);
  o.proj_bias = c.bool_or("proj_bias", true);
  o.mlp_bias = c.bool_or("mlp_bias", true);
  o.gated_mlp = c.bool_or("use_gated_mlp", false);
  o.rope_theta = c.float_or("rope_theta", 100.0);
  return std::make_unique<Dinov3VitModel>(o);
}

}  // namespace mobius
