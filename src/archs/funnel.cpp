// Funnel Transformer (transformers/models/funnel/modeling_funnel.py, configuration_funnel.py):
// FunnelModel (encoder and upsampling decoder) or FunnelBaseModel (the encoder alone), as
// config.json's architectures names it. Fields d_model / n_head / d_head / d_inner (hidden_size,
// num_attention_heads: FunnelConfig.attribute_map), block_sizes (default [4, 4, 4]),
// block_repeats (default one each), num_decoder_layers, pooling_type, attention_type,
// separate_cls, truncate_seq, pool_q_only.
//   embeddings  LayerNorm(word_embeddings(input_ids))                      (no positions)
//   encoder     block b of block_sizes[b] layers (each run block_repeats[b] times); from block 1
//               on the block's first layer reads the sequence pooled by 2 as its queries (keys
//               and values too with pool_q_only false) and every later layer the pooled one:
//               mean / max over pairs, the cls token kept apart (separate_cls) and the last token
//               dropped first (truncate_seq); the attention inputs pooled alike (stride_pool,
//               the attention mask by min)
//   layer       h = LayerNorm(query + post_proj(softmax(content + position + segment - 1e6 (1 - mask)) v))
//               out = LayerNorm(h + linear_2(act(linear_1(h))))
//               content[i, j]  = s (q_i + r_w_bias) . k_j                  (s = 1 / sqrt(d_head))
//               position       relative_shift: s (q_i + r_r_bias) . (r_kernel R) of the sin | cos
//                              encodings of the block's distances, shifted (_relative_shift_gather);
//                              factorized: the phi / pi / psi / omega products of positions 0..seq-1
//               segment[i, j]  = s (q_i + r_s_bias) . seg_embed[same segment(i, j)], where token
//                              type 2 (<cls>) is in both segments
//               position and segment are zeroed on the cls row and column (separate_cls)
//   decoder     (FunnelModel) the last block's states repeated 2^(blocks - 1) times (cls apart),
//               plus the state after the first block_sizes[0] layer runs, through
//               num_decoder_layers full-length layers
// The graph pools at every block from 1 on: transformers skips a block's pooling when the
// sequence is already 2 tokens or shorter (1 without separate_cls), which the graph does not: a
// sequence of at least 2^(blocks - 1) + 1 tokens (5 with the default 3 blocks) has equal outputs.
// The output of FunnelBaseModel (feature-extraction of its checkpoints, the classification heads)
// is as long as the last block's pooled sequence (sequence_length / 2^(blocks - 1) or so).
// Heads (Funnel<Task>, base_model_prefix "funnel"): fill-mask lm_head (tied to the word
// embeddings, its own bias); text-classification and multiple-choice FunnelClassificationHead
// (classifier.linear_hidden, tanh, classifier.linear_out) of FunnelBaseModel's first state;
// token-classification classifier and question-answering qa_outputs of FunnelModel's states.
// FunnelForPreTraining (the ELECTRA-style discriminator) builds as its FunnelModel.
// Not followed: with pad_token_id set in config.json (the released configs set none, FunnelConfig's
// default is None), transformers zeroes word_embeddings row pad_token_id when it loads a checkpoint
// (FunnelPreTrainedModel._init_weights' FunnelEmbeddings branch runs on the loaded weights, the tied
// lm_head's too); mobius reads the row as saved.
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "registry/config_defaults.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"

