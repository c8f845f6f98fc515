// LiLT (transformers/models/lilt/modeling_lilt.py, configuration_lilt.py; LiltModel): a text stream
// (RoBERTa's embeddings and post-norm layers, hidden_size wide) beside a layout stream
// (hidden_size / channel_shrink_ratio wide) made from each token's bounding box, the graph input
// bbox (int64 [batch_size, sequence_length, 4] = x0, y0, x1, y1 in 0 .. max_2d_position_embeddings
// - 1, as LiltModel.forward names it):
//   text   = LayerNorm(word_embeddings(input_ids) + token_type_embeddings(token_type_ids)
//                      + position_embeddings(p))      p: RoBERTa's positions from the ids (pad_token_id)
//   layout = LayerNorm(box_linear_embeddings(concat(x(x0), y(y0), x(x1), y(y1), h(y1 - y0), w(x1 - x0)))
//                      + box_position_embeddings(p))  (LiltLayoutEmbeddings; tables hidden_size / 6 wide)
// Each layer (LiltLayer) attends once with the two streams' scores summed:
//   s = q k^T / sqrt(d) + ql kl^T / sqrt(d / r) + padding mask   (r = channel_shrink_ratio)
//   text   <- LayerNorm(text + dense(softmax(s) v)),       then BERT's feed-forward block
//   layout <- LayerNorm(layout + dense(softmax(s) vl)),    then its own (intermediate_size / r wide)
// last_hidden_state is the text stream. Heads (LiltFor<Task>, base_model_prefix "lilt"):
// text-classification (RoBERTa's classifier.dense + tanh + classifier.out_proj on the first
// token), token-classification (classifier), question-answering (qa_outputs); no fill-mask or
// multiple-choice class.
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/encoder.h"
#include "blocks/spec_check.h"

namespace mobius {
namespace {

struct LiltSizes {
  int64_t layout_hidden;        // hidden_size / channel_shrink_ratio
  int64_t layout_intermediate;  // intermediate_size / channel_shrink_ratio
  int64_t layout_head_dim;      // head_dim / channel_shrink_ratio
  int64_t max_2d;               // max_2d_position_embeddings
};

// LiltLayoutEmbeddings: bbox int64 [batch, seq, 4], positions int64 [batch, seq] -> [batch, seq, layout_hidden].
class LiltLayoutEmbeddings : public Module {
 public:
  LiltLayoutEmbeddings(const EncoderSpec& s, const LiltSizes& z) {
    const int64_t sixth = s.hidden_size / 6;
    x_position_embeddings = child<Embedding>("x_position_embeddings", z.max_2d, sixth, s.dtype);
    y_position_embeddings = child<Embedding>("y_position_embeddings", z.max_2d, sixth, s.dtype);
    h_position_embeddings = child<Embedding>("h_position_embeddings", z.max_2d, sixth, s.dtype);
    w_position_embeddings = child<Embedding>("w_position_embeddings", z.max_2d, sixth, s.dtype);
    box_position_embeddings = child<Embedding>("box_position_embeddings", s.max_position_embeddings, z.layout_hidden, s.dtype);
    box_linear_embeddings = child<Linear>("box_linear_embeddings", LinearOptions{6 * sixth, z.layout_hidden, true, s.dtype});
    layer_norm = child<LayerNorm>("LayerNorm", NormOptions{.dim = z.layout_hidden, .eps = s.layer_norm_eps, .dtype = s.dtype});
  }
  Value* forward(Ops& op, Value* bbox, Value* positions) const {
    auto s = enter(op);
    std::vector<Value*> box = op.Split(bbox, {1, 1, 1, 1}, {.axis = 2});  // [batch, seq, 1] each
    for (Value*& v : box) v = op.Squeeze(v, {2});
    Value* spatial = op.Concat({x_position_embeddings->forward(op, box[0]), y_position_embeddings->forward(op, box[1]),
                                x_position_embeddings->forward(op, box[2]), y_position_embeddings->forward(op, box[3]),
                                h_position_embeddings->forward(op, op.Sub(box[3], box[1])),
                                w_position_embeddings->forward(op, op.Sub(box[2], box[0]))},
                               {.axis = -1});
    Value* x = op.Add(box_linear_embeddings->forward(op, spatial), box_position_embeddings->forward(op, positions));
    return layer_norm->forward(op, x);
  }

