#include "blocks/rope.h"

namespace mobius {
namespace {

// Dynamic NTK: inv_freq = 1 / (base' ** (arange(0, dim, 2) / dim)) with
// base' = theta * (factor * seq_len / max_pos - (factor - 1)) ** (dim / (dim - 2)).
Value* dynamic_inv_freq(Ops& op, const RopeConfig& r, Value* seq_len) {
  GraphBuilder& b = op.builder();
  const int64_t dim = r.rotary_dim();
  const double max_pos = static_cast<double>(r.max_position_embeddings);
  Value* seq = op.Max(seq_len, max_pos);
  Value* ratio = op.Sub(op.Div(op.Mul(seq, r.factor), max_pos), r.factor - 1);
  Value* base = op.Mul(op.Pow(ratio, static_cast<double>(dim) / static_cast<double>(dim - 2)),
                       r.rope_theta);
  std::vector<float> exps;
  for (int64_t i = 0; i < dim; i += 2) exps.push_back(static_cast<float>(i) / static_cast<float>(dim));
  return op.Reciprocal(op.Pow(base, b.constant_f32(exps, {dim / 2})));
}

}  // namespace

RopeTables rope_tables(Ops& op, const RopeConfig& r, Value* position_ids, DataType dtype) {
  auto s = op.builder().scope("rotary_emb");
  GraphBuilder& b = op.builder();
  RopeFrequencies f = compute_rope_frequencies(r);
  const int64_t half = r.rotary_dim() / 2;
  Value* pos = op.Cast(position_ids, {.to = DataType::FLOAT});
  Value* inv_freq = b.constant_f32(f.inv_freq, {half});
  if (r.rope_type == "dynamic" || r.rope_type == "longrope") {
    Value* seq_len = op.Add(op.ReduceMax(pos, {0, 1}, {.keepdims = 0}), 1.0);
    if (r.rope_type == "dynamic") {
      inv_freq = dynamic_inv_freq(op, r, seq_len);
    } else {
      Value* is_long = op.Greater(seq_len, static_cast<double>(r.original_max_position_embeddings));
      inv_freq = op.Where(is_long, b.constant_f32(f.long_inv_freq, {half}), inv_freq);
    }
  }
  Value* freqs = op.Mul(op.Unsqueeze(pos, {-1}), inv_freq);  // [batch, seq, half]
  Value* cos = op.Cos(freqs);
  Value* sin = op.Sin(freqs);
  if (f.attention_factor != 1.0f) {
    cos = op.Mul(cos, f.attention_factor);
    sin = op.Mul(sin, f.attention_factor);
  }
  if (dtype != DataType::FLOAT) {
    cos = op.Cast(cos, {.to = dtype});
    sin = op.Cast(sin, {.to = dtype});
  }
  return {cos, sin, r.rotary_dim() == r.head_dim ? 0 : r.rotary_dim()};
}

Value* apply_rope(Ops& op, Value* x, const RopeTables& t, bool interleaved) {
  return op.RotaryEmbedding(x, t.cos, t.sin,
                            {.interleaved = interleaved ? 1 : 0, .rotary_embedding_dim = t.rotary_dim});
}

}  // namespace mobius