namespace mobius {
namespace {

struct FunnelSizes {
  int64_t vocab_size, d_model, n_head, d_head, d_inner;
  std::vector<int64_t> block_sizes, block_repeats;
  int64_t num_decoder_layers;  // 0: FunnelBaseModel, no decoder
  std::string act;
  float eps;
  bool max_pooling, factorized, separate_cls, truncate_seq, pool_q_only;
  DataType dtype;
};

// FunnelAttentionStructure's attention_inputs as they evolve through the blocks.
struct FunnelAttentionInputs {
  // relative_shift: the encodings [rows, d_model] of block b's distances, between its pooled
  // positions (shift 1: no_pooling[b]) and from them to the previous block's (shift 2: pooling[b])
  std::vector<Value*> no_pooling, pooling;
  // factorized: phi, pi (query positions), psi, omega (key positions), [positions, d_model]
  Value *phi = nullptr, *pi = nullptr, *psi = nullptr, *omega = nullptr;
  Value* token_type_mat;        // bool [batch, queries, keys]: in the same segment
  Value* attention_mask;        // [batch, keys], the model dtype: 1 token, 0 padding
  Value* cls_mask = nullptr;    // [queries, keys], the model dtype: 0 on the cls row and column
};

// FunnelAttentionStructure.stride_pool along `axis`: every other entry, the first one (cls) kept
// apart and the last one dropped (separate_cls, truncate_seq).
Value* funnel_stride_pool(Ops& op, const FunnelSizes& z, Value* t, int64_t axis) {
  GraphBuilder& b = op.builder();
  if (z.separate_cls) t = op.Concat({op.Slice(t, {0}, {1}, {axis}), t}, {.axis = axis});
  return op.Slice(t, b.ints({0}), b.ints({z.separate_cls && z.truncate_seq ? -1 : INT64_MAX}), b.ints({axis}),
                  b.ints({2}));
}

// FunnelAttentionStructure.pool_tensor over axis 1 of t [batch, seq(, d)] (ceil_mode: a last
// single entry pools to itself): mean, max, or min (the attention mask's).
enum class FunnelPool { mean, max, min };
Value* funnel_pool(Ops& op, const FunnelSizes& z, Value* t, FunnelPool mode) {
  GraphBuilder& b = op.builder();
  if (z.separate_cls)
    t = op.Concat({op.Slice(t, {0}, {1}, {1}), z.truncate_seq ? op.Slice(t, {0}, {-1}, {1}) : t}, {.axis = 1});
  Value* even = op.Slice(t, b.ints({0}), b.ints({INT64_MAX}), b.ints({1}), b.ints({2}));
  Value* padded = op.Concat({t, op.Slice(t, {-1}, {INT64_MAX}, {1})}, {.axis = 1});  // the last entry again
  Value* odd = op.Slice(padded, b.ints({1}), b.ints({INT64_MAX}), b.ints({1}), b.ints({2}));
  if (mode == FunnelPool::max) return op.Max(even, odd);
  if (mode == FunnelPool::min) return op.Min(even, odd);
  return op.Mul(op.Add(even, odd), 0.5);
}

// The angles [rows, d_model / 2] of int64 positions or distances [rows] at the frequencies
// 1 / 10000^(k / (d_model / 2)) (get_position_embeds), float32.
Value* funnel_angles(Ops& op, const FunnelSizes& z, Value* positions) {
  const int64_t half = z.d_model / 2;
  std::vector<float> inv_freq;
  for (int64_t k = 0; k < half; ++k)
    inv_freq.push_back(static_cast<float>(1.0 / std::pow(10000.0, static_cast<double>(k) / static_cast<double>(half))));
  return op.Mul(op.Unsqueeze(op.Cast(positions, {.to = DataType::FLOAT}), {1}),
                op.builder().constant_f32(inv_freq, {half}));
}

// The concatenation of float32 parts, in the model dtype.
Value* funnel_concat(Ops& op, const FunnelSizes& z, std::vector<Value*> parts) {
  Value* out = op.Concat(std::move(parts), {.axis = -1});
  return z.dtype == DataType::FLOAT ? out : op.Cast(out, {.to = z.dtype});
}

// The sin | cos encodings [rows, d_model] of int64 distances [rows] (relative_shift's pos_embed rows).
Value* funnel_sinusoid(Ops& op, const FunnelSizes& z, Value* distances) {
  Value* angles = funnel_angles(op, z, distances);
  return funnel_concat(op, z, {op.Sin(angles), op.Cos(angles)});
}

// FunnelAttentionStructure.stride_pool_pos: the positions of block b from those of block b - 1
// (int64 [n]); the cls token at 1 - 2^b.
Value* funnel_pool_positions(Ops& op, const FunnelSizes& z, Value* pos, int64_t block) {
  GraphBuilder& b = op.builder();
  if (!z.separate_cls) return op.Slice(pos, b.ints({0}), b.ints({INT64_MAX}), b.ints({0}), b.ints({2}));
  Value* rest = op.Slice(pos, b.ints({1}), b.ints({z.truncate_seq ? -1 : INT64_MAX}), b.ints({0}), b.ints({2}));
  return op.Concat({b.ints({1 - (int64_t{1} << block)}), rest}, {.axis = 0});
}

// FunnelAttentionStructure.relative_pos: the distances max_dist, max_dist - stride, ... down to
// above min_dist - 1 (int64 [rows]) between `pos` and `pooled` (int64 [n]).
Value* funnel_relative_pos(Ops& op, Value* pos, int64_t stride, Value* pooled, int64_t shift) {
  GraphBuilder& b = op.builder();
  Value* first = op.Gather(pooled, b.scalar_i64(0));
  Value* ref_point = op.Sub(first, op.Gather(pos, b.scalar_i64(0)));
  Value* count = op.Squeeze(op.Shape(pooled), {0});
  Value* max_dist = op.Add(ref_point, op.Mul(count, static_cast<double>(shift * stride)));
  Value* min_dist = op.Sub(first, op.Gather(pos, b.scalar_i64(-1)));
  return op.Range(max_dist, op.Sub(min_dist, 1.0), b.scalar_i64(-stride));
}

// FunnelRelMultiheadAttention and FunnelPositionwiseFFN: query [batch, queries, d_model], kv
// [batch, keys, d_model] -> [batch, queries, d_model].
class FunnelLayer : public Module {
 public:
  FunnelLayer(const FunnelSizes& z, int64_t block) : z_(z), block_(block) {
    const int64_t inner = z.n_head * z.d_head;
    q_head = child<Linear>("attention.q_head", LinearOptions{z.d_model, inner, false, z.dtype});
    k_head = child<Linear>("attention.k_head", LinearOptions{z.d_model, inner, true, z.dtype});
    v_head = child<Linear>("attention.v_head", LinearOptions{z.d_model, inner, true, z.dtype});
    r_w_bias = param("attention.r_w_bias", {z.n_head, z.d_head}, z.dtype);
    r_r_bias = param("attention.r_r_bias", {z.n_head, z.d_head}, z.dtype);
    r_kernel = param("attention.r_kernel", {z.d_model, z.n_head, z.d_head}, z.dtype);
    r_s_bias = param("attention.r_s_bias", {z.n_head, z.d_head}, z.dtype);
    seg_embed = param("attention.seg_embed", {2, z.n_head, z.d_head}, z.dtype);
    post_proj = child<Linear>("attention.post_proj", LinearOptions{inner, z.d_model, true, z.dtype});
    const NormOptions norm{.dim = z.d_model, .eps = z.eps, .dtype = z.dtype};
    attention_norm = child<LayerNorm>("attention.layer_norm", norm);
    linear_1 = child<Linear>("ffn.linear_1", LinearOptions{z.d_model, z.d_inner, true, z.dtype});
    linear_2 = child<Linear>("ffn.linear_2", LinearOptions{z.d_inner, z.d_model, true, z.dtype});
    ffn_norm = child<LayerNorm>("ffn.layer_norm", norm);
  }