  Embedding *x_position_embeddings, *y_position_embeddings, *h_position_embeddings, *w_position_embeddings;
  Embedding* box_position_embeddings;
  Linear* box_linear_embeddings;
  LayerNorm* layer_norm;
};

// LiltSelfOutput / LiltOutput: LayerNorm(residual + dense(x)).
class LiltResidualNorm : public Module {
 public:
  LiltResidualNorm(int64_t in, int64_t out, float eps, DataType dtype) {
    dense = child<Linear>("dense", LinearOptions{in, out, true, dtype});
    layer_norm = child<LayerNorm>("LayerNorm", NormOptions{.dim = out, .eps = eps, .dtype = dtype});
  }
  Value* forward(Ops& op, Value* x, Value* residual) const {
    auto s = enter(op);
    return layer_norm->forward(op, op.Add(dense->forward(op, x), residual));
  }
  Linear* dense;
  LayerNorm* layer_norm;
};

// LiltLayer: {text [batch, seq, hidden], layout [batch, seq, layout_hidden]} -> the same, mask
// [batch, 1, seq, seq] from padding_mask().
class LiltLayer : public Module {
 public:
  LiltLayer(const EncoderSpec& s, const LiltSizes& z)
      : heads_(s.attention.num_attention_heads), head_dim_(s.attention.head_dim), layout_head_dim_(z.layout_head_dim),
        act_(s.hidden_act) {
    const int64_t h = s.hidden_size, lh = z.layout_hidden, all = heads_ * head_dim_, lall = heads_ * layout_head_dim_;
    auto linear = [&](const std::string& name, int64_t in, int64_t out) {
      return child<Linear>(name, LinearOptions{in, out, true, s.dtype});
    };
    query = linear("attention.self.query", h, all);
    key = linear("attention.self.key", h, all);
    value = linear("attention.self.value", h, all);
    layout_query = linear("attention.self.layout_query", lh, lall);
    layout_key = linear("attention.self.layout_key", lh, lall);
    layout_value = linear("attention.self.layout_value", lh, lall);
    attention_output = child<LiltResidualNorm>("attention.output", all, h, s.layer_norm_eps, s.dtype);
    layout_attention_output = child<LiltResidualNorm>("attention.layout_output", lall, lh, s.layer_norm_eps, s.dtype);
    intermediate = linear("intermediate.dense", h, s.intermediate_size);
    output = child<LiltResidualNorm>("output", s.intermediate_size, h, s.layer_norm_eps, s.dtype);
    layout_intermediate = linear("layout_intermediate.dense", lh, z.layout_intermediate);
    layout_output = child<LiltResidualNorm>("layout_output", z.layout_intermediate, lh, s.layer_norm_eps, s.dtype);
  }
  std::pair<Value*, Value*> forward(Ops& op, Value* text, Value* layout, Value* mask) const {
    auto s = enter(op);
    auto split = [&](Value* x, int64_t d) {  // [batch, seq, heads * d] -> [batch, heads, seq, d]
      return op.Transpose(op.Reshape(x, {0, 0, heads_, d}), {.perm = {0, 2, 1, 3}});
    };
    auto merge = [&](Value* x) { return op.Reshape(op.Transpose(x, {.perm = {0, 2, 1, 3}}), {0, 0, -1}); };
    Value* q = split(query->forward(op, text), head_dim_);
    Value* k = split(key->forward(op, text), head_dim_);
    Value* v = split(value->forward(op, text), head_dim_);
    Value* lq = split(layout_query->forward(op, layout), layout_head_dim_);
    Value* lk = split(layout_key->forward(op, layout), layout_head_dim_);
    Value* lv = split(layout_value->forward(op, layout), layout_head_dim_);
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
    const float layout_scale = 1.0f / std::sqrt(static_cast<float>(layout_head_dim_));
    // each stream's attention adds the other's scaled scores: one softmax(s) for both
    auto scores = [&](Value* a, Value* b, float sc) {
      return op.Mul(op.MatMul(a, op.Transpose(b, {.perm = {0, 1, 3, 2}})), static_cast<double>(sc));
    };
    auto attend = [&](Value* a, Value* b, Value* c, Value* other, float sc, int64_t d) {
      AttentionOutputs o = op.Attention(a, b, c, op.Add(mask, other), nullptr, nullptr, {.scale = sc});
      // the head counts and size the multi_head_attention pass (--ep cpu) reads
      op.builder().producer(o.y).tags = {.num_heads = heads_, .kv_num_heads = heads_, .head_size = d};
      return merge(o.y);
    };
    Value* text_context = attend(q, k, v, scores(lq, lk, layout_scale), scale, head_dim_);
    Value* layout_context = attend(lq, lk, lv, scores(q, k, scale), layout_scale, layout_head_dim_);
    Value* a = attention_output->forward(op, text_context, text);
    Value* la = layout_attention_output->forward(op, layout_context, layout);
    Value* out = output->forward(op, activation(op, act_, intermediate->forward(op, a)), a);
    Value* layout_out = layout_output->forward(op, activation(op, act_, layout_intermediate->forward(op, la)), la);
    return {out, layout_out};
  }

