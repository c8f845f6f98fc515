#include "blocks/mmdit_block.h"

namespace mobius {

GeluFeedForward::GeluFeedForward(int64_t dim, DataType dtype) {
  proj = child<Linear>("net.0.proj", LinearOptions{dim, 4 * dim, true, dtype});
  out = child<Linear>("net.2", LinearOptions{4 * dim, dim, true, dtype});
}

Value* GeluFeedForward::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return out->forward(op, op.Gelu(proj->forward(op, x), {.approximate = "tanh"}));
}

MMDiTBlock::MMDiTBlock(const MMDiTBlockOptions& o) : o_(o) {
  const NormOptions plain{.dim = o.dim, .eps = 1e-6f, .dtype = o.dtype, .kind = NormKind::LayerNorm,
                          .elementwise_affine = false};
  norm1 = child<AdaLayerNorm>("norm1", AdaLayerNormOptions{.dim = o.dim, .conditioning_dim = o.dim,
                                                           .chunks = o.dual_attention ? 9 : 6, .dtype = o.dtype});
  norm1_context = child<AdaLayerNorm>("norm1_context",
                                      AdaLayerNormOptions{.dim = o.dim, .conditioning_dim = o.dim,
                                                          .chunks = o.context_pre_only ? 2 : 6, .dtype = o.dtype});
  attn = child<JointAttention>("attn", JointAttentionOptions{.dim = o.dim, .heads = o.heads, .head_dim = o.head_dim,
                                                             .context_dim = o.dim,
                                                             .context_pre_only = o.context_pre_only,
                                                             .qk_norm = o.qk_norm, .context_first = o.context_first,
                                                             .dtype = o.dtype});
  if (o.dual_attention)
    attn2 = child<JointAttention>("attn2", JointAttentionOptions{.dim = o.dim, .heads = o.heads,
                                                                 .head_dim = o.head_dim, .qk_norm = o.qk_norm,
                                                                 .dtype = o.dtype});
  norm2 = child<LayerNorm>("norm2", plain);
  ff = child<GeluFeedForward>("ff", o.dim, o.dtype);
  if (!o.context_pre_only) {
    norm2_context = child<LayerNorm>("norm2_context", plain);
    ff_context = child<GeluFeedForward>("ff_context", o.dim, o.dtype);
  }
}

std::pair<Value*, Value*> MMDiTBlock::forward(Ops& op, Value* x, Value* ctx, Value* temb, const RopeTables* rope) const {
  auto sc = enter(op);
  // shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp[, shift_msa2, scale_msa2, gate_msa2]
  const std::vector<Value*> e = norm1->chunks(op, temb);
  const std::vector<Value*> c = norm1_context->chunks(op, temb);
  // AdaLayerNormContinuous: scale, shift
  Value* ctx_in = o_.context_pre_only ? norm1_context->modulate(op, ctx, c[1], c[0])
                                      : norm1_context->modulate(op, ctx, c[0], c[1]);
  JointAttentionOutputs a = attn->forward(op, norm1->modulate(op, x, e[0], e[1]), ctx_in, rope);
  auto feed_forward = [&](Value* h, Value* attended, const std::vector<Value*>& g, const LayerNorm* norm,
                          const GeluFeedForward* mlp, Value* extra) {
    h = op.Add(h, op.Mul(g[2], attended));
    if (extra) h = op.Add(h, extra);
    Value* n = op.Add(op.Mul(norm->forward(op, h), op.Add(g[4], 1.0)), g[3]);
    return op.Add(h, op.Mul(g[5], mlp->forward(op, n)));
  };
  Value* second = nullptr;  // SD3.5: gate_msa2 * attn2(norm(x) * (1 + scale_msa2) + shift_msa2)
  if (attn2) second = op.Mul(e[8], attn2->forward(op, norm1->modulate(op, x, e[6], e[7]), nullptr, nullptr).x);
  Value* x_out = feed_forward(x, a.x, e, norm2, ff, second);
  if (o_.context_pre_only) return {x_out, nullptr};
  return {x_out, feed_forward(ctx, a.context, c, norm2_context, ff_context, nullptr)};
}

}  // namespace mobius