  Value* forward(Ops& op, Value* query, Value* kv, const FunnelAttentionInputs& in) const {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    const int64_t n = z_.n_head, d = z_.d_head;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    auto heads = [&](Value* y) {  // [b, len, n * d] -> [b, n, len, d]
      return op.Transpose(op.Reshape(y, {0, 0, n, d}), {.perm = {0, 2, 1, 3}});
    };
    auto bias = [&](const Parameter* p) { return op.Reshape(p->value(op), {n, 1, d}); };
    Value* q = heads(q_head->forward(op, query));
    Value* k = heads(k_head->forward(op, kv));
    Value* v = heads(v_head->forward(op, kv));
    Value* queries = op.Shape(query, {.start = 1, .end = 2});
    Value* keys = op.Shape(kv, {.start = 1, .end = 2});
    Value* kernel = op.Reshape(r_kernel->value(op), {z_.d_model, n * d});
    Value* qr = op.Mul(op.Add(q, bias(r_r_bias)), scale);  // [b, n, queries, d]
    Value* position;
    if (z_.factorized) {
      // q_r_attention [b, n, queries, d_model] = qr . r_kernel per head
      Value* w = op.Transpose(op.Reshape(r_kernel->value(op), {z_.d_model, n, d}), {.perm = {1, 2, 0}});
      Value* qw = op.MatMul(qr, w);
      auto by = [&](Value* query_pos, Value* key_pos) {
        return op.MatMul(op.Mul(qw, query_pos), op.Transpose(key_pos, {.perm = {1, 0}}));
      };
      position = op.Add(by(in.phi, in.psi), by(in.pi, in.omega));
    } else {
      // pooled queries over unpooled keys: shift 2 (pool_q_only's first layer of a block)
      const bool pooled = query != kv;
      const int64_t shift = pooled ? 2 : 1;
      Value* r = pooled ? in.pooling[block_] : in.no_pooling[block_];
      Value* r_head = op.Transpose(op.Reshape(op.MatMul(r, kernel), {0, n, d}), {.perm = {1, 2, 0}});  // [n, d, rows]
      Value* all = op.MatMul(qr, r_head);  // [b, n, queries, rows]
      // _relative_shift_gather: [b, n, rows, queries] without its first `shift` rows, read back as
      // [b, n, queries, rows - shift], the first `keys` columns
      Value* t = op.Reshape(all, op.Concat({b.ints({0, 0, -1}), queries}, {.axis = 0}));
      t = op.Slice(t, {shift}, {INT64_MAX}, {2});
      t = op.Reshape(t, op.Concat({b.ints({0, 0}), queries, b.ints({-1})}, {.axis = 0}));
      position = op.Slice(t, b.ints({0}), keys, b.ints({3}));
    }
    // segments: [b, n, queries, 2] against seg_embed's (different, same), chosen per pair
    Value* seg = op.MatMul(op.Mul(op.Add(q, bias(r_s_bias)), scale),
                           op.Transpose(seg_embed->value(op), {.perm = {1, 2, 0}}));
    Value* segment = op.Where(op.Unsqueeze(in.token_type_mat, {1}), op.Slice(seg, {1}, {2}, {-1}),
                              op.Slice(seg, {0}, {1}, {-1}));
    Value* relative = op.Add(position, segment);
    if (in.cls_mask) relative = op.Mul(relative, in.cls_mask);
    Value* padding = op.Mul(op.Sub(1.0, op.Unsqueeze(in.attention_mask, {1, 2})), -1e6);  // [b, 1, 1, keys]
    AttentionOutputs a = op.Attention(op.Add(q, bias(r_w_bias)), k, v, op.Add(relative, padding), nullptr, nullptr,
                                      {.scale = static_cast<float>(scale)});
    // the head counts and size the multi_head_attention pass (--ep cpu) reads
    b.producer(a.y).tags = {.num_heads = n, .kv_num_heads = n, .head_size = d};
    Value* attn = op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, n * d});
    Value* h = attention_norm->forward(op, op.Add(query, post_proj->forward(op, attn)));
    Value* f = linear_2->forward(op, activation(op, z_.act, linear_1->forward(op, h)));
    return ffn_norm->forward(op, op.Add(h, f));
  }

