// Nystromformer (transformers/models/nystromformer/modeling_nystromformer.py,
// configuration_nystromformer.py; NystromformerModel): BERT's post-norm layers (blocks/encoder.h
// PostNormEncoder, archs/bert.h bert_spec, base_model_prefix "nystromformer"), positions 2..seq+1
// into a table of max_position_embeddings + 2 rows, and its own self-attention
// (NystromformerSelfAttention, attention.self) over BERT's projections: with h heads of d,
// L = num_landmarks, S = segment_means_seq_len, K = conv_kernel_size, q k v [batch, h, seq, d],
// q and k divided by d^(1/4):
//   L == S     context = softmax(q.k + mask) v (plain attention)
//   otherwise  the Nystrom approximation of it:
//              q~, k~   the landmarks: q (k) reshaped to [-1, h, L, S / L, d] and averaged over its
//                       S / L axis (segment means; as transformers' reshape, the batch's rows of a
//                       sequence of S tokens each; another length regroups them as it does)
//              context = softmax(q.k~) pinv(softmax(q~.k~)) (softmax(q~.k + key mask) v)
//              pinv     iterative_inv: Z = X^T / max over everything of X's column sums, then six
//                       times Z = 0.25 Z (13 I - XZ (15 I - XZ (7 I - XZ)))
//   both       context += conv(v): a depthwise Conv2d per head, kernel (K, 1), zero padding K // 2,
//              over the sequence of each of the d features (padding tokens' values included)
// The mask: transformers 5.23 adds create_bidirectional_mask's [batch, 1, seq, seq] to the scores,
// which the landmark scores [batch, h, L, seq] cannot take when the batch is padded (its forward
// fails); mobius masks the keys ([batch, 1, 1, seq], the mask transformers 4.x built with
// get_extended_attention_mask), which is the same mask on the plain path.
// Heads (Nystromformer<Task>): BERT's cls.predictions (tied); classifier.dense + hidden_act +
// classifier.out_proj; multiple choice pre_classifier + relu + classifier; classifier; qa_outputs.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/attention.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

struct NystromformerSizes {
  int64_t heads, head_dim, landmarks, segment_means_seq_len, kernel;
};

