#include "blocks/basic_transformer_block.h"

#include <cmath>

#include "blocks/activation.h"

namespace mobius {

DiffusersAttention::DiffusersAttention(int64_t dim, int64_t kv_dim, int64_t heads, int64_t dim_head, bool bias,
                                       DataType dtype)
    : heads_(heads), dim_head_(dim_head) {
  const int64_t inner = heads * dim_head;
  to_q = child<Linear>("to_q", LinearOptions{dim, inner, bias, dtype});
  to_k = child<Linear>("to_k", LinearOptions{kv_dim, inner, bias, dtype});
  to_v = child<Linear>("to_v", LinearOptions{kv_dim, inner, bias, dtype});
  to_out = child<Linear>("to_out.0", LinearOptions{inner, dim, true, dtype});
}

Value* DiffusersAttention::forward(Ops& op, Value* x, Value* context, Value* bias) const {
  auto s = enter(op);
  auto split = [&](Value* v) {  // [batch, seq, heads * dim_head] -> [batch, heads, seq, dim_head]
    return op.Transpose(op.Reshape(v, {0, 0, heads_, dim_head_}), {.perm = {0, 2, 1, 3}});
  };
  Value* y = op.Attention(split(to_q->forward(op, x)), split(to_k->forward(op, context)),
                          split(to_v->forward(op, context)), bias, nullptr, nullptr,
                          {.scale = 1.0f / std::sqrt(static_cast<float>(dim_head_))})
                 .y;
  op.builder().producer(y).tags = {.num_heads = heads_, .kv_num_heads = heads_, .head_size = dim_head_};
  return to_out->forward(op, op.Reshape(op.Transpose(y, {.perm = {0, 2, 1, 3}}), {0, 0, heads_ * dim_head_}));
}

Value* encoder_attention_bias(Ops& op, Value* mask, Value* x, DataType dtype) {
  auto s = op.builder().scope("encoder_attention_bias");
  Value* bias = op.Mul(op.Sub(1.0, op.Cast(mask, {dtype})), -10000.0);  // [batch, len]
  Value* one = op.builder().ints({1});
  Value* shape = op.Concat({one, one, op.Shape(x, {.start = 1, .end = 2}), one}, {.axis = 0});
  return op.Expand(op.Unsqueeze(bias, {1, 2}), shape);
}

BasicTransformerBlock::BasicTransformerBlock(const BasicTransformerBlockOptions& o) : o_(o), inner_(4 * o.dim) {
  const NormOptions norm{.dim = o.dim, .eps = o.norm_eps, .dtype = o.dtype, .kind = NormKind::LayerNorm,
                         .elementwise_affine = o.norm_elementwise_affine};
  if (o.norm_type == BlockNorm::AdaNormZero) {
    norm1_zero = child<AdaLayerNorm>("norm1", AdaLayerNormOptions{.dim = o.dim, .conditioning_dim = o.dim,
                                                                  .chunks = 6, .dtype = o.dtype});
    emb = child<CombinedTimestepLabelEmbeddings>("norm1.emb", o.num_embeds_ada_norm, o.dim, o.dtype);
  } else {
    norm1 = child<LayerNorm>("norm1", norm);
  }
  attn1 = child<DiffusersAttention>("attn1", o.dim, o.dim, o.heads, o.dim_head, o.attention_bias, o.dtype);
  if (o.cross_attention_dim > 0 || o.norm_type == BlockNorm::AdaNormSingle) norm2 = child<LayerNorm>("norm2", norm);
  if (o.cross_attention_dim > 0)
    attn2 = child<DiffusersAttention>("attn2", o.dim, o.cross_attention_dim, o.heads, o.dim_head, o.attention_bias,
                                      o.dtype);
  if (o.norm_type != BlockNorm::AdaNormSingle) norm3 = child<LayerNorm>("norm3", norm);
  const int64_t proj_width = o.activation_fn == "geglu" ? 2 * inner_ : inner_;
  ff_proj = child<Linear>("ff.net.0.proj", LinearOptions{o.dim, proj_width, true, o.dtype});
  ff_out = child<Linear>("ff.net.2", LinearOptions{inner_, o.dim, true, o.dtype});
  if (o.norm_type == BlockNorm::AdaNormSingle) scale_shift_table = param("scale_shift_table", {6, o.dim}, o.dtype);
}

Value* BasicTransformerBlock::feed_forward(Ops& op, Value* x) const {
  if (o_.activation_fn == "geglu") {
    std::vector<Value*> parts = op.Split(ff_proj->forward(op, x), {inner_, inner_}, {.axis = -1});
    return ff_out->forward(op, op.Mul(parts[0], op.Gelu(parts[1])));
  }
  return ff_out->forward(op, activation(op, "gelu_pytorch_tanh", ff_proj->forward(op, x)));
}

Value* BasicTransformerBlock::forward(Ops& op, Value* x, const BasicTransformerBlockInputs& in) const {
  auto s = enter(op);
  if (o_.norm_type == BlockNorm::LayerNorm) {
    Value* n = norm1->forward(op, x);
    x = op.Add(attn1->forward(op, n, n), x);
    if (attn2) x = op.Add(attn2->forward(op, norm2->forward(op, x), in.encoder_hidden_states, in.encoder_attention_bias), x);
    return op.Add(feed_forward(op, norm3->forward(op, x)), x);
  }
  // shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp, each [batch, 1, dim]
  std::vector<Value*> e;
  Value* n;
  if (norm1_zero) {
    e = norm1_zero->chunks(op, emb->forward(op, in.timestep, in.class_labels));
    n = norm1_zero->modulate(op, x, e[0], e[1]);
  } else {
    Value* table = op.Add(op.Unsqueeze(scale_shift_table->value(op), {0}), op.Reshape(in.timestep, {0, 6, o_.dim}));
    e = op.Split(table, std::vector<int64_t>(6, 1), {.axis = 1});
    n = op.Add(op.Mul(norm1->forward(op, x), op.Add(e[1], 1.0)), e[0]);
  }
  x = op.Add(op.Mul(e[2], attn1->forward(op, n, n)), x);
  if (attn2) {
    Value* q = norm1_zero ? norm2->forward(op, x) : x;  // PixArt: no norm before the cross-attention
    x = op.Add(attn2->forward(op, q, in.encoder_hidden_states, in.encoder_attention_bias), x);
  }
  n = (norm1_zero ? norm3 : norm2)->forward(op, x);
  n = op.Add(op.Mul(n, op.Add(e[4], 1.0)), e[3]);
  return op.Add(op.Mul(e[5], feed_forward(op, n)), x);
}

}  // namespace mobius