  Linear *q_head, *k_head, *v_head, *post_proj, *linear_1, *linear_2;
  Parameter *r_w_bias, *r_r_bias, *r_kernel, *r_s_bias, *seg_embed;
  LayerNorm *attention_norm, *ffn_norm;

 private:
  FunnelSizes z_;
  int64_t block_;  // the block whose relative_shift encodings the layer reads (the decoder's: 0)
};

// FunnelModel's / FunnelBaseModel's last_hidden_state under the feature-extraction task.
class FunnelEncoder : public Encoder {
 public:
  FunnelEncoder(const FunnelSizes& z, TextHeadLayout heads) : z_(z), heads_(std::move(heads)) {
    word_embeddings_ = child<Embedding>("embeddings.word_embeddings", z.vocab_size, z.d_model, z.dtype);
    embeddings_norm = child<LayerNorm>("embeddings.layer_norm", NormOptions{.dim = z.d_model, .eps = z.eps, .dtype = z.dtype});
    for (size_t blk = 0; blk < z.block_sizes.size(); ++blk) {
      blocks.emplace_back();
      for (int64_t i = 0; i < z.block_sizes[blk]; ++i)
        blocks.back().push_back(child<FunnelLayer>("encoder.blocks." + std::to_string(blk) + "." + std::to_string(i),
                                                   z, static_cast<int64_t>(blk)));
    }
    for (int64_t i = 0; i < z.num_decoder_layers; ++i)
      decoder.push_back(child<FunnelLayer>("decoder.layers." + std::to_string(i), z, 0));
  }
  DataType dtype() const override { return z_.dtype; }
  int64_t hidden_size() const override { return z_.d_model; }
  bool has_token_type_ids() const override { return true; }
  const TextHeadLayout* head_layout() const override { return &heads_; }
  const Embedding* word_embeddings() const override { return word_embeddings_; }
  std::string output_length() const override { return decoder.empty() ? "pooled_length" : "sequence_length"; }

