// XLNet as an encoder (transformers/models/xlnet/modeling_xlnet.py, configuration_xlnet.py;
// XLNetModel's content stream: no mems, perm_mask or target_mapping, attn_type "bi"). Fields
// d_model / n_layer / n_head / d_inner / d_head (hidden_size, num_hidden_layers,
// num_attention_heads: XLNetConfig.attribute_map). Each layer (XLNetLayer):
//   h   = LayerNorm(x + o(softmax(((q + r_w_bias) k^T + bd + ef) / sqrt(d_head) + mask) v))
//   out = LayerNorm(h + layer_2(act(layer_1(h))))                   (rel_attn.layer_norm, ff.*)
// q, k, v, o, r: [d_model, n_head, d_head] parameters (einsum "ibh,hnd->ibnd"; o back to d_model);
//   bd[i, j] = (q_i + r_r_bias) . r(pos(i - j))    pos: the sin | cos of the distance at
//              1 / 10000^(2k / d_model), the distance clamped to +-clamp_len when > 0
//              (relative_positional_encoding and rel_shift_bnij)
//   ef[i, j] = (q_i + r_s_bias) . seg_embed[token_type_ids[i] != token_type_ids[j]]
//   mask: query i sees key j where attention_mask[j] is 1 or j = i (non_tgt_mask: a padding
//         query sees the tokens and itself)
// last_hidden_state: the last layer's output, no final norm. The graph always reads
// token_type_ids (XLNet's segment ids, compared for equality only; XLNetModel without them drops
// ef, which the graph does not).
// Heads (XLNetFor<Task>, base_model_prefix "transformer"): text-classification and
// multiple-choice XLNetSequenceSummary (summary_type "last" by default: the last token, padding or
// not, as transformers reads it; sequence_summary.summary, summary_activation "tanh" by default)
// then logits_proj; token-classification (classifier); question-answering
// (XLNetForQuestionAnsweringSimple: qa_outputs). XLNetLMHeadModel is a causal LM (mems): no
// fill-mask head; its checkpoints build as this encoder (transformer.*).
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "registry/config_defaults.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"

