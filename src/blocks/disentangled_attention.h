// DeBERTa's disentangled self-attention (He et al. 2021, "DeBERTa: Decoding-enhanced BERT with
// Disentangled Attention"; transformers/models/deberta_v2/modeling_deberta_v2.py
// DisentangledSelfAttention, copied by sew_d/modeling_sew_d.py). With q, k, v [batch, heads, seq,
// head_dim] the projections of x, r [2 * span, hidden] the (normalized) relative embeddings and
// s = sqrt(head_dim * (1 + |pos_att_type|)):
//   scores[i, j] = q_i.k_j / s
//                + c2p: q_i . pos_key[idx(i, j)] / s     pos_key   = key_proj(r)   (share_att_key)
//                                                                  | pos_key_proj(r)
//                + p2c: k_j . pos_query[idx(i, j)] / s   pos_query = query_proj(r) | pos_query_proj(r)
//   idx(i, j) = clamp(bucket(i - j) + span, 0, 2 * span - 1)
// where bucket is make_log_bucket_position (exact below position_buckets / 2, log-spaced up to
// max_relative_positions) when position_buckets > 0, else the distance itself, and span is
// position_buckets (> 0) or max_relative_positions. The index is computed once per graph
// (disentangled_position_index) and shared by the layers, as transformers' encoder does.
// The probabilities are softmax(scores + mask) (XSoftmax: padded keys get none), then
// context = probs . v, [batch, seq, heads * head_dim] (before the layer's output dense).
#pragma once

#include <array>

#include "blocks/linear.h"
#include "nn/module.h"

namespace mobius {

// How the checkpoint holds the projections.
enum class DisentangledProjections {
  // DeBERTa-v2, SEW-D: query_proj, key_proj, value_proj (biases); pos_key_proj (c2p) and
  // pos_query_proj (p2c), both with biases, when share_att_key is false
  kSeparate,
  // DeBERTa: in_proj [3 * heads * head_dim, hidden] without bias, whose output holds per head its
  // query, key and value (transpose_for_scores then chunk(3)); q_bias, v_bias [heads * head_dim];
  // pos_proj (c2p, no bias) and pos_q_proj (p2c, bias); share_att_key must be false
  kFused,
};

struct DisentangledAttentionOptions {
  int64_t hidden_size;
  int64_t num_attention_heads;
  int64_t head_dim;                // hidden_size / num_attention_heads (attention_head_size)
  bool relative_attention = true;  // false: no c2p / p2c terms (the scale still counts pos_att_type)
  bool c2p = true, p2c = true;     // pos_att_type
  bool share_att_key = true;       // the relative terms project r with query_proj / key_proj
  int64_t position_buckets = 256;  // <= 0: no buckets
  int64_t max_relative_positions = 512;  // resolved: max_position_embeddings when the config has < 1
  DisentangledProjections projections = DisentangledProjections::kSeparate;
  DataType dtype = DataType::FLOAT;
  // span: the half width of the relative embedding table (rel_embeddings has 2 * span rows).
  int64_t span() const { return position_buckets > 0 ? position_buckets : max_relative_positions; }
};

// idx(i, j) above for i, j in [0, seq): seq int64 [1] -> int64 [seq, seq].
Value* disentangled_position_index(Ops& op, Value* seq, const DisentangledAttentionOptions& o);

// Registered where the checkpoint has it ("attention.self"), its projections as `projections` says.
class DisentangledSelfAttention : public Module {
 public:
  explicit DisentangledSelfAttention(const DisentangledAttentionOptions& o);
  // x [batch, seq, hidden]; rel_embeddings [2 * span, hidden] (after the encoder's LayerNorm);
  // position_index: disentangled_position_index(seq); mask: additive [batch, 1, seq, seq] or null
  // -> context [batch, seq, heads * head_dim]. rel_embeddings and position_index are unused (may
  // be null) without relative_attention. query_valid: bool [batch, 1, seq, 1] or null; where false
  // (a padded query, its row all masked in XSoftmax) the probabilities are uniform over every key:
  // the context is the mean of the values.
  Value* forward(Ops& op, Value* x, Value* rel_embeddings, Value* position_index, Value* mask,
                 Value* query_valid = nullptr) const;

  // kSeparate
  Linear *query_proj = nullptr, *key_proj = nullptr, *value_proj = nullptr;
  // kFused
  Linear* in_proj = nullptr;
  Parameter *q_bias = nullptr, *v_bias = nullptr;
  // the relative terms' own projections (kSeparate without share_att_key: pos_key_proj,
  // pos_query_proj; kFused: pos_proj, pos_q_proj)
  Linear* pos_key_proj = nullptr;
  Linear* pos_query_proj = nullptr;

 private:
  // x [batch, seq, heads * head_dim] -> [batch, heads, seq, head_dim]
  Value* heads(Ops& op, Value* x) const;
  // q, k, v [batch, heads, seq, head_dim] of x
  std::array<Value*, 3> project(Ops& op, Value* x) const;
  DisentangledAttentionOptions o_;
};

}  // namespace mobius
