// YOSO (transformers/models/yoso/modeling_yoso.py, configuration_yoso.py; YosoModel): BERT's
// post-norm layers (blocks/encoder.h PostNormEncoder, archs/bert.h bert_spec, base_model_prefix
// "yoso", one token type by default), positions 2..seq+1 into a table of max_position_embeddings + 2
// rows, and its own self-attention (YosoSelfAttention, attention.self) over BERT's projections, the
// use_expectation path (YosoCumulation): with h heads of d, n = hash_code_len, q k v [batch, h, seq, d],
// unit(t) = t / max(|t|_2, 1e-12) over d:
//   expectation  (1 - acos(unit(q).unit(k)) / pi)^n      [batch, h, seq, seq] (the collision
//                probability of n random hyperplanes, in closed form)
//   context      unit(expectation v) [+ conv(v * attention_mask)]
// where conv (conv_window set) is a depthwise Conv2d per head, kernel (conv_window, 1), zero padding
// conv_window // 2, over the sequence of each of the d features. Padding keys are not masked in the
// expectation: transformers' query / key masks there are int(1 + attention_mask / 10000), 1 for every
// token; attention_mask zeroes the padding tokens' values only before the conv.
// use_expectation false is refused: its LSH cumulation hashes with random projections
// (torch.randn per call) in CUDA kernels (kernels-community/yoso), not a function of the inputs.
// Heads (Yoso<Task>): BERT's cls.predictions (tied); classifier.dense + hidden_act +
// classifier.out_proj; multiple choice pre_classifier + relu + classifier; classifier; qa_outputs.
#include <memory>
#include <numbers>
#include <optional>
#include <string>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/attention.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

struct YosoSizes {
  int64_t heads, head_dim, hash_code_len;
  std::optional<int64_t> conv_window;
};

// t / max(|t|_2, 1e-12) over the last axis (torch's nn.functional.normalize).
Value* yoso_unit(Ops& op, Value* t) {
  return op.Div(t, op.Max(op.Sqrt(op.ReduceSum(op.Mul(t, t), {-1})), 1e-12));
}

// YosoSelfAttention with attention.output.dense: x [batch, seq, hidden] -> [batch, seq, hidden];
// ctx.mask [batch, 1, seq, seq] from padding_mask() (read for the conv's token mask only).
class YosoAttention : public Attention {
 public:
  YosoAttention(const AttentionOptions& o, const YosoSizes& z) : Attention(o), z_(z), dtype_(o.dtype) {
    if (z.conv_window) conv = param("self.conv.weight", {z.heads, 1, *z.conv_window, 1}, o.dtype);
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
    Value* cosine = op.MatMul(yoso_unit(op, q), op.Transpose(yoso_unit(op, k), {.perm = {0, 1, 3, 2}}));
    Value* angle = b.add_node("Acos", {cosine}, {}, {dtype_})[0];
    Value* expectation = op.Pow(op.Sub(1.0, op.Div(angle, std::numbers::pi)), static_cast<double>(z_.hash_code_len));
    Value* context = yoso_unit(op, op.MatMul(expectation, v));
    if (conv) {
      // the tokens (additive mask 0) of the key axis, as [batch, 1, seq, 1]
      Value* tokens = op.Cast(op.Equal(op.Slice(ctx.mask, {0}, {1}, {2}), 0.0), {.to = dtype_});
      Value* masked = op.Mul(v, op.Transpose(tokens, {.perm = {0, 1, 3, 2}}));
      const int64_t pad = *z_.conv_window / 2;
      context = op.Add(context, op.Conv(masked, conv->value(op), nullptr, {.pads = {pad, 0, pad, 0}, .group = z_.heads}));
    }
    Value* y = op.Reshape(op.Transpose(context, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
    return {o_proj->forward(op, y), nullptr, nullptr};
  }

  Parameter* conv = nullptr;  // [heads, 1, conv_window, 1]

 private:
  YosoSizes z_;
  DataType dtype_;
};

}  // namespace

std::unique_ptr<Architecture> create_yoso(const HfConfig& c, DataType dtype) {
  if (!c.bool_or("use_expectation", true))
    c.fail("use_expectation", "only the expectation path: the LSH path hashes with random projections in CUDA "
                              "kernels (kernels-community/yoso), not a function of the inputs");
  EncoderSpec s = bert_spec(c, dtype, "yoso", "YosoModel");
  s.max_position_embeddings += 2;
  s.position_offset = 2;
  YosoSizes z{.heads = s.attention.num_attention_heads, .head_dim = s.attention.head_dim,
              .hash_code_len = c.int_or("hash_code_len", 9), .conv_window = c.opt_int("conv_window")};
  if (z.hash_code_len < 1 || z.hash_code_len > kMaxSmallSize)
    c.fail("hash_code_len", "expected 1 .. " + std::to_string(kMaxSmallSize));
  if (z.conv_window && (*z.conv_window < 1 || *z.conv_window > kMaxSmallSize || *z.conv_window % 2 == 0))
    c.fail("conv_window", "expected an odd window up to " + std::to_string(kMaxSmallSize) +
                              " (an even one pads the sequence one longer)");
  s.heads->sequence_classification = {"classifier.dense", s.hidden_act, "classifier.out_proj"};
  s.heads->multiple_choice = {"pre_classifier", "relu", "classifier"};
  EncoderParts parts{.make_layer = [z](const EncoderSpec& spec, int64_t) {
    return std::make_unique<EncoderLayer>(spec, std::make_unique<YosoAttention>(spec.attention, z));
  }};
  return std::make_unique<PostNormEncoder>(s, std::move(parts));
}

}  // namespace mobius