namespace mobius {
namespace {

struct XLNetSizes {
  int64_t vocab_size, d_model, n_layer, n_head, d_head, d_inner;
  int64_t clamp_len;  // > 0: distances clamped to +-clamp_len
  float layer_norm_eps;
  std::string ff_activation;
  DataType dtype;
};

// The per-graph tensors every layer reads.
struct XLNetContext {
  Value* positions;  // [2 seq, d_model]: the encodings of distances seq, seq - 1, ..., -seq + 1
  Value* shift;      // int64 [seq, seq]: j + seq - i, the column of distance i - j in `positions`
  Value* other_segment;  // bool [batch, 1, seq, seq]: token_type_ids[i] != token_type_ids[j]
  Value* mask;           // [batch, 1, seq, seq] additive
};

// XLNetRelativeAttention (content stream) and XLNetFeedForward: x [batch, seq, d_model] -> the same.
class XLNetLayer : public Module {
 public:
  explicit XLNetLayer(const XLNetSizes& z) : z_(z) {
    const Shape projection{z.d_model, z.n_head, z.d_head};
    q = param("rel_attn.q", projection, z.dtype);
    k = param("rel_attn.k", projection, z.dtype);
    v = param("rel_attn.v", projection, z.dtype);
    o = param("rel_attn.o", projection, z.dtype);
    r = param("rel_attn.r", projection, z.dtype);
    r_r_bias = param("rel_attn.r_r_bias", {z.n_head, z.d_head}, z.dtype);
    r_s_bias = param("rel_attn.r_s_bias", {z.n_head, z.d_head}, z.dtype);
    r_w_bias = param("rel_attn.r_w_bias", {z.n_head, z.d_head}, z.dtype);
    seg_embed = param("rel_attn.seg_embed", {2, z.n_head, z.d_head}, z.dtype);
    const NormOptions norm{.dim = z.d_model, .eps = z.layer_norm_eps, .dtype = z.dtype};
    attention_norm = child<LayerNorm>("rel_attn.layer_norm", norm);
    layer_1 = child<Linear>("ff.layer_1", LinearOptions{z.d_model, z.d_inner, true, z.dtype});
    layer_2 = child<Linear>("ff.layer_2", LinearOptions{z.d_inner, z.d_model, true, z.dtype});
    ffn_norm = child<LayerNorm>("ff.layer_norm", norm);
  }
  Value* forward(Ops& op, Value* x, const XLNetContext& ctx) const {
    auto s = enter(op);
    const int64_t n = z_.n_head, d = z_.d_head;
    auto matrix = [&](const Parameter* p) { return op.Reshape(p->value(op), {z_.d_model, n * d}); };
    auto heads = [&](Value* y) {  // [b, seq, n * d] -> [b, n, seq, d]
      return op.Transpose(op.Reshape(y, {0, 0, n, d}), {.perm = {0, 2, 1, 3}});
    };
    auto bias = [&](const Parameter* p) { return op.Reshape(p->value(op), {n, 1, d}); };
    Value* q_head = heads(op.MatMul(x, matrix(q)));
    Value* k_head = heads(op.MatMul(x, matrix(k)));
    Value* v_head = heads(op.MatMul(x, matrix(v)));
    // bd: the scores against every distance [b, n, seq, 2 seq], each row's distances i - j gathered
    Value* k_pos = op.Transpose(op.Reshape(op.MatMul(ctx.positions, matrix(r)), {0, n, d}), {.perm = {1, 2, 0}});
    Value* all = op.MatMul(op.Add(q_head, bias(r_r_bias)), k_pos);  // [b, n, seq, 2 seq]
    Value* scores_shape = op.Concat({op.Shape(q_head, {.start = 0, .end = 3}), op.Shape(q_head, {.start = 2, .end = 3})},
                                    {.axis = 0});
    Value* bd = op.GatherElements(all, op.Expand(ctx.shift, scores_shape), {.axis = -1});
    // ef: the scores against the two segment embeddings [b, n, seq, 2], chosen per pair
    Value* segments = op.Transpose(seg_embed->value(op), {.perm = {1, 2, 0}});  // [n, d, 2]
    Value* seg = op.MatMul(op.Add(q_head, bias(r_s_bias)), segments);
    Value* ef = op.Where(ctx.other_segment, op.Slice(seg, {1}, {2}, {-1}), op.Slice(seg, {0}, {1}, {-1}));
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    Value* added = op.Add(ctx.mask, op.Mul(op.Add(bd, ef), static_cast<double>(scale)));
    AttentionOutputs a = op.Attention(op.Add(q_head, bias(r_w_bias)), k_head, v_head, added, nullptr, nullptr,
                                      {.scale = scale});
    // the head counts and size the multi_head_attention pass (--ep cpu) reads
    op.builder().producer(a.y).tags = {.num_heads = n, .kv_num_heads = n, .head_size = d};
    Value* attn = op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, n * d});
    Value* h = attention_norm->forward(op, op.Add(op.MatMul(attn, op.Transpose(matrix(o), {.perm = {1, 0}})), x));
    Value* f = layer_2->forward(op, activation(op, z_.ff_activation, layer_1->forward(op, h)));
    return ffn_norm->forward(op, op.Add(f, h));
  }

  Parameter *q, *k, *v, *o, *r, *r_r_bias, *r_s_bias, *r_w_bias, *seg_embed;
  LayerNorm *attention_norm, *ffn_norm;
  Linear *layer_1, *layer_2;

 private:
  XLNetSizes z_;
};