// NystromformerSelfAttention with attention.output.dense: x [batch, seq, hidden] -> [batch, seq, hidden];
// ctx.mask [batch, 1, seq, seq] from padding_mask().
class NystromformerAttention : public Attention {
 public:
  NystromformerAttention(const AttentionOptions& o, const NystromformerSizes& z) : Attention(o), z_(z), dtype_(o.dtype) {
    conv = param("self.conv.weight", {z.heads, 1, z.kernel, 1}, o.dtype);
  }
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const override {
    (void)past_key, (void)past_value;
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    auto heads = [&](Value* v) {
      return op.Transpose(op.Reshape(v, {0, 0, z_.heads, z_.head_dim}), {.perm = {0, 2, 1, 3}});
    };
    Value *q = heads(q_proj->forward(op, x)), *k = heads(k_proj->forward(op, x)), *v = heads(v_proj->forward(op, x));
    Value* context;
    if (z_.landmarks == z_.segment_means_seq_len) {
      const float scale = 1.0f / std::sqrt(static_cast<float>(z_.head_dim));
      context = op.Attention(q, k, v, ctx.mask, nullptr, nullptr, {.scale = scale}).y;
      b.producer(context).tags = {.num_heads = z_.heads, .kv_num_heads = z_.heads, .head_size = z_.head_dim};
    } else {
      context = landmark_attention(op, q, k, v, ctx.mask);
    }
    context = op.Add(context, op.Conv(v, conv->value(op), nullptr,
                                      {.pads = {z_.kernel / 2, 0, z_.kernel / 2, 0}, .group = z_.heads}));
    Value* y = op.Reshape(op.Transpose(context, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
    return {o_proj->forward(op, y), nullptr, nullptr};
  }

  Parameter* conv;  // [heads, 1, K, 1]

 private:
  // q, k, v [batch, h, seq, d] (q and k unscaled), mask [batch, 1, seq, seq] -> [batch, h, seq, d]
  Value* landmark_attention(Ops& op, Value* q, Value* k, Value* v, Value* mask) const {
    auto s = op.builder().scope("landmarks");
    const double scale = 1.0 / std::sqrt(std::sqrt(static_cast<double>(z_.head_dim)));
    q = op.Mul(q, scale);
    k = op.Mul(k, scale);
    auto means = [&](Value* t) {  // [-1, h, L, d]
      Value* segments = op.Reshape(t, {-1, z_.heads, z_.landmarks, z_.segment_means_seq_len / z_.landmarks, z_.head_dim});
      return op.ReduceMean(segments, {3}, {.keepdims = 0});
    };
    Value* k_landmarks_t = op.Transpose(means(k), {.perm = {0, 1, 3, 2}});
    Value* q_landmarks = means(q);
    Value* kernel_1 = op.Softmax(op.MatMul(q, k_landmarks_t), {.axis = -1});
    Value* kernel_2 = op.Softmax(op.MatMul(q_landmarks, k_landmarks_t), {.axis = -1});
    Value* key_mask = op.Slice(mask, {0}, {1}, {2});  // [batch, 1, 1, seq]
    Value* scores = op.Add(op.MatMul(q_landmarks, op.Transpose(k, {.perm = {0, 1, 3, 2}})), key_mask);
    Value* kernel_3 = op.Softmax(scores, {.axis = -1});
    return op.MatMul(op.MatMul(kernel_1, iterative_inv(op, kernel_2)), op.MatMul(kernel_3, v));
  }

  // iterative_inv (init_option "original", n_iter 6): x [-1, h, L, L] -> its approximate pseudo-inverse.
  Value* iterative_inv(Ops& op, Value* x) const {
    auto s = op.builder().scope("iterative_inv");
    const int64_t n = z_.landmarks;
    std::vector<float> eye(static_cast<size_t>(n * n), 0.0f);
    for (int64_t i = 0; i < n; ++i) eye[static_cast<size_t>(i * n + i)] = 1.0f;
    Value* identity = op.builder().constant_float(eye, {n, n}, dtype_);
    Value* column_sums = op.ReduceSum(x, {-2}, {.keepdims = 0});
    Value* z = op.Div(op.Transpose(x, {.perm = {0, 1, 3, 2}}), op.ReduceMax(column_sums, {}, {.keepdims = 0}));
    for (int i = 0; i < 6; ++i) {
      Value* xz = op.MatMul(x, z);
      Value* inner = op.Sub(op.Mul(identity, 7.0), xz);
      inner = op.Sub(op.Mul(identity, 15.0), op.MatMul(xz, inner));
      inner = op.Sub(op.Mul(identity, 13.0), op.MatMul(xz, inner));
      z = op.MatMul(op.Mul(z, 0.25), inner);
    }
    return z;
  }

  NystromformerSizes z_;
  DataType dtype_;
};

}  // namespace

std::unique_ptr<Architecture> create_nystromformer(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "nystromformer", "NystromformerModel");
  s.max_position_embeddings += 2;
  s.position_offset = 2;
  if (c.bool_or("inv_coeff_init_option", false))
    c.fail("inv_coeff_init_option", "transformers 5.23 cannot build it (it reads config[\"inv_init_coeff_option\"])");
  const NystromformerSizes z{.heads = s.attention.num_attention_heads, .head_dim = s.attention.head_dim,
                             .landmarks = c.int_or("num_landmarks", 64),
                             .segment_means_seq_len = c.int_or("segment_means_seq_len", 64),
                             .kernel = c.int_or("conv_kernel_size", 65)};
  if (z.segment_means_seq_len < 1 || z.segment_means_seq_len > kMaxPositions)
    c.fail("segment_means_seq_len", "expected 1 .. " + std::to_string(kMaxPositions));
  if (z.landmarks < 1 || z.landmarks > kMaxSmallSize || z.segment_means_seq_len % z.landmarks != 0)
    c.fail("num_landmarks", "must divide segment_means_seq_len " + std::to_string(z.segment_means_seq_len) +
                                " (the landmarks are means over equal segments)");
  if (z.kernel < 1 || z.kernel > kMaxSmallSize || z.kernel % 2 == 0)
    c.fail("conv_kernel_size", "expected an odd kernel up to " + std::to_string(kMaxSmallSize) +
                                   " (an even one pads the sequence one longer)");
  s.heads->sequence_classification = {"classifier.dense", s.hidden_act, "classifier.out_proj"};
  s.heads->multiple_choice = {"pre_classifier", "relu", "classifier"};
  EncoderParts parts{.make_layer = [z](const EncoderSpec& spec, int64_t) {
    return std::make_unique<EncoderLayer>(spec, std::make_unique<NystromformerAttention>(spec.attention, z));
  }};
  return std::make_unique<PostNormEncoder>(s, std::move(parts));
}

}  // namespace mobius