  Value* forward(Ops& op, const EncoderInputs& in) const override {
    const FunnelAttentionInputs start = attention_inputs(op, in);
    FunnelAttentionInputs inputs = start;
    Value* hidden = embeddings_norm->forward(op, word_embeddings_->forward(op, in.input_ids));
    Value* first_block = nullptr;  // FunnelModel: hidden_states[block_sizes[0]]
    int64_t runs = 0;
    for (size_t blk = 0; blk < blocks.size(); ++blk) {
      const bool pooling = blk > 0;
      Value* pooled = nullptr;
      if (pooling) {  // pre_attention_pooling
        if (z_.factorized) {
          inputs.phi = funnel_stride_pool(op, z_, inputs.phi, 0);
          inputs.pi = funnel_stride_pool(op, z_, inputs.pi, 0);
          if (!z_.pool_q_only) {
            inputs.psi = funnel_stride_pool(op, z_, inputs.psi, 0);
            inputs.omega = funnel_stride_pool(op, z_, inputs.omega, 0);
          }
        }
        inputs.token_type_mat = funnel_stride_pool(op, z_, inputs.token_type_mat, 1);
        if (inputs.cls_mask) inputs.cls_mask = funnel_stride_pool(op, z_, inputs.cls_mask, 0);
        if (!z_.pool_q_only) {
          inputs.token_type_mat = funnel_stride_pool(op, z_, inputs.token_type_mat, 2);
          if (inputs.cls_mask) inputs.cls_mask = funnel_stride_pool(op, z_, inputs.cls_mask, 1);
          inputs.attention_mask = funnel_pool(op, z_, inputs.attention_mask, FunnelPool::min);
        }
        pooled = funnel_pool(op, z_, hidden, z_.max_pooling ? FunnelPool::max : FunnelPool::mean);
      }
      for (size_t i = 0; i < blocks[blk].size(); ++i) {
        for (int64_t repeat = 0; repeat < z_.block_repeats[blk]; ++repeat) {
          const bool do_pooling = pooling && i == 0 && repeat == 0;
          if (do_pooling)
            hidden = blocks[blk][i]->forward(op, pooled, z_.pool_q_only ? hidden : pooled, inputs);
          else
            hidden = blocks[blk][i]->forward(op, hidden, hidden, inputs);
          if (do_pooling && z_.pool_q_only) {  // post_attention_pooling
            if (z_.factorized) {
              inputs.psi = funnel_stride_pool(op, z_, inputs.psi, 0);
              inputs.omega = funnel_stride_pool(op, z_, inputs.omega, 0);
            }
            inputs.token_type_mat = funnel_stride_pool(op, z_, inputs.token_type_mat, 2);
            if (inputs.cls_mask) inputs.cls_mask = funnel_stride_pool(op, z_, inputs.cls_mask, 1);
            inputs.attention_mask = funnel_pool(op, z_, inputs.attention_mask, FunnelPool::min);
          }
          if (++runs == z_.block_sizes[0]) first_block = hidden;
        }
      }
    }
    if (decoder.empty()) return hidden;
    hidden = op.Add(upsample(op, hidden, op.Shape(in.input_ids, {.start = 1, .end = 2})), first_block);
    for (const FunnelLayer* layer : decoder) hidden = layer->forward(op, hidden, hidden, start);
    return hidden;
  }

  Embedding* word_embeddings_;
  LayerNorm* embeddings_norm;
  std::vector<std::vector<FunnelLayer*>> blocks;
  std::vector<FunnelLayer*> decoder;