  Linear *query, *key, *value, *layout_query, *layout_key, *layout_value, *intermediate, *layout_intermediate;
  LiltResidualNorm *attention_output, *layout_attention_output, *output, *layout_output;

 private:
  int64_t heads_, head_dim_, layout_head_dim_;
  std::string act_;
};

// LiltModel's last_hidden_state under the feature-extraction task.
class LiltEncoder : public Encoder {
 public:
  LiltEncoder(const EncoderSpec& s, const LiltSizes& z) : spec_(s) {
    check_spec(s);
    embeddings = child<EncoderEmbeddings>("embeddings", s);
    layout_embeddings = child<LiltLayoutEmbeddings>("layout_embeddings", s, z);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<LiltLayer>(s.layers + "." + std::to_string(i), s, z));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return true; }
  std::vector<ExtraInput> extra_inputs() const override { return {{"bbox", {4}}}; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* text = embeddings->forward(op, in.input_ids, in.token_type_ids);
    Value* positions = token_positions(op, in.input_ids, PositionIds::kFromInputIds, spec_.padding_idx);
    Value* layout = layout_embeddings->forward(op, in.extra[0], positions);
    Value* mask = padding_mask(op, in.attention_mask, spec_.dtype);
    for (const LiltLayer* layer : layers) std::tie(text, layout) = layer->forward(op, text, layout, mask);
    return text;
  }

  EncoderEmbeddings* embeddings;
  LiltLayoutEmbeddings* layout_embeddings;
  std::vector<LiltLayer*> layers;

 private:
  EncoderSpec spec_;
};

}  // namespace

std::unique_ptr<Architecture> create_lilt(const HfConfig& c, DataType dtype) {
  EncoderSpec s = roberta_spec(c, dtype, "lilt", "LiltModel");
  if (s.type_vocab_size <= 0) c.fail("type_vocab_size", "expected at least one token type");
  s.padding_idx = c.int_or("pad_token_id", 0);
  s.heads->missing = {"fill-mask", "multiple-choice"};
  const int64_t r = c.int_or("channel_shrink_ratio", 4);
  if (r < 1 || s.attention.head_dim % r != 0)
    c.fail("channel_shrink_ratio", "expected a positive divisor of the head size (hidden_size / num_attention_heads)");
  if (s.hidden_size % 6 != 0)  // LiltLayoutEmbeddings: six tables of hidden_size // 6 into a Linear from hidden_size
    c.fail("hidden_size", "LiLT's layout embeddings need a multiple of 6");
  const LiltSizes z{.layout_hidden = s.hidden_size / r, .layout_intermediate = s.intermediate_size / r,
                    .layout_head_dim = s.attention.head_dim / r, .max_2d = c.int_or("max_2d_position_embeddings", 1024)};
  if (z.max_2d <= 0) c.fail("max_2d_position_embeddings", "expected a positive table size");
  return std::make_unique<LiltEncoder>(s, z);
}

}  // namespace mobius
