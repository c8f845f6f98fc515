// The joint attention of diffusers' multi-modal DiTs (diffusers/models/transformers/
// transformer_flux.py FluxAttention + FluxAttnProcessor; attention_processor.py Attention +
// JointAttnProcessor2_0 for SD3): the image tokens x and, when the block has a context stream,
// the text tokens attend together.
//   q, k, v = to_q(x), to_k(x), to_v(x) as [batch, seq, heads, head_dim]; norm_q(q), norm_k(k)
//   with a context: add_q_proj / add_k_proj / add_v_proj of it, norm_added_q / norm_added_k, and
//     the two token sets concatenated on the sequence, the context first (Flux) or second (SD3)
//   rotary embedding (interleaved pairs: apply_rotary_emb use_real_unbind_dim -1) on q and k of
//     the whole sequence when tables are given
//   y = SDPA(q, k, v) (scale head_dim^-0.5, no mask; the ONNX Attention op tagged with its heads)
//   x' = to_out.0(y of x) (none when pre_only), context' = to_add_out(y of context) (none when
//   context_pre_only)
// Norms: RMSNorm(head_dim, eps) with weight (qk_norm "rms_norm"), none without qk_norm.
// Children named as the diffusers state dict.
#pragma once

#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/rope.h"

namespace mobius {

struct JointAttentionOptions {
  int64_t dim;               // query_dim (x's width)
  int64_t heads;
  int64_t head_dim;
  int64_t context_dim = 0;   // added_kv_proj_dim: 0 = no context stream
  bool pre_only = false;     // no to_out: x' is the attention output itself
  bool context_pre_only = false;  // no to_add_out: context' is null
  bool qk_norm = true;       // norm_q, norm_k (and norm_added_q, norm_added_k): RMSNorm
  bool context_first = true; // the context's tokens before x's (Flux) or after (SD3)
  float eps = 1e-6f;
  bool bias = true;          // to_q, to_k, to_v (the add_*_proj and outputs always have one)
  DataType dtype = DataType::FLOAT;
};

struct JointAttentionOutputs {
  Value* x;        // [batch, seq, dim]
  Value* context;  // [batch, len, dim], null without a context stream or with context_pre_only
};

class JointAttention : public Module {
 public:
  explicit JointAttention(const JointAttentionOptions& o);
  // x [batch, seq, dim]; context [batch, len, context_dim] or null (no context stream); rope: the
  // tables over the whole sequence (cos, sin [batch, total, head_dim / 2]) or null.
  JointAttentionOutputs forward(Ops& op, Value* x, Value* context, const RopeTables* rope) const;
  Linear *to_q, *to_k, *to_v, *to_out = nullptr;
  Linear *add_q_proj = nullptr, *add_k_proj = nullptr, *add_v_proj = nullptr, *to_add_out = nullptr;
  RMSNorm *norm_q = nullptr, *norm_k = nullptr, *norm_added_q = nullptr, *norm_added_k = nullptr;

 private:
  JointAttentionOptions o_;
};

// Flux's FluxPosEmbed (transformer_flux.py; embeddings.py get_1d_rotary_pos_embed with
// use_real, repeat_interleave_real): for ids [seq, n_axes] (any float dtype), axis a's positions
// times its axes_dim[a] / 2 frequencies theta^(-2k / axes_dim[a]) (computed in float64 here and in
// diffusers), the angles of all axes concatenated -> cos, sin [batch, seq, sum(axes_dim) / 2] in
// float32 (cast to `dtype`, the model's), broadcast to `batch` (int64 [1]).
RopeTables axes_rope_tables(Ops& op, Value* ids, const std::vector<int64_t>& axes_dim, double theta, Value* batch,
                            DataType dtype);

}  // namespace mobius