 private:
  // FunnelAttentionStructure.init_attention_inputs, with the relative_shift encodings of every
  // block (get_position_embeds).
  FunnelAttentionInputs attention_inputs(Ops& op, const EncoderInputs& in) const {
    GraphBuilder& b = op.builder();
    FunnelAttentionInputs r;
    Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
    Value* pos = op.Range(b.scalar_i64(0), seq, b.scalar_i64(1));
    if (z_.factorized) {
      Value* angles = funnel_angles(op, z_, pos);
      Value* sin = op.Sin(angles);
      Value* cos = op.Cos(angles);
      r.phi = funnel_concat(op, z_, {sin, sin});
      r.psi = funnel_concat(op, z_, {cos, sin});
      r.pi = funnel_concat(op, z_, {cos, cos});
      r.omega = funnel_concat(op, z_, {op.Neg(sin), cos});
    } else {
      for (size_t blk = 0; blk < z_.block_sizes.size(); ++blk) {
        const int64_t block = static_cast<int64_t>(blk);
        if (block == 0) {
          r.pooling.push_back(nullptr);
        } else {
          Value* pooled = funnel_pool_positions(op, z_, pos, block);
          r.pooling.push_back(funnel_sinusoid(op, z_, funnel_relative_pos(op, pos, int64_t{1} << (block - 1), pooled, 2)));
          pos = pooled;
        }
        r.no_pooling.push_back(funnel_sinusoid(op, z_, funnel_relative_pos(op, pos, int64_t{1} << block, pos, 1)));
      }
    }
    // token_type_ids_to_mat: the same segment, or either token a <cls> (type 2)
    Value* types = in.token_type_ids;
    Value* same = op.Equal(op.Unsqueeze(types, {2}), op.Unsqueeze(types, {1}));
    Value* cls = op.Equal(types, 2.0);
    r.token_type_mat = op.Or(op.Or(op.Unsqueeze(cls, {2}), op.Unsqueeze(cls, {1})), same);
    r.attention_mask = op.Cast(in.attention_mask, {.to = z_.dtype});
    if (z_.separate_cls) {
      Value* not_first = op.Cast(op.Greater(op.Range(b.scalar_i64(0), seq, b.scalar_i64(1)), 0.0), {.to = z_.dtype});
      r.cls_mask = op.Mul(op.Unsqueeze(not_first, {1}), op.Unsqueeze(not_first, {0}));
    }
    return r;
  }

  // upsample: x [batch, pooled, d_model] back to `target` (int64 [1]) tokens, each repeated
  // 2^(blocks - 1) times (the cls token apart, the truncated last one zero).
  Value* upsample(Ops& op, Value* x, Value* target) const {
    GraphBuilder& b = op.builder();
    const int64_t stride = int64_t{1} << (z_.block_sizes.size() - 1);
    if (stride == 1) return x;
    Value* cls = nullptr;
    if (z_.separate_cls) {
      cls = op.Slice(x, {0}, {1}, {1});
      x = op.Slice(x, {1}, {INT64_MAX}, {1});
    }
    Value* batch = op.Shape(x, {.start = 0, .end = 1});
    Value* width = op.Shape(x, {.start = 2, .end = 3});
    Value* repeated = op.Expand(op.Unsqueeze(x, {2}), op.Concat({op.Shape(x, {.start = 0, .end = 2}), b.ints({stride}), width},
                                                                 {.axis = 0}));
    x = op.Reshape(repeated, op.Concat({batch, b.ints({-1}), width}, {.axis = 0}));
    if (!z_.separate_cls) return op.Slice(x, b.ints({0}), target, b.ints({1}));
    if (z_.truncate_seq) {
      Value* zeros = op.Expand(op.Mul(op.Slice(x, {0}, {1}, {1}), 0.0),
                               op.Concat({batch, b.ints({stride - 1}), width}, {.axis = 0}));
      x = op.Concat({x, zeros}, {.axis = 1});
    }
    x = op.Slice(x, b.ints({0}), op.Sub(target, b.ints({1})), b.ints({1}));
    return op.Concat({cls, x}, {.axis = 1});
  }

  FunnelSizes z_;
  TextHeadLayout heads_;
};

