// ConvBERT (transformers/models/convbert/modeling_convbert.py, configuration_convbert.py;
// ConvBertModel): ELECTRA's embeddings (blocks/encoder.h EncoderEmbeddings of width embedding_size,
// embeddings_project to hidden_size when they differ; archs/bert.h bert_spec, base_model_prefix
// "convbert") and post-norm layers encoder.layer.{i} whose attention mixes self-attention with a
// span-based dynamic convolution (ConvBertSelfAttention, attention.self): with
//   heads = num_attention_heads / head_ratio (at least 1), d = hidden_size / heads / 2, A = heads * d,
//   K = conv_kernel_size (odd), p = (K - 1) / 2, x [batch, seq, hidden_size]:
//   q, k, v       query(x), key(x), value(x)                                [batch, seq, A]
//   context       softmax(q.k / sqrt(d) + padding mask) v per head            [batch, seq, A]
//   kernel        softmax over K of conv_kernel_layer(q * key_conv_attn_layer(x)) per head, where
//                 key_conv_attn_layer is a depthwise Conv1d (K, zero padding p, no bias) over the
//                 sequence, a pointwise Conv1d (no bias) to A, plus its own bias   [batch, seq, heads, K]
//   conv          out[s] = sum_j kernel[s, j] * conv_out_layer(x)[s + j - p] (zero outside the
//                 sequence: nn.functional.unfold), per head                  [batch, seq, A]
//   h             attention.output.LayerNorm(attention.output.dense(context | conv) + x)
//   out           output.LayerNorm(output.dense(act(intermediate.dense(h))) + h)
// Padding tokens are not masked in the convolutions (transformers does not mask them either).
// With num_groups > 1 intermediate.dense and output.dense are GroupedLinearLayers: weight
// [num_groups, in / num_groups, out / num_groups] applied to each group of features, then bias.
// Heads (ConvBertFor<Task>):
//   fill-mask            generator_predictions.{dense (to embedding_size), gelu, LayerNorm} +
//                        generator_lm_head (tied to the word embeddings with tie_word_embeddings)
//   text-classification classifier.out_proj(hidden_act(classifier.dense(x[:, 0])))
//   multiple-choice      classifier(ConvBertSequenceSummary): summary_type "last" by default (the
//                        config class has no field: getattr's default), no projection unless
//                        summary_use_proj (archs/bert.h sequence_summary)
//   token-classification classifier; question-answering qa_outputs
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/conv.h"
#include "blocks/encoder.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/spec_check.h"

namespace mobius {
namespace {

struct ConvBertSizes {
  int64_t heads, head_dim, kernel, groups;
};

// A Linear, or ConvBERT's GroupedLinearLayer with groups > 1 (weight [groups, in / groups,
// out / groups], bias [out]): x [batch, seq, in] -> [batch, seq, out].
class ConvBertGroupedLinear : public Module {
 public:
  ConvBertGroupedLinear(int64_t in, int64_t out, int64_t groups, DataType dtype) : in_(in), out_(out), groups_(groups) {
    if (groups == 1) {
      linear = child<Linear>("", LinearOptions{in, out, true, dtype});
      return;
    }
    weight = param("weight", {groups, in / groups, out / groups}, dtype);
    bias = param("bias", {out}, dtype);
  }
  Value* forward(Ops& op, Value* x) const {
    if (linear) return linear->forward(op, x);
    // [batch, seq, groups, 1, in / groups] @ [groups, in / groups, out / groups]
    Value* g = op.Reshape(x, {0, 0, groups_, 1, in_ / groups_});
    Value* y = op.Reshape(op.MatMul(g, weight->value(op)), {0, 0, out_});
    return op.Add(y, bias->value(op));
  }
  Linear* linear = nullptr;
  Parameter *weight = nullptr, *bias = nullptr;

