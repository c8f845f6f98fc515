#include "blocks/vision_transformer.h"

#include "blocks/activation.h"
#include "util/error.h"

namespace mobius {

int64_t num_patches(const VisionEmbeddingsOptions& o) {
  const int64_t side = o.image_size / o.patch_size;
  return side * side;
}

PatchEmbedding::PatchEmbedding(int64_t in_channels, int64_t out_channels, int64_t patch_size, bool bias,
                               DataType dtype)
    : patch_size_(patch_size) {
  weight = param("weight", {out_channels, in_channels, patch_size, patch_size}, dtype);
  if (bias) this->bias = param("bias", {out_channels}, dtype);
}

Value* PatchEmbedding::forward(Ops& op, Value* pixel_values) const {
  auto s = enter(op);
  Value* y = op.Conv(pixel_values, weight->value(op), bias ? bias->value(op) : nullptr,
                     {.kernel_shape = {patch_size_, patch_size_}, .strides = {patch_size_, patch_size_}});
  // [batch, out, h, w] -> [batch, out, h * w] -> [batch, h * w, out]
  return op.Transpose(op.Reshape(y, {0, 0, -1}), {.perm = {0, 2, 1}});
}

VisionEmbeddings::VisionEmbeddings(const VisionEmbeddingsOptions& o) : o_(o) {
  const int64_t h = o.hidden_size;
  patch_embedding = child<PatchEmbedding>(o.patch, o.num_channels, h, o.patch_size, o.patch_bias, o.dtype);
  for (const std::string& t : o.tokens)
    tokens.push_back(param(t, o.token_rank1 ? Shape{h} : Shape{1, 1, h}, o.dtype));
  const int64_t positions = static_cast<int64_t>(o.tokens.size()) + num_patches(o);
  if (!o.position.empty())
    position = param(o.position, o.position_rank3 ? Shape{1, positions, h} : Shape{positions, h}, o.dtype);
  if (!o.registers.empty()) registers = param(o.registers, {1, o.num_registers, h}, o.dtype);
}

Value* VisionEmbeddings::forward(Ops& op, Value* pixel_values) const {
  auto s = enter(op);
  Value* x = patch_embedding->forward(op, pixel_values);
  // a learned [1, n, hidden] row block repeated over the batch
  Value* batch = op.Shape(x, {.start = 0, .end = 1});
  auto per_batch = [&](Value* t, int64_t n) {
    return op.Expand(op.Reshape(t, {1, n, o_.hidden_size}),
                     op.Concat({batch, op.builder().ints({n, o_.hidden_size})}, {.axis = 0}));
  };
  if (!tokens.empty()) {
    std::vector<Value*> parts;
    for (const Parameter* t : tokens) parts.push_back(per_batch(t->value(op), 1));
    parts.push_back(x);
    x = op.Concat(parts, {.axis = 1});
  }
  if (position) x = op.Add(x, position->value(op));
  if (registers) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    Value* head = op.Slice(x, {0}, {n}, {1});
    Value* rest = op.Slice(x, {n}, {INT64_MAX}, {1});
    x = op.Concat({head, per_batch(registers->value(op), o_.num_registers), rest}, {.axis = 1});
  }
  return x;
}

AttentionOptions vision_attention(int64_t hidden, int64_t heads, const AttentionNames& names, DataType dtype) {
  AttentionOptions a;
  a.hidden_size = hidden;
  a.num_attention_heads = a.num_key_value_heads = heads;
  a.head_dim = hidden / heads;
  a.qkv_bias = a.o_bias = true;
  a.dtype = dtype;
  a.names = names;
  return a;
}

MLPOptions VisionLayerOptions::feed_forward() const {
  if (mlp) return *mlp;
  return MLPOptions{.hidden_size = hidden_size, .intermediate_size = intermediate_size, .hidden_act = hidden_act,
                    .bias = true, .dtype = dtype, .gated = false, .up_name = names.fc1, .down_name = names.fc2};
}

VisionEncoderLayer::VisionEncoderLayer(const VisionLayerOptions& o) {
  const VisionLayerNames& n = o.names;
  const NormOptions norm{.dim = o.hidden_size, .eps = o.layer_norm_eps, .dtype = o.dtype, .kind = o.norm};
  norm1 = adopt(n.norm1, make_norm(norm));
  attention = child<Attention>(n.attention, o.attention);
  norm2 = adopt(n.norm2, make_norm(norm));
  mlp = adopt("", make_mlp(o.feed_forward()));
  if (!n.layer_scale1.empty()) layer_scale1 = param(n.layer_scale1, {o.hidden_size}, o.dtype);
  if (!n.layer_scale2.empty()) layer_scale2 = param(n.layer_scale2, {o.hidden_size}, o.dtype);
}

Value* VisionEncoderLayer::forward(Ops& op, Value* x, Value* mask) const {
  auto s = enter(op);
  auto scaled = [&](Value* y, const Parameter* scale) { return scale ? op.Mul(y, scale->value(op)) : y; };
  const AttentionContext ctx{mask};
  Value* a = attention->forward(op, norm1->forward(op, x), ctx, nullptr, nullptr).hidden;
  Value* h = op.Add(x, scaled(a, layer_scale1));
  Value* f = mlp->forward(op, norm2->forward(op, h));
  return op.Add(h, scaled(f, layer_scale2));
}

VisionTransformer::VisionTransformer(const VisionTransformerOptions& o) : o_(o) {
  const VisionEmbeddingsOptions& e = o.embedding;
  MOBIUS_ASSERT(e.patch_size > 0 && e.image_size % e.patch_size == 0, "patch_size divides image_size");
  embeddings = child<VisionEmbeddings>(o.embeddings, e);
  const NormOptions norm{.dim = o.layer.hidden_size, .eps = o.layer.layer_norm_eps, .dtype = o.layer.dtype};
  if (!o.pre_norm.empty()) pre_norm = child<LayerNorm>(o.pre_norm, norm);
  for (int64_t i = 0; i < o.num_hidden_layers; ++i)
    layers.push_back(child<VisionEncoderLayer>(o.layers + "." + std::to_string(i), o.layer));
  if (!o.post_norm.empty()) post_norm = child<LayerNorm>(o.post_norm, norm);
}

int64_t VisionTransformer::sequence_length() const {
  const VisionEmbeddingsOptions& e = o_.embedding;
  return static_cast<int64_t>(e.tokens.size()) + e.num_registers + num_patches(e);
}

VisionTransformerOutputs VisionTransformer::forward(Ops& op, Value* pixel_values, int64_t n) const {
  const int64_t all = static_cast<int64_t>(layers.size());
  if (n < 0) n = all;
  MOBIUS_ASSERT(n <= all, "a vision tower runs at most its num_hidden_layers layers");
  VisionTransformerOutputs out;
  Value* h = embeddings->forward(op, pixel_values);
  if (pre_norm) h = pre_norm->forward(op, h);
  out.hidden_states.push_back(h);
  for (int64_t i = 0; i < n; ++i) out.hidden_states.push_back(h = layers[i]->forward(op, h));
  if (n == all) out.last_hidden_state = post_norm ? post_norm->forward(op, h) : h;
  return out;
}

Value* token_at(Ops& op, Value* x, int64_t i) {
  return op.Squeeze(op.Slice(x, {i}, {i == -1 ? INT64_MAX : i + 1}, {1}), {1});
}

Value* mean_tokens(Ops& op, Value* x, int64_t from) {
  Value* tokens = from == 0 ? x : op.Slice(x, {from}, {INT64_MAX}, {1});
  return op.ReduceMean(tokens, {1}, {.keepdims = 0});
}

}  // namespace mobius
