// WavLM (transformers/models/wavlm/modular_wavlm.py): the wav2vec2 skeleton (archs/wav2vec2.h:
// conv feature encoder, feature projection, weight-norm position conv, post- or pre-norm layers
// by do_stable_layer_norm, lm_head for WavLMForCTC) with WavLMAttention, gated relative position
// attention:
//   position_bias [heads, q, k] = rel_attn_embed(bucket(k - q)): layer 0's
//     nn.Embedding(num_buckets, heads), T5's bidirectional buckets up to max_bucket_distance
//     (blocks/relative_position_bias.h), computed once and shared by every layer (the later
//     layers have no rel_attn_embed)
//   per layer, from its attention input x [batch, frames, hidden] viewed as [batch, heads,
//   frames, head_dim]:
//     r = sigmoid(sum over 4 of gru_rel_pos_linear(x) viewed [..., 2, 4])    [batch, heads, frames, 2]
//     gate = r[..., 0] * (r[..., 1] * gru_rel_pos_const - 1) + 2               [batch, heads, frames, 1]
//     scores = q.k / sqrt(head_dim) + gate * position_bias (+ the padding mask)
//   with q/k/v/out_proj as Wav2Vec2Attention (torch's multi_head_attention_forward).
#include "archs/archs.h"
#include "archs/wav2vec2.h"
#include "blocks/relative_position_bias.h"

namespace mobius {
namespace {

struct WavLMAttentionOptions {
  AudioEncoderOptions encoder;
  int64_t num_buckets;    // config num_buckets
  int64_t max_distance;   // config max_bucket_distance
  bool has_relative_position_bias;  // layer 0
};

class WavLMAttention : public AudioAttention {
 public:
  explicit WavLMAttention(const WavLMAttentionOptions& o)
      : heads_(o.encoder.num_attention_heads), head_dim_(o.encoder.hidden_size / o.encoder.num_attention_heads) {
    attention = child<Wav2Vec2Attention>("", o.encoder);
    gru_rel_pos_const = param("gru_rel_pos_const", {1, heads_, 1, 1}, o.encoder.dtype);
    gru_rel_pos_linear = child<Linear>("gru_rel_pos_linear", LinearOptions{head_dim_, 8, true, o.encoder.dtype});
    if (o.has_relative_position_bias)
      rel_attn_embed = child<RelativePositionBias>(
          "rel_attn_embed", RelativePositionBiasOptions{.num_buckets = o.num_buckets,
                                                        .max_distance = o.max_distance,
                                                        .num_heads = heads_,
                                                        .bidirectional = true,
                                                        .dtype = o.encoder.dtype});
  }

  Value* position_bias(Ops& op, Value* x) const override {
    if (!rel_attn_embed) return nullptr;
    Value* frames = op.Shape(x, {.start = 1, .end = 2});
    return rel_attn_embed->forward(op, op.builder().ints({0}), frames, frames);  // [1, heads, frames, frames]
  }

  Value* forward(Ops& op, Value* x, const AudioAttentionContext& ctx) const override {
    auto s = enter(op);
    Value* heads = op.Transpose(op.Reshape(x, {0, 0, heads_, head_dim_}), {.perm = {0, 2, 1, 3}});
    Value* r = gru_rel_pos_linear->forward(op, heads);  // [batch, heads, frames, 8]
    r = op.Sigmoid(op.ReduceSum(op.Reshape(r, {0, 0, 0, 2, 4}), {-1}, {.keepdims = 0}));
    Value* gate_a = op.Slice(r, {0}, {1}, {-1});
    Value* gate_b = op.Slice(r, {1}, {2}, {-1});
    Value* gate = op.Add(op.Mul(gate_a, op.Sub(op.Mul(gate_b, gru_rel_pos_const->value(op)), 1.0)), 2.0);
    Value* bias = op.Mul(gate, ctx.position_bias);  // [batch, heads, frames, frames]
    AudioAttentionContext inner{.mask = ctx.mask ? op.Add(ctx.mask, bias) : bias};
    return attention->forward(op, x, inner);
  }

  Wav2Vec2Attention* attention;  // at this module's path: q/k/v/out_proj
  Parameter* gru_rel_pos_const;  // [1, heads, 1, 1]
  Linear* gru_rel_pos_linear;    // head_dim -> 8
  RelativePositionBias* rel_attn_embed = nullptr;

 private:
  int64_t heads_, head_dim_;
};

}  // namespace

std::unique_ptr<Architecture> create_wavlm(const HfConfig& c, DataType dtype) {
  Wav2Vec2Sizes s = wav2vec2_sizes(c, dtype, "wavlm");
  const int64_t num_buckets = c.int_or("num_buckets", 320);
  const int64_t max_distance = c.int_or("max_bucket_distance", 800);
  // bidirectional buckets: num_buckets / 4 exact distances, the log range above them up to max_distance
  if (num_buckets < 4 || num_buckets > kMaxPositions) c.fail("num_buckets", "expected a value in [4, 2^24]");
  if (max_distance <= num_buckets / 4 || max_distance > kMaxPositions)
    c.fail("max_bucket_distance", "must be above num_buckets / 4 (and at most 2^24)");
  auto attention = [&](int64_t layer) {
    return std::make_unique<WavLMAttention>(WavLMAttentionOptions{s.encoder, num_buckets, max_distance, layer == 0});
  };
  return make_wav2vec2_family(s, std::make_unique<AudioTransformerEncoder>(
                                     s.encoder, std::make_unique<WeightNormConvEmbedding>(s.pos_conv), attention));
}

}  // namespace mobius