// XLNetModel's last_hidden_state under the feature-extraction task.
class XLNetEncoder : public Encoder {
 public:
  XLNetEncoder(const XLNetSizes& z, TextHeadLayout heads) : z_(z), heads_(std::move(heads)) {
    word_embedding = child<Embedding>("word_embedding", z.vocab_size, z.d_model, z.dtype);
    for (int64_t i = 0; i < z.n_layer; ++i) layers.push_back(child<XLNetLayer>("layer." + std::to_string(i), z));
  }
  DataType dtype() const override { return z_.dtype; }
  int64_t hidden_size() const override { return z_.d_model; }
  bool has_token_type_ids() const override { return true; }
  const TextHeadLayout* head_layout() const override { return &heads_; }
  const Embedding* word_embeddings() const override { return word_embedding; }
  // mask_emb: the query stream's input (target_mapping), which the graph has no input for
  bool training_only(const std::string& key) const override {
    return key.ends_with("mask_emb") || Encoder::training_only(key);
  }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    GraphBuilder& b = op.builder();
    Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
    Value* index = op.Range(b.scalar_i64(0), seq, b.scalar_i64(1));  // [seq]
    XLNetContext ctx;
    // distances seq, seq - 1, ..., -seq + 1 (relative_positional_encoding, attn_type "bi")
    Value* distance = op.Range(seq, op.Neg(seq), b.scalar_i64(-1));
    if (z_.clamp_len > 0)
      distance = op.Min(op.Max(distance, static_cast<double>(-z_.clamp_len)), static_cast<double>(z_.clamp_len));
    std::vector<float> inv_freq;  // float32 as torch computes it: 1 / 10000^(float(2k) / d_model)
    for (int64_t j = 0; j < z_.d_model; j += 2)
      inv_freq.push_back(1.0f / std::pow(10000.0f, static_cast<float>(j) / static_cast<float>(z_.d_model)));
    Value* angles = op.Mul(op.Unsqueeze(op.Cast(distance, {.to = DataType::FLOAT}), {1}),
                           b.constant_f32(inv_freq, {static_cast<int64_t>(inv_freq.size())}));
    ctx.positions = op.Concat({op.Sin(angles), op.Cos(angles)}, {.axis = -1});  // [2 seq, d_model]
    if (z_.dtype != DataType::FLOAT) ctx.positions = op.Cast(ctx.positions, {.to = z_.dtype});
    // column j + seq - i of the distances holds i - j (rel_shift_bnij)
    ctx.shift = op.Add(op.Sub(op.Unsqueeze(index, {0}), op.Unsqueeze(index, {1})), seq);
    Value* types = in.token_type_ids;
    ctx.other_segment = op.Unsqueeze(op.Not(op.Equal(op.Unsqueeze(types, {2}), op.Unsqueeze(types, {1}))), {1});
    Value* self = op.Equal(op.Unsqueeze(index, {1}), op.Unsqueeze(index, {0}));                         // [seq, seq]
    Value* keys = op.Unsqueeze(op.Cast(in.attention_mask, {.to = DataType::BOOL}), {1, 2});  // [b, 1, 1, seq]
    ctx.mask = additive_mask(op, op.Or(keys, self), z_.dtype);                                         // [b, 1, seq, seq]
    Value* h = word_embedding->forward(op, in.input_ids);
    for (const XLNetLayer* layer : layers) h = layer->forward(op, h, ctx);
    return h;
  }

  Embedding* word_embedding;
  std::vector<XLNetLayer*> layers;

 private:
  XLNetSizes z_;
  TextHeadLayout heads_;
};

}  // namespace

std::unique_ptr<Architecture> create_xlnet(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"n_token", "vocab_size"}, {"hidden_size", "d_model"},
                                                 {"num_attention_heads", "n_head"}, {"num_hidden_layers", "n_layer"}});
  if (c.string_or("attn_type", "bi") != "bi")
    c.fail("attn_type", "only the bidirectional encoder (\"bi\") is supported (XLNetModel's content stream)");
  if (c.bool_or("bi_data", false)) c.fail("bi_data", "the pretraining's bidirectional data pipeline is not supported");
  XLNetSizes z{.vocab_size = c.get_int("vocab_size"), .d_model = c.get_int("d_model"), .n_layer = c.get_int("n_layer"),
               .n_head = c.get_int("n_head"), .d_head = 0, .d_inner = c.get_int("d_inner"),
               .clamp_len = c.int_or("clamp_len", -1),
               .layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12)),
               .ff_activation = c.string_or("ff_activation", "gelu"), .dtype = dtype};
  if (z.vocab_size < 1 || z.vocab_size > kMaxVocabSize) c.fail("vocab_size", "expected a positive vocabulary size");
  if (z.d_model < 2 || z.d_model > kMaxHiddenSize || z.d_model % 2 != 0)
    c.fail("d_model", "expected an even positive width (the sin | cos position encodings)");
  if (z.n_layer < 1 || z.n_layer > kMaxSmallSize) c.fail("n_layer", "expected 1 .. 4096 layers");
  if (z.n_head < 1 || z.d_model % z.n_head != 0) c.fail("n_head", "must divide d_model");
  z.d_head = z.d_model / z.n_head;
  if (c.int_or("d_head", z.d_head) != z.d_head) c.fail("d_head", "must be d_model / n_head");
  if (z.d_inner < 1 || z.d_inner > kMaxHiddenSize) c.fail("d_inner", "expected a positive width");
  if (!is_known_activation(z.ff_activation)) c.fail("ff_activation", "unsupported activation '" + z.ff_activation + "'");
  FirstTokenHead summary = sequence_summary(c, "last", true);
  if (!c.has("summary_activation")) summary.act = "tanh";  // XLNetConfig's default
  summary.out = "logits_proj";
  TextHeadLayout heads{.base_model_prefix = "transformer", .base_model_class = "XLNetModel",
                       .sequence_classification = summary, .multiple_choice = summary,
                       .missing = {"fill-mask"}};
  return std::make_unique<XLNetEncoder>(z, std::move(heads));
}

}  // namespace mobius