 private:
  int64_t in_, out_, groups_;
};

// ConvBertSelfAttention (attention.self): x [batch, seq, hidden] -> context | conv [batch, seq, 2 A].
class ConvBertMixedAttention : public Module {
 public:
  ConvBertMixedAttention(const EncoderSpec& s, const ConvBertSizes& z) : z_(z), dtype_(s.dtype) {
    const int64_t h = s.hidden_size, a = z.heads * z.head_dim;
    query = child<Linear>("query", LinearOptions{h, a, true, s.dtype});
    key = child<Linear>("key", LinearOptions{h, a, true, s.dtype});
    value = child<Linear>("value", LinearOptions{h, a, true, s.dtype});
    depthwise = child<Conv1d>("key_conv_attn_layer.depthwise",
                              Conv1dOptions{.in_channels = h, .out_channels = h, .kernel_size = z.kernel,
                                            .padding = z.kernel / 2, .groups = h, .bias = false, .dtype = s.dtype});
    pointwise = child<Conv1d>("key_conv_attn_layer.pointwise",
                              Conv1dOptions{.in_channels = h, .out_channels = a, .kernel_size = 1, .bias = false,
                                            .dtype = s.dtype});
    conv_bias = param("key_conv_attn_layer.bias", {a, 1}, s.dtype);
    conv_kernel_layer = child<Linear>("conv_kernel_layer", LinearOptions{a, z.heads * z.kernel, true, s.dtype});
    conv_out_layer = child<Linear>("conv_out_layer", LinearOptions{h, a, true, s.dtype});
  }
  Value* forward(Ops& op, Value* x, Value* mask) const {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    const int64_t a = z_.heads * z_.head_dim, pad = (z_.kernel - 1) / 2;
    Value* q = query->forward(op, x);
    // self-attention over [batch, heads, seq, d]
    auto heads = [&](Value* v) { return op.Transpose(op.Reshape(v, {0, 0, z_.heads, z_.head_dim}), {.perm = {0, 2, 1, 3}}); };
    const float scale = 1.0f / std::sqrt(static_cast<float>(z_.head_dim));
    AttentionOutputs att = op.Attention(heads(q), heads(key->forward(op, x)), heads(value->forward(op, x)), mask,
                                        nullptr, nullptr, {.scale = scale});
    b.producer(att.y).tags = {.num_heads = z_.heads, .kv_num_heads = z_.heads, .head_size = z_.head_dim};
    Value* context = op.Reshape(op.Transpose(att.y, {.perm = {0, 2, 1, 3}}), {0, 0, a});
    // the dynamic kernel [batch, seq, heads, 1, K], softmax over K
    Value* xt = op.Transpose(x, {.perm = {0, 2, 1}});
    Value* key_conv = op.Add(pointwise->forward(op, depthwise->forward(op, xt)), conv_bias->value(op));
    Value* kernel = conv_kernel_layer->forward(op, op.Mul(op.Transpose(key_conv, {.perm = {0, 2, 1}}), q));
    kernel = op.Softmax(op.Reshape(kernel, {0, 0, z_.heads, 1, z_.kernel}), {.axis = -1});
    // conv_out_layer(x) at s + j - p for j in 0..K-1 (zeros outside): [batch, seq, heads, d, K]
    Value* padded = b.add_node("Pad", {conv_out_layer->forward(op, x), b.ints({0, pad, 0, 0, pad, 0})}, {}, {dtype_})[0];
    Value* seq = op.Shape(x, {.start = 1, .end = 2});
    std::vector<Value*> shifted;
    for (int64_t j = 0; j < z_.kernel; ++j)
      shifted.push_back(op.Unsqueeze(op.Slice(padded, b.ints({j}), op.Add(seq, b.ints({j})), b.ints({1})), {-1}));
    Value* windows = op.Reshape(op.Concat(shifted, {.axis = -1}), {0, 0, z_.heads, z_.head_dim, z_.kernel});
    Value* conv = op.Reshape(op.ReduceSum(op.Mul(windows, kernel), {-1}, {.keepdims = 0}), {0, 0, a});
    return op.Concat({context, conv}, {.axis = -1});
  }
  Linear *query, *key, *value, *conv_kernel_layer, *conv_out_layer;
  Conv1d *depthwise, *pointwise;
  Parameter* conv_bias;

