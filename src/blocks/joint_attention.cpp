#include "blocks/joint_attention.h"

#include <cmath>
#include <limits>

namespace mobius {

JointAttention::JointAttention(const JointAttentionOptions& o) : o_(o) {
  const int64_t inner = o.heads * o.head_dim;
  const NormOptions norm{.dim = o.head_dim, .eps = o.eps, .dtype = o.dtype};
  to_q = child<Linear>("to_q", LinearOptions{o.dim, inner, o.bias, o.dtype});
  to_k = child<Linear>("to_k", LinearOptions{o.dim, inner, o.bias, o.dtype});
  to_v = child<Linear>("to_v", LinearOptions{o.dim, inner, o.bias, o.dtype});
  if (o.qk_norm) {
    norm_q = child<RMSNorm>("norm_q", norm);
    norm_k = child<RMSNorm>("norm_k", norm);
  }
  if (!o.pre_only) to_out = child<Linear>("to_out.0", LinearOptions{inner, o.dim, true, o.dtype});
  if (o.context_dim > 0) {
    if (o.qk_norm) {
      norm_added_q = child<RMSNorm>("norm_added_q", norm);
      norm_added_k = child<RMSNorm>("norm_added_k", norm);
    }
    add_q_proj = child<Linear>("add_q_proj", LinearOptions{o.context_dim, inner, true, o.dtype});
    add_k_proj = child<Linear>("add_k_proj", LinearOptions{o.context_dim, inner, true, o.dtype});
    add_v_proj = child<Linear>("add_v_proj", LinearOptions{o.context_dim, inner, true, o.dtype});
    if (!o.context_pre_only) to_add_out = child<Linear>("to_add_out", LinearOptions{inner, o.dim, true, o.dtype});
  }
}

JointAttentionOutputs JointAttention::forward(Ops& op, Value* x, Value* context, const RopeTables* rope) const {
  auto s = enter(op);
  auto heads = [&](const Linear* proj, const RMSNorm* norm, Value* from) {  // [batch, seq, heads, head_dim]
    Value* h = op.Reshape(proj->forward(op, from), {0, 0, o_.heads, o_.head_dim});
    return norm ? norm->forward(op, h) : h;
  };
  Value* q = heads(to_q, norm_q, x);
  Value* k = heads(to_k, norm_k, x);
  Value* v = heads(to_v, nullptr, x);
  Value* len = nullptr;
  if (context && add_q_proj) {
    auto joined = [&](Value* mine, Value* theirs) {
      return op.Concat(o_.context_first ? std::vector<Value*>{theirs, mine} : std::vector<Value*>{mine, theirs},
                       {.axis = 1});
    };
    q = joined(q, heads(add_q_proj, norm_added_q, context));
    k = joined(k, heads(add_k_proj, norm_added_k, context));
    v = joined(v, heads(add_v_proj, nullptr, context));
    len = op.Shape(context, {.start = 1, .end = 2});
  }
  auto bhsd = [&](Value* t) { return op.Transpose(t, {.perm = {0, 2, 1, 3}}); };
  q = bhsd(q);
  k = bhsd(k);
  if (rope) {
    q = apply_rope(op, q, *rope, true);
    k = apply_rope(op, k, *rope, true);
  }
  Value* y = op.Attention(q, k, bhsd(v), nullptr, nullptr, nullptr,
                          {.scale = 1.0f / std::sqrt(static_cast<float>(o_.head_dim))})
                 .y;
  op.builder().producer(y).tags = {.num_heads = o_.heads, .kv_num_heads = o_.heads, .head_size = o_.head_dim};
  y = op.Reshape(op.Transpose(y, {.perm = {0, 2, 1, 3}}), {0, 0, o_.heads * o_.head_dim});
  JointAttentionOutputs out{y, nullptr};
  if (len) {
    Value* zero = op.builder().ints({0});
    Value* end = op.builder().ints({std::numeric_limits<int64_t>::max()});
    Value* axis = op.builder().ints({1});
    Value* seq = op.Shape(x, {.start = 1, .end = 2});
    Value* ctx = o_.context_first ? op.Slice(y, zero, len, axis) : op.Slice(y, seq, end, axis);
    out.x = o_.context_first ? op.Slice(y, len, end, axis) : op.Slice(y, zero, seq, axis);
    if (to_add_out) out.context = to_add_out->forward(op, ctx);
  }
  if (to_out) out.x = to_out->forward(op, out.x);
  return out;
}

RopeTables axes_rope_tables(Ops& op, Value* ids, const std::vector<int64_t>& axes_dim, double theta, Value* batch,
                            DataType dtype) {
  Value* pos = op.Cast(ids, {DataType::FLOAT});  // ids.float()
  std::vector<Value*> angles;
  int64_t half = 0;
  for (size_t a = 0; a < axes_dim.size(); ++a) {
    const int64_t d = axes_dim[a];
    std::vector<float> freq(d / 2);
    for (int64_t k = 0; k < d / 2; ++k)  // 1 / theta^(2k / d), in float64 as diffusers' freqs_dtype
      freq[k] = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(2 * k) / static_cast<double>(d)));
    const int64_t i = static_cast<int64_t>(a);
    Value* p = op.Slice(pos, {i}, {i + 1}, {1});  // [seq, 1]
    angles.push_back(op.Mul(p, op.builder().constant_f32(freq, {1, d / 2})));
    half += d / 2;
  }
  Value* all = op.Unsqueeze(op.Concat(angles, {.axis = 1}), {0});  // [1, seq, half]
  Value* shape = op.Concat({batch, op.builder().ints({1, 1})}, {.axis = 0});
  auto table = [&](Value* t) { return op.Expand(dtype == DataType::FLOAT ? t : op.Cast(t, {dtype}), shape); };
  return {table(op.Cos(all)), table(op.Sin(all)), 0};
}

}  // namespace mobius
