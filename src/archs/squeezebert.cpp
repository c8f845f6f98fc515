// SqueezeBERT (transformers/models/squeezebert/modeling_squeezebert.py, configuration_squeezebert.py;
// SqueezeBertModel): BERT's embeddings (blocks/encoder.h EncoderEmbeddings; embedding_size must
// equal hidden_size) and heads (archs/bert.h bert_spec, base_model_prefix "transformer"), with
// every Linear of the layers a grouped pointwise Conv1d over [batch, channels, seq]
// (SqueezeBertModule, encoder.layers.{i}):
//   q, k, v     attention.{query, key, value}, groups q_groups, k_groups, v_groups
//   h           post_attention.layernorm(post_attention.conv1d(attention(q, k, v)) + x), groups
//               post_attention_groups
//   out         output.layernorm(output.conv1d(act(intermediate.conv1d(h))) + h), groups
//               intermediate_groups, output_groups
// The layers' LayerNorms normalize the channels with eps 1e-12 whatever layer_norm_eps
// (SqueezeBertLayerNorm(cout) in ConvDropoutLayerNorm); the embeddings' use layer_norm_eps.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/conv.h"
#include "blocks/encoder.h"
#include "blocks/spec_check.h"

namespace mobius {
namespace {

struct Groups {
  int64_t q, k, v, post_attention, intermediate, output;
};

// Conv1d of kernel 1 and its LayerNorm over the channels (ConvDropoutLayerNorm):
// x, residual [batch, channels, seq] -> layernorm(conv1d(x) + residual), [batch, cout, seq].
class ConvLayerNorm : public Module {
 public:
  ConvLayerNorm(int64_t cin, int64_t cout, int64_t groups, DataType dtype) {
    conv1d = child<Conv1d>("conv1d", Conv1dOptions{.in_channels = cin, .out_channels = cout, .kernel_size = 1,
                                                   .groups = groups, .dtype = dtype});
    layernorm = child<LayerNorm>("layernorm", NormOptions{.dim = cout, .eps = 1e-12f, .dtype = dtype});
  }
  Value* forward(Ops& op, Value* x, Value* residual) const {
    auto s = enter(op);
    Value* sum = op.Add(conv1d->forward(op, x), residual);
    return op.Transpose(layernorm->forward(op, op.Transpose(sum, {.perm = {0, 2, 1}})), {.perm = {0, 2, 1}});
  }
  Conv1d* conv1d;
  LayerNorm* layernorm;
};

// SqueezeBertModule: x [batch, hidden, seq] -> [batch, hidden, seq]; mask [batch, 1, seq, seq].
class SqueezeBertModule : public Module {
 public:
  SqueezeBertModule(const EncoderSpec& s, const Groups& g)
      : act_(s.hidden_act), heads_(s.attention.num_attention_heads), head_dim_(s.attention.head_dim) {
    const int64_t c = s.hidden_size;
    auto conv = [&](const char* name, int64_t cin, int64_t cout, int64_t groups) {
      return child<Conv1d>(name, Conv1dOptions{.in_channels = cin, .out_channels = cout, .kernel_size = 1,
                                               .groups = groups, .dtype = s.dtype});
    };
    query = conv("attention.query", c, c, g.q);
    key = conv("attention.key", c, c, g.k);
    value = conv("attention.value", c, c, g.v);
    post_attention = child<ConvLayerNorm>("post_attention", c, c, g.post_attention, s.dtype);
    intermediate = conv("intermediate.conv1d", c, s.intermediate_size, g.intermediate);
    output = child<ConvLayerNorm>("output", s.intermediate_size, c, g.output, s.dtype);
  }
  Value* forward(Ops& op, Value* x, Value* mask) const {
    auto s = enter(op);
    // [batch, heads * head_dim, seq] -> [batch, heads, seq, head_dim] (transpose_for_scores)
    auto heads = [&](Value* v) {
      return op.Transpose(op.Reshape(v, {0, heads_, head_dim_, -1}), {.perm = {0, 1, 3, 2}});
    };
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
    AttentionOutputs a = op.Attention(heads(query->forward(op, x)), heads(key->forward(op, x)),
                                      heads(value->forward(op, x)), mask, nullptr, nullptr, {.scale = scale});
    op.builder().producer(a.y).tags = {.num_heads = heads_, .kv_num_heads = heads_, .head_size = head_dim_};
    Value* context = op.Reshape(op.Transpose(a.y, {.perm = {0, 1, 3, 2}}), {0, heads_ * head_dim_, -1});
    Value* h = post_attention->forward(op, context, x);
    return output->forward(op, activation(op, act_, intermediate->forward(op, h)), h);
  }
  Conv1d *query, *key, *value, *intermediate;
  ConvLayerNorm *post_attention, *output;

 private:
  std::string act_;
  int64_t heads_, head_dim_;
};

class SqueezeBertModel : public Encoder {
 public:
  SqueezeBertModel(const EncoderSpec& s, const Groups& g) : spec_(s) {
    check_spec(s);
    embeddings = child<EncoderEmbeddings>("embeddings", s);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<SqueezeBertModule>("encoder.layers." + std::to_string(i), s, g));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return spec_.type_vocab_size > 0; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* mask = padding_mask(op, in.attention_mask, spec_.dtype);
    Value* h = op.Transpose(embeddings->forward(op, in.input_ids, in.token_type_ids), {.perm = {0, 2, 1}});
    for (const SqueezeBertModule* layer : layers) h = layer->forward(op, h, mask);
    return op.Transpose(h, {.perm = {0, 2, 1}});
  }

  EncoderEmbeddings* embeddings;
  std::vector<SqueezeBertModule*> layers;

 private:
  EncoderSpec spec_;
};

}  // namespace

std::unique_ptr<Architecture> create_squeezebert(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "transformer", "SqueezeBertModel");
  if (c.int_or("embedding_size", 768) != s.hidden_size)
    c.fail("embedding_size", "must equal hidden_size (SqueezeBertEncoder asserts it)");
  auto groups = [&](int64_t g, const char* field, int64_t cin, int64_t cout) {
    if (g < 1 || cin % g != 0 || cout % g != 0) c.fail(field, "must divide the channels of its convolution");
    return g;
  };
  const int64_t h = s.hidden_size, i = s.intermediate_size;
  const Groups g{groups(c.int_or("q_groups", 4), "q_groups", h, h), groups(c.int_or("k_groups", 4), "k_groups", h, h),
                 groups(c.int_or("v_groups", 4), "v_groups", h, h),
                 groups(c.int_or("post_attention_groups", 1), "post_attention_groups", h, h),
                 groups(c.int_or("intermediate_groups", 4), "intermediate_groups", h, i),
                 groups(c.int_or("output_groups", 4), "output_groups", i, h)};
  return std::make_unique<SqueezeBertModel>(s, g);
}

}  // namespace mobius