 private:
  ConvBertSizes z_;
  DataType dtype_;
};

// ConvBertLayer: x [batch, seq, hidden] -> [batch, seq, hidden]; mask [batch, 1, seq, seq].
class ConvBertLayer : public Module {
 public:
  ConvBertLayer(const EncoderSpec& s, const ConvBertSizes& z) : act_(s.hidden_act) {
    const NormOptions norm{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype};
    attention = child<ConvBertMixedAttention>("attention.self", s, z);
    attention_dense = child<Linear>("attention.output.dense", LinearOptions{s.hidden_size, s.hidden_size, true, s.dtype});
    attention_norm = child<LayerNorm>("attention.output.LayerNorm", norm);
    intermediate = child<ConvBertGroupedLinear>("intermediate.dense", s.hidden_size, s.intermediate_size, z.groups, s.dtype);
    output = child<ConvBertGroupedLinear>("output.dense", s.intermediate_size, s.hidden_size, z.groups, s.dtype);
    output_norm = child<LayerNorm>("output.LayerNorm", norm);
  }
  Value* forward(Ops& op, Value* x, Value* mask) const {
    auto s = enter(op);
    Value* h = attention_norm->forward(op, op.Add(attention_dense->forward(op, attention->forward(op, x, mask)), x));
    Value* f = output->forward(op, activation(op, act_, intermediate->forward(op, h)));
    return output_norm->forward(op, op.Add(f, h));
  }
  ConvBertMixedAttention* attention;
  Linear* attention_dense;
  LayerNorm *attention_norm, *output_norm;
  ConvBertGroupedLinear *intermediate, *output;

 private:
  std::string act_;
};

class ConvBertModel : public Encoder {
 public:
  ConvBertModel(const EncoderSpec& s, const ConvBertSizes& z) : spec_(s) {
    check_spec(s);
    embeddings = child<EncoderEmbeddings>("embeddings", s);
    if (s.embedding_size != s.hidden_size)
      embeddings_project = child<Linear>("embeddings_project", LinearOptions{s.embedding_size, s.hidden_size, true, s.dtype});
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<ConvBertLayer>("encoder.layer." + std::to_string(i), s, z));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return spec_.type_vocab_size > 0; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = embeddings->forward(op, in.input_ids, in.token_type_ids);
    if (embeddings_project) h = embeddings_project->forward(op, h);
    Value* mask = padding_mask(op, in.attention_mask, spec_.dtype);
    for (const ConvBertLayer* layer : layers) h = layer->forward(op, h, mask);
    return h;
  }

  EncoderEmbeddings* embeddings;
  Linear* embeddings_project = nullptr;
  std::vector<ConvBertLayer*> layers;

 private:
  EncoderSpec spec_;
};

}  // namespace

std::unique_ptr<Architecture> create_convbert(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "convbert", "ConvBertModel");
  s.embedding_size = c.int_or("embedding_size", 768);
  if (s.embedding_size <= 0 || s.embedding_size > kMaxHiddenSize) c.fail("embedding_size", "expected a positive width");
  const int64_t ratio = c.int_or("head_ratio", 2);
  if (ratio < 1 || ratio > kMaxHeads) c.fail("head_ratio", "expected 1 .. " + std::to_string(kMaxHeads));
  ConvBertSizes z{.heads = std::max<int64_t>(s.attention.num_attention_heads / ratio, 1), .head_dim = 0,
                  .kernel = c.int_or("conv_kernel_size", 9), .groups = c.int_or("num_groups", 1)};
  if (s.hidden_size % (2 * z.heads) != 0)
    c.fail("head_ratio", "num_attention_heads / head_ratio heads must split hidden_size " +
                             std::to_string(s.hidden_size) + " in heads of an even width");
  z.head_dim = s.hidden_size / z.heads / 2;
  if (z.kernel < 1 || z.kernel > kMaxSmallSize || z.kernel % 2 == 0)
    c.fail("conv_kernel_size", "expected an odd kernel up to " + std::to_string(kMaxSmallSize));
  if (z.groups < 1 || s.hidden_size % z.groups != 0 || s.intermediate_size % z.groups != 0)
    c.fail("num_groups", "must divide hidden_size and intermediate_size");
  s.heads->masked_lm = {"generator_predictions.dense", "gelu", "generator_predictions.LayerNorm",
                        "generator_lm_head", "generator_lm_head.bias", s.layer_norm_eps};
  s.heads->sequence_classification = {"classifier.dense", s.hidden_act, "classifier.out_proj"};
  s.heads->multiple_choice = sequence_summary(c, "last", false);
  return std::make_unique<ConvBertModel>(s, z);
}

}  // namespace mobius
