#include "blocks/mla.h"

#include "blocks/mamba.h"  // to_float

namespace mobius {

MultiHeadLatentAttention::MultiHeadLatentAttention(const MLAOptions& o) : o_(o) {
  const int64_t qk_head_dim = o.qk_nope_head_dim + o.qk_rope_head_dim;
  const NormOptions lora_norm{.dim = 0, .eps = o.lora_norm_eps, .dtype = o.dtype};
  if (o.q_lora_rank) {
    q_a_proj = child<Linear>("q_a_proj", LinearOptions{o.hidden_size, *o.q_lora_rank, o.attention_bias, o.dtype});
    NormOptions n = lora_norm;
    n.dim = *o.q_lora_rank;
    q_a_layernorm = child<RMSNorm>("q_a_layernorm", n);
    if (o.q_gate)
      q_gate_proj = child<Linear>("q_b_proj", LinearOptions{2 * *o.q_lora_rank,
                                                               o.num_heads * (qk_head_dim + o.v_head_dim), false, o.dtype});
    else
      q_b_proj = child<Linear>("q_b_proj", LinearOptions{*o.q_lora_rank, o.num_heads * qk_head_dim, false, o.dtype});
  } else {
    MOBIUS_ASSERT(!o.q_gate, "q_gate reads the query latent (q_lora_rank)");
    q_proj = child<Linear>("q_proj", LinearOptions{o.hidden_size, o.num_heads * qk_head_dim, false, o.dtype});
  }
  kv_a_proj_with_mqa = child<Linear>(
      "kv_a_proj_with_mqa", LinearOptions{o.hidden_size, o.kv_lora_rank + o.qk_rope_head_dim, o.attention_bias, o.dtype});
  NormOptions n = lora_norm;
  n.dim = o.kv_lora_rank;
  kv_a_layernorm = child<RMSNorm>("kv_a_layernorm", n);
  kv_b_proj = child<Linear>(
      "kv_b_proj", LinearOptions{o.kv_lora_rank, o.num_heads * (o.qk_nope_head_dim + o.v_head_dim), false, o.dtype});
  o_proj = child<Linear>(o.o_proj_name,
                         LinearOptions{o.num_heads * o.v_head_dim, o.hidden_size, o.attention_bias, o.dtype});
  if (o.head_gate) g_proj = child<Linear>("g_proj", LinearOptions{o.hidden_size, o.num_heads, false, o.dtype});
}

Value* MultiHeadLatentAttention::heads(Ops& op, Value* x, int64_t dim) const {
  return op.Transpose(op.Reshape(x, {0, 0, o_.num_heads, dim}), {.perm = {0, 2, 1, 3}});
}

AttentionResult MultiHeadLatentAttention::forward(Ops& op, Value* x, const AttentionContext& ctx,
                                                  Value* past_key, Value* past_value) const {
  auto s = enter(op);
  return attend(op, x, q_proj ? QueryLatent{} : query_latent(op, x), ctx.mask, ctx, past_key, past_value);
}

MultiHeadLatentAttention::QueryLatent MultiHeadLatentAttention::query_latent(Ops& op, Value* x) const {
  Value* compressed = q_a_proj->forward(op, x);
  return {q_a_layernorm->forward(op, compressed), compressed};
}

AttentionResult MultiHeadLatentAttention::attend(Ops& op, Value* x, const QueryLatent& q_latent, Value* mask,
                                                 const AttentionContext& ctx, Value* past_key,
                                                 Value* past_value) const {
  // a layer without RoPE (Kimi Linear's, ctx.rope empty) keeps its rope channels as they are
  auto rotate = [&](Value* t) { return ctx.rope.cos ? apply_rope(op, t, ctx.rope, o_.rope_interleave) : t; };
  const int64_t nope = o_.qk_nope_head_dim, rope = o_.qk_rope_head_dim, qk = nope + rope;
  Value* gate = nullptr;  // q_gate's [b, s, h, v]
  Value* q;
  if (q_gate_proj) {
    Value* qg = op.Reshape(q_gate_proj->forward(op, op.Concat({q_latent.latent, q_latent.compressed}, {.axis = -1})),
                           {0, 0, o_.num_heads, qk + o_.v_head_dim});
    gate = op.Slice(qg, {qk}, {qk + o_.v_head_dim}, {-1});
    q = op.Transpose(op.Slice(qg, {0}, {qk}, {-1}), {.perm = {0, 2, 1, 3}});
  } else {
    q = heads(op, q_latent.latent ? q_b_proj->forward(op, q_latent.latent) : q_proj->forward(op, x), qk);
  }                                                                          // [b, h, s, qk]
  Value* q_rot = rotate(op.Slice(q, {nope}, {qk}, {-1}));
  q = op.Concat({op.Slice(q, {0}, {nope}, {-1}), q_rot}, {.axis = -1});

  Value* compressed = kv_a_proj_with_mqa->forward(op, x);                   // [b, s, lora + rope]
  Value* latent = kv_a_layernorm->forward(op, op.Slice(compressed, {0}, {o_.kv_lora_rank}, {-1}));
  if (o_.latent_scale != 1.0f) latent = op.Mul(latent, o_.latent_scale);
  Value* k_rot = op.Unsqueeze(op.Slice(compressed, {o_.kv_lora_rank}, {o_.kv_lora_rank + rope}, {-1}), {1});
  k_rot = rotate(k_rot);                                                     // [b, 1, s, rope]
  Value* kv = heads(op, kv_b_proj->forward(op, latent), nope + o_.v_head_dim);  // [b, h, s, nope + v]
  Value* k_nope = op.Slice(kv, {0}, {nope}, {-1});
  Value* v = op.Slice(kv, {nope}, {nope + o_.v_head_dim}, {-1});
  Value* rot_shape = op.Concat({op.Shape(k_nope, {.start = 0, .end = 3}), op.builder().ints({rope})}, {.axis = 0});
  Value* k = op.Concat({k_nope, op.Expand(k_rot, rot_shape)}, {.axis = -1});  // [b, h, s, qk]

  AttentionOutputs a = op.Attention(q, k, v, mask, past_key, past_value, {.scale = o_.scale});
  Value* y = op.Transpose(a.y, {.perm = {0, 2, 1, 3}});  // [b, s, h, v]
  if (g_proj) {  // torch.sigmoid(g_proj(x).float()).to(dtype), per head
    Value* gate = op.Sigmoid(to_float(op, g_proj->forward(op, x)));
    if (o_.dtype != DataType::FLOAT) gate = op.Cast(gate, {.to = o_.dtype});
    y = op.Mul(y, op.Unsqueeze(gate, {3}));
  }
  if (gate) {  // torch.sigmoid(gate_states.float()), the product cast back
    Value* g = op.Sigmoid(to_float(op, gate));
    y = o_.dtype != DataType::FLOAT ? op.Cast(op.Mul(to_float(op, y), g), {.to = o_.dtype}) : op.Mul(y, g);
  }
  y = op.Reshape(y, {0, 0, -1});
  return {o_proj->forward(op, y), a.present_key, a.present_value};
}

}  // namespace mobius