// A non-empty list of integers in [lo, hi] from config.json (`fallback` when absent).
std::vector<int64_t> funnel_int_list(const HfConfig& c, const std::string& key, std::vector<int64_t> fallback,
                                     int64_t lo, int64_t hi) {
  const auto it = c.json().find(key);
  if (it == c.json().end() || it->is_null()) return fallback;
  if (!it->is_array() || it->empty()) c.fail(key, "expected a non-empty list of integers");
  std::vector<int64_t> out;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      c.fail(key, "expected integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

}  // namespace

std::unique_ptr<Architecture> create_funnel(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"hidden_size", "d_model"}, {"num_attention_heads", "n_head"}});
  std::string cls;
  if (const auto a = c.json().find("architectures");
      a != c.json().end() && a->is_array() && !a->empty() && (*a)[0].is_string())
    cls = (*a)[0].get<std::string>();
  // FunnelBaseModel and the heads over it have no decoder
  const bool base = cls == "FunnelBaseModel" || cls == "FunnelForSequenceClassification" ||
                    cls == "FunnelForMultipleChoice";
  FunnelSizes z{.vocab_size = c.get_int("vocab_size"), .d_model = c.get_int("d_model"), .n_head = c.get_int("n_head"),
                .d_head = c.int_or("d_head", 64), .d_inner = c.int_or("d_inner", 3072),
                .block_sizes = funnel_int_list(c, "block_sizes", {4, 4, 4}, 1, kMaxLayers), .block_repeats = {},
                .num_decoder_layers = base ? 0 : c.int_or("num_decoder_layers", 2),
                .act = c.string_or("hidden_act", "gelu_new"),
                .eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-9)),
                .max_pooling = false, .factorized = false,
                .separate_cls = c.bool_or("separate_cls", true), .truncate_seq = c.bool_or("truncate_seq", true),
                .pool_q_only = c.bool_or("pool_q_only", true), .dtype = dtype};
  if (z.vocab_size < 1 || z.vocab_size > kMaxVocabSize) c.fail("vocab_size", "expected a positive vocabulary size");
  if (z.d_model < 2 || z.d_model > kMaxHiddenSize || z.d_model % 2 != 0)
    c.fail("d_model", "expected an even positive width (the sin | cos position encodings)");
  if (z.n_head < 1 || z.n_head > kMaxHeads) c.fail("n_head", "expected 1 .. " + std::to_string(kMaxHeads) + " heads");
  if (z.d_head < 1 || z.d_head > kMaxHeadDim) c.fail("d_head", "expected 1 .. " + std::to_string(kMaxHeadDim));
  if (z.d_inner < 1 || z.d_inner > kMaxFfnSize) c.fail("d_inner", "expected a positive width");
  if (z.block_sizes.size() > 30) c.fail("block_sizes", "expected at most 30 blocks (each pools the sequence by 2)");
  z.block_repeats = funnel_int_list(c, "block_repeats", std::vector<int64_t>(z.block_sizes.size(), 1), 1, kMaxLayers);
  if (z.block_repeats.size() != z.block_sizes.size())
    c.fail("block_repeats", "must have one entry per block (block_sizes)");
  if (z.num_decoder_layers < 0 || z.num_decoder_layers > kMaxLayers)
    c.fail("num_decoder_layers", "expected 0 .. " + std::to_string(kMaxLayers));
  if (!is_known_activation(z.act)) c.fail("hidden_act", "unsupported activation '" + z.act + "'");
  const std::string pooling = c.string_or("pooling_type", "mean");
  if (pooling != "mean" && pooling != "max") c.fail("pooling_type", "expected \"mean\" or \"max\"");
  z.max_pooling = pooling == "max";
  const std::string attention = c.string_or("attention_type", "relative_shift");
  if (attention != "relative_shift" && attention != "factorized")
    c.fail("attention_type", "expected \"relative_shift\" or \"factorized\"");
  z.factorized = attention == "factorized";
  const FirstTokenHead classifier{"classifier.linear_hidden", "tanh", "classifier.linear_out"};
  TextHeadLayout heads{.base_model_prefix = "funnel", .base_model_class = base ? "FunnelBaseModel" : "FunnelModel",
                       .masked_lm = {.decoder = "lm_head", .bias = "lm_head.bias"},
                       .sequence_classification = classifier, .multiple_choice = classifier};
  return std::make_unique<FunnelEncoder>(z, std::move(heads));
}

}  // namespace mobius
