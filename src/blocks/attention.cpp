#include "blocks/attention.h"

#include <cmath>
#include <limits>

#include "blocks/attention_sinks.h"
#include "blocks/head_norm.h"
#include "util/error.h"
#include "util/float16.h"

namespace mobius {

namespace {

std::unique_ptr<Norm> make_qk_norm(const QKNorm& n, int64_t heads, const AttentionOptions& o) {
  if (n.layout == QKNormLayout::full_width)
    return make_norm({.dim = heads * o.head_dim, .eps = o.norm_eps, .dtype = o.dtype, .bias = n.bias,
                      .kind = n.kind});
  MOBIUS_ASSERT(n.layout == QKNormLayout::shared || (!n.after_rope && n.elementwise_affine),
                "q/k norms after RoPE or without weights have the shared layout");
  if (n.layout == QKNormLayout::shared)
    return make_norm({.dim = o.head_dim, .eps = o.norm_eps, .dtype = o.dtype,
                      .weight_offset_one = n.weight_offset_one, .bias = n.bias, .kind = n.kind,
                      .elementwise_affine = n.elementwise_affine});
  MOBIUS_ASSERT(n.kind == NormKind::LayerNorm && !n.weight_offset_one, "per-head q/k norms are LayerNorms");
  return std::make_unique<PerHeadLayerNorm>(HeadNormOptions{
      .num_heads = heads, .head_dim = o.head_dim, .eps = o.norm_eps, .bias = n.bias,
      .norm_per_head = n.layout == QKNormLayout::norm_per_head, .dtype = o.dtype});
}

}  // namespace

float lowest_value(DataType dtype) {
  return dtype == DataType::FLOAT16    ? -65504.0f
         : dtype == DataType::BFLOAT16 ? bits_f32(0xff7f0000u)
                                       : std::numeric_limits<float>::lowest();
}

Attention::Attention(const AttentionOptions& o) : o_(o) {
  const int64_t q_dim = o.num_attention_heads * o.head_dim;
  const int64_t kv_dim = o.num_key_value_heads * o.head_dim;
  const int64_t v_dim = o.num_key_value_heads * o.value_dim(), y_dim = o.num_attention_heads * o.value_dim();
  const AttentionNames& n = o.names;
  MOBIUS_ASSERT(!(o.gate_in_q_proj && o.fused_qkv), "a gate in q_proj needs separate q, k, v projections");
  MOBIUS_ASSERT(o.value_dim() == o.head_dim || (!o.fused_qkv && !o.gate_in_q_proj && o.output_gate.empty() &&
                                                !o.o_input_norm && !o.dynamic_mask_keep_window),
                "a value head size of its own goes with separate q, k, v projections and no output gate or norm");
  if (o.fused_qkv) {
    const FusedQKV& f = *o.fused_qkv;
    MOBIUS_ASSERT(f.groups > 0 && q_dim % f.groups == 0 && kv_dim % f.groups == 0,
                  "fused qkv groups must divide the q and kv widths");
    MOBIUS_ASSERT(o.k_bias, "a fused qkv projection has one bias for q, k and v");
    qkv_proj = child<Linear>(f.name, LinearOptions{o.hidden_size, q_dim + 2 * kv_dim, o.qkv_bias, o.dtype, o.conv1d});
  } else {
    q_proj = child<Linear>(n.q_proj, LinearOptions{o.hidden_size, o.gate_in_q_proj ? 2 * q_dim : q_dim, o.qkv_bias,
                                                   o.dtype, o.conv1d});
    k_proj = child<Linear>(n.k_proj, LinearOptions{o.hidden_size, kv_dim, o.qkv_bias && o.k_bias, o.dtype, o.conv1d});
    v_proj = child<Linear>(n.v_proj, LinearOptions{o.hidden_size, v_dim, o.qkv_bias, o.dtype, o.conv1d});
  }
  o_proj = child<Linear>(n.o_proj, LinearOptions{y_dim, o.hidden_size, o.o_bias, o.dtype, o.conv1d});
  if (o.qk_norm) {
    q_norm = adopt(o.qk_norm->q_name, make_qk_norm(*o.qk_norm, o.num_attention_heads, o));
    k_norm = adopt(o.qk_norm->k_name, make_qk_norm(*o.qk_norm, o.num_key_value_heads, o));
  }
  if (o.sinks) sinks = param(n.sinks, {o.num_attention_heads}, o.dtype);
  if (!o.output_gate.empty())
    output_gate = child<Linear>(o.output_gate, LinearOptions{o.hidden_size, o.output_gate_per_head ? o.num_attention_heads : q_dim,
                                                             false, o.dtype});
  if (!o.output_gate_bias.empty()) {
    MOBIUS_ASSERT(output_gate && !o.output_gate_per_head, "a per-head gate bias goes with a per-element output gate");
    output_gate_bias = param(o.output_gate_bias, {o.num_attention_heads}, o.dtype);
  }
  if (const auto& n = o.o_input_norm)
    o_input_norm = adopt(n->name, make_norm({.dim = q_dim, .eps = n->eps, .dtype = o.dtype}));
  if (o.dynamic_mask_keep_window) {
    MOBIUS_ASSERT(*o.dynamic_mask_keep_window > 0 && !o.sinks, "a dynamic mask keeps a positive window, without sinks");
    A = param("A", {o.num_key_value_heads}, o.dtype);
    dt_proj = child<Linear>("dt_proj", LinearOptions{kv_dim, o.num_key_value_heads, o.qkv_bias, o.dtype});
  }
}

Value* Attention::dynamic_mask(Ops& op, Value* mask, Value* values) const {
  auto s = op.builder().scope("dynamic_mask");
  GraphBuilder& b = op.builder();
  const int64_t kv = o_.num_key_value_heads, heads = o_.num_attention_heads;
  // dt_proj over each key's values [batch, total, kv * head_dim] -> [batch, total, kv]
  Value* flat = op.Reshape(op.Transpose(values, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
  Value* dt = op.Exp(op.Mul(A->value(op), op.Softplus(dt_proj->forward(op, flat))));
  // repeat_kv: [batch, kv, 1, 1, total] -> [batch, heads, 1, total]
  dt = op.Unsqueeze(op.Transpose(dt, {.perm = {0, 2, 1}}), {2, 3});
  dt = op.Reshape(op.Expand(dt, b.ints({1, 1, heads / kv, 1, 1})), {0, heads, 1, -1});
  // the bias where the mask allows the key; the mask's lowest value elsewhere
  Value* biased = op.Where(op.Equal(mask, b.constant_float({0.0f}, {}, o_.dtype)), dt, mask);
  // keep_window_size largest per query: TopK over the keys padded with keep_window_size lowest
  // values, so that k never exceeds the keys and every allowed key is kept when there are fewer
  const int64_t keep = *o_.dynamic_mask_keep_window;
  Value* lowest = b.constant_float({lowest_value(o_.dtype)}, {}, o_.dtype);
  Value* pad_shape = op.Concat({op.Shape(biased, {.start = 0, .end = 3}), b.ints({keep})}, {.axis = 0});
  Value* padded = op.Concat({biased, op.Expand(lowest, pad_shape)}, {.axis = -1});
  TopKOutputs top = op.TopK(padded, keep);  // ties: the lower key index first (ONNX TopK)
  Value* zeros = op.Expand(b.constant_float({0.0f}, {}, o_.dtype), op.Shape(padded));
  Value* ones = op.Expand(b.constant_float({1.0f}, {}, o_.dtype), op.Shape(top.values));
  Value* active = op.ScatterElements(zeros, top.indices, ones, {.axis = 3});
  active = op.Slice(active, b.ints({0}), op.Shape(biased, {.start = 3, .end = 4}), b.ints({3}));
  return op.Where(op.Equal(active, b.constant_float({1.0f}, {}, o_.dtype)), biased, lowest);
}

Attention::QKV Attention::project(Ops& op, Value* x) const {
  const int64_t hq = o_.num_attention_heads, hkv = o_.num_key_value_heads, d = o_.head_dim;
  auto heads = [&](Value* y, int64_t n, int64_t size) { return op.Reshape(y, {0, 0, n, size}); };
  if (!qkv_proj && o_.gate_in_q_proj) {  // per head [query | gate]
    std::vector<Value*> qg = op.Split(op.Reshape(q_proj->forward(op, x), {0, 0, hq, 2 * d}), {d, d}, {.axis = 3});
    return {qg[0], heads(k_proj->forward(op, x), hkv, d), heads(v_proj->forward(op, x), hkv, d), qg[1]};
  }
  if (!qkv_proj)
    return {heads(q_proj->forward(op, x), hq, d), heads(k_proj->forward(op, x), hkv, d),
            heads(v_proj->forward(op, x), hkv, o_.value_dim())};
  const FusedQKV& f = *o_.fused_qkv;
  Value* fused = qkv_proj->forward(op, x);
  if (f.clip) fused = op.Max(op.Min(fused, *f.clip), -*f.clip);
  Value* grouped = op.Reshape(fused, {0, 0, f.groups, -1});
  std::vector<int64_t> sizes;
  for (char c : f.order) sizes.push_back((c == 'q' ? hq : hkv) * d / f.groups);
  std::vector<Value*> parts = op.Split(grouped, sizes, {.axis = -1});
  QKV r{};
  for (size_t i = 0; i < f.order.size(); ++i) {
    const char c = f.order[i];
    (c == 'q' ? r.q : c == 'k' ? r.k : r.v) = heads(parts[i], c == 'q' ? hq : hkv, d);
  }
  return r;
}

Value* Attention::to_heads(Ops& op, Value* x, const Norm* norm, const RopeTables* rope) const {
  const bool after_rope = norm && o_.qk_norm->after_rope;
  if (norm && !after_rope) x = norm->forward(op, x);
  x = op.Transpose(x, {.perm = {0, 2, 1, 3}});
  if (rope && rope->cos) x = apply_rope(op, x, *rope, o_.rope_interleaved);
  return after_rope ? norm->forward(op, x) : x;
}

MixerResult SelfAttention::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.empty() || past.size() == 2, "a self-attention takes its past {key, value} or none");
  if (past.empty()) return {forward(op, x, ctx, nullptr, nullptr).hidden, {}};
  AttentionResult a = forward(op, x, ctx, past[0], past[1]);
  return {a.hidden, {a.present_key, a.present_value}};
}

AttentionResult Attention::forward(Ops& op, Value* x, const AttentionContext& ctx,
                                   Value* past_key, Value* past_value) const {
  auto s = enter(op);
  QKV p = project(op, x);
  const bool full_width = o_.qk_norm && o_.qk_norm->layout == QKNormLayout::full_width;
  if (full_width) {  // [batch, seq, heads, head_dim] normalized over its last two axes together
    auto whole = [&](const Norm* norm, Value* y) {
      return op.Reshape(norm->forward(op, op.Reshape(y, {0, 0, -1})), op.Shape(y));
    };
    p.q = whole(q_norm, p.q);
    p.k = whole(k_norm, p.k);
  }
  if (o_.clip_qkv) {
    const double c = *o_.clip_qkv;
    for (Value** t : {&p.q, &p.k, &p.v}) *t = op.Max(op.Min(*t, c), -c);
  }
  Value* q = to_heads(op, p.q, full_width ? nullptr : q_norm, &ctx.rope);
  if (ctx.query_scale) q = op.Mul(q, ctx.query_scale);
  Value* k = to_heads(op, p.k, full_width ? nullptr : k_norm, &ctx.rope);
  if (o_.value_scale) p.v = op.Mul(p.v, static_cast<double>(*o_.value_scale));
  Value* v = to_heads(op, p.v, nullptr, nullptr);
  float scale = o_.scale ? *o_.scale : 1.0f / std::sqrt(static_cast<float>(o_.head_dim));
  Value* mask = dt_proj ? dynamic_mask(op, ctx.mask, past_value ? op.Concat({past_value, v}, {.axis = 2}) : v)
                        : ctx.mask;
  AttentionOutputs a =
      sinks ? attention_with_sinks(op, q, k, v, mask, past_key, past_value, sinks->value(op),
                                   {o_.num_attention_heads, o_.num_key_value_heads, o_.head_dim, scale,
                                    o_.value_dim()})
            : op.Attention(q, k, v, mask, past_key, past_value, {.scale = scale, .softcap = o_.softcap});
  // GroupQueryAttention (the causal_lm lowering) has one head size for k and v
  if (!sinks && o_.value_dim() == o_.head_dim)
    op.builder().producer(a.y).tags = {.num_heads = o_.num_attention_heads, .kv_num_heads = o_.num_key_value_heads,
                                       .head_size = o_.head_dim};
  Value* y = op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
  if (output_gate) {
    Value* g = output_gate->forward(op, x);
    if (output_gate_bias)  // [batch, seq, heads, head_dim] + [heads, 1]
      g = op.Reshape(op.Add(op.Reshape(g, {0, 0, o_.num_attention_heads, o_.head_dim}),
                            op.Unsqueeze(output_gate_bias->value(op), {-1})), {0, 0, -1});
    if (o_.output_gate_act == GateActivation::sigmoid) {
      g = op.Sigmoid(g);
    } else if (o_.dtype == DataType::FLOAT) {
      g = op.Softplus(g);
    } else {  // in float32 (LagunaAttention)
      g = op.Cast(op.Softplus(op.Cast(g, {.to = DataType::FLOAT})), {.to = o_.dtype});
    }
    if (o_.output_gate_per_head)  // [batch, seq, heads, 1] over [batch, seq, heads, head_dim]
      y = op.Reshape(op.Mul(op.Reshape(y, {0, 0, o_.num_attention_heads, o_.head_dim}), op.Unsqueeze(g, {-1})), {0, 0, -1});
    else
      y = op.Mul(y, g);
  }
  if (p.gate) y = op.Mul(y, op.Sigmoid(op.Reshape(p.gate, {0, 0, -1})));
  if (o_input_norm) y = o_input_norm->forward(op, y);
  return {o_proj->forward(op, y), a.present_key, a.present_value};
}

Value* additive_mask(Ops& op, Value* allowed, DataType dtype) {
  Value* zero_f = op.builder().constant_float({0.0f}, {}, dtype);
  return op.Where(allowed, zero_f, op.builder().constant_float({lowest_value(dtype)}, {}, dtype));
}

Value* causal_mask(Ops& op, Value* attention_mask, Value* input_ids, DataType dtype,
                   int64_t sliding_window, Value* overlay, int64_t chunk_size) {
  auto s = op.builder().scope(overlay ? "overlay_mask" : "causal_mask");
  Value* total = op.Shape(attention_mask, {.start = 1, .end = 2});
  Value* seq = op.Shape(input_ids, {.start = 1, .end = 2});
  Value* past = op.Sub(total, seq);
  Value* zero = op.builder().scalar_i64(0);
  Value* one = op.builder().scalar_i64(1);
  Value* q_idx = op.Unsqueeze(op.Range(op.Squeeze(past, {0}), op.Squeeze(total, {0}), one), {1});
  Value* k_idx = op.Unsqueeze(op.Range(zero, op.Squeeze(total, {0}), one), {0});
  Value* allowed = op.LessOrEqual(k_idx, q_idx);  // [seq, total]
  if (overlay) allowed = op.Or(op.Unsqueeze(allowed, {0, 1}), overlay);
  if (sliding_window > 0)
    allowed = op.And(allowed, op.Greater(k_idx, op.Sub(q_idx, static_cast<double>(sliding_window))));
  Value* keep = op.Cast(op.Unsqueeze(attention_mask, {1, 2}), {.to = DataType::BOOL});
  if (chunk_size > 0) {
    // the row's left padding [batch, 1, 1, 1]; integer division truncates, which differs from the
    // floor only on padded keys (masked by `keep`) and padded queries (every key they see is padding)
    Value* leading = op.Cast(op.Equal(op.CumSum(attention_mask, op.builder().scalar_i64(1)), zero), {.to = DataType::INT64});
    Value* pad = op.Unsqueeze(op.ReduceSum(leading, {1}, {.keepdims = 0}), {1, 2, 3});
    Value* same_chunk = op.Equal(op.Div(op.Sub(q_idx, pad), static_cast<double>(chunk_size)),
                                 op.Div(op.Sub(k_idx, pad), static_cast<double>(chunk_size)));
    keep = op.And(keep, same_chunk);  // [batch, 1, seq, total]
  }
  allowed = op.And(overlay ? allowed : op.Unsqueeze(allowed, {0, 1}), keep);  // [batch, 1, seq, total]
  return additive_mask(op, allowed, dtype);
}

Value* padding_mask(Ops& op, Value* attention_mask, DataType dtype) {
  auto s = op.builder().scope("padding_mask");
  Value* keep = op.Cast(op.Unsqueeze(attention_mask, {1, 2}), {.to = DataType::BOOL});  // [b, 1, 1, s]
  Value* seq = op.Shape(attention_mask, {.start = 1, .end = 2});
  Value* one = op.builder().ints({1});
  keep = op.Expand(keep, op.Concat({one, one, seq, one}, {.axis = 0}));  // [b, 1, s, s]
  return additive_mask(op, keep, dtype);
}

}  // namespace mobius
