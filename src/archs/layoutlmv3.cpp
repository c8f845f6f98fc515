// LayoutLMv3, its text side (transformers/models/layoutlmv3/modeling_layoutlmv3.py,
// configuration_layoutlmv3.py; LayoutLMv3Model without pixel_values): BERT's post-norm layers over
// embeddings that also read each token's bounding box, the graph input bbox (int64 [batch_size,
// sequence_length, 4] = x0, y0, x1, y1 in 0 .. max_2d_position_embeddings - 1, as
// LayoutLMv3Model.forward names it):
//   LayerNorm(word_embeddings(input_ids) + token_type_embeddings(token_type_ids)
//             + position_embeddings(RoBERTa's positions from the ids, padding_idx pad_token_id)
//             + concat(x(x0), y(y0), x(x1), y(y1), h(clip(y1 - y0, 0, 1023)), w(clip(x1 - x0, 0, 1023))))
//   (LayoutLMv3TextEmbeddings: 4 coordinate_size + 2 shape_size = hidden_size features)
// and attention scores with LayoutLMv3Encoder's relative position biases, shared by the layers:
//   scores = q k^T / sqrt(d) + (rel_pos + rel_2d_pos) / sqrt(d) + padding mask
//   rel_pos    = encoder.rel_pos_bias (Linear(rel_pos_bins, heads), no bias) of T5's bidirectional
//                bucket of j - i (positions 0..seq-1) up to max_rel_pos
//   rel_2d_pos = encoder.rel_pos_x_bias / rel_pos_y_bias of the buckets (rel_2d_pos_bins up to
//                max_rel_2d_pos) of x0_j - x0_i and y1_j - y1_i
// (has_relative_attention_bias false: no bias; has_spatial_attention_bias alone adds nothing, as
// LayoutLMv3SelfAttention's if / elif does). The visual part (patch_embed, cls_token, pos_embed,
// LayerNorm, norm: pixel_values) is not built: the graph has no pixel_values input.
// Heads (LayoutLMv3For<Task>, base_model_prefix "layoutlmv3"): text-classification
// (LayoutLMv3ClassificationHead classifier.dense + tanh + classifier.out_proj on the first token),
// token-classification (classifier: a Linear below 10 labels, the classification head from 10 on),
// question-answering (qa_outputs: the classification head at every token); no fill-mask or
// multiple-choice class.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/encoder.h"
#include "blocks/relative_position_bias.h"
#include "blocks/spec_check.h"
#include "tasks/image_classification.h"

namespace mobius {
namespace {

struct LayoutLMv3Sizes {
  int64_t max_2d, coordinate_size, shape_size;
  int64_t rel_pos_bins, max_rel_pos, rel_2d_pos_bins, max_rel_2d_pos;
  bool relative, spatial;  // has_relative_attention_bias, has_spatial_attention_bias
};

// LayoutLMv3TextEmbeddings: input_ids, token_type_ids int64 [batch, seq], bbox int64 [batch, seq, 4]
// -> [batch, seq, hidden].
class LayoutLMv3TextEmbeddings : public Module {
 public:
  LayoutLMv3TextEmbeddings(const EncoderSpec& s, const LayoutLMv3Sizes& z) : padding_idx_(s.padding_idx) {
    word_embeddings = child<Embedding>("word_embeddings", s.vocab_size, s.hidden_size, s.dtype);
    token_type_embeddings = child<Embedding>("token_type_embeddings", s.type_vocab_size, s.hidden_size, s.dtype);
    position_embeddings = child<Embedding>("position_embeddings", s.max_position_embeddings, s.hidden_size, s.dtype);
    x_position_embeddings = child<Embedding>("x_position_embeddings", z.max_2d, z.coordinate_size, s.dtype);
    y_position_embeddings = child<Embedding>("y_position_embeddings", z.max_2d, z.coordinate_size, s.dtype);
    h_position_embeddings = child<Embedding>("h_position_embeddings", z.max_2d, z.shape_size, s.dtype);
    w_position_embeddings = child<Embedding>("w_position_embeddings", z.max_2d, z.shape_size, s.dtype);
    layer_norm = child<LayerNorm>("LayerNorm", NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype});
  }
  Value* forward(Ops& op, Value* input_ids, Value* token_type_ids, Value* bbox) const {
    auto s = enter(op);
    std::vector<Value*> box = op.Split(bbox, {1, 1, 1, 1}, {.axis = 2});  // [batch, seq, 1] each
    for (Value*& v : box) v = op.Squeeze(v, {2});
    auto extent = [&](Value* hi, Value* lo) { return op.Min(op.Max(op.Sub(hi, lo), 0.0), 1023.0); };
    Value* spatial = op.Concat({x_position_embeddings->forward(op, box[0]), y_position_embeddings->forward(op, box[1]),
                                x_position_embeddings->forward(op, box[2]), y_position_embeddings->forward(op, box[3]),
                                h_position_embeddings->forward(op, extent(box[3], box[1])),
                                w_position_embeddings->forward(op, extent(box[2], box[0]))},
                               {.axis = -1});
    Value* positions = token_positions(op, input_ids, PositionIds::kFromInputIds, padding_idx_);
    Value* x = op.Add(word_embeddings->forward(op, input_ids), token_type_embeddings->forward(op, token_type_ids));
    x = op.Add(op.Add(x, position_embeddings->forward(op, positions)), spatial);
    return layer_norm->forward(op, x);
  }

  Embedding *word_embeddings, *token_type_embeddings, *position_embeddings;
  Embedding *x_position_embeddings, *y_position_embeddings, *h_position_embeddings, *w_position_embeddings;
  LayerNorm* layer_norm;

 private:
  int64_t padding_idx_;
};

// LayoutLMv3Model's last_hidden_state (text only) under the feature-extraction task.
class LayoutLMv3TextEncoder : public Encoder {
 public:
  LayoutLMv3TextEncoder(const EncoderSpec& s, const LayoutLMv3Sizes& z) : spec_(s) {
    check_spec(s);
    embeddings = child<LayoutLMv3TextEmbeddings>("embeddings", s, z);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<EncoderLayer>(s.layers + "." + std::to_string(i), s));
    const int64_t heads = s.attention.num_attention_heads;
    // the biases are Linears [heads, bins] in the checkpoint: the lookup tables [bins, heads] transposed
    auto bias = [&](const std::string& name, int64_t bins, int64_t max_distance) {
      RelativePositionBias* r = child<RelativePositionBias>(
          name, RelativePositionBiasOptions{.num_buckets = bins, .max_distance = max_distance, .num_heads = heads,
                                            .bidirectional = true, .dtype = s.dtype});
      r->weight->transpose = true;
      return r;
    };
    if (z.relative) rel_pos_bias = bias("encoder.rel_pos_bias", z.rel_pos_bins, z.max_rel_pos);
    if (z.relative && z.spatial) {
      rel_pos_x_bias = bias("encoder.rel_pos_x_bias", z.rel_2d_pos_bins, z.max_rel_2d_pos);
      rel_pos_y_bias = bias("encoder.rel_pos_y_bias", z.rel_2d_pos_bins, z.max_rel_2d_pos);
    }
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return true; }
  std::vector<ExtraInput> extra_inputs() const override { return {{"bbox", {4}}}; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = embeddings->forward(op, in.input_ids, in.token_type_ids, in.extra[0]);
    Value* mask = padding_mask(op, in.attention_mask, spec_.dtype);
    if (rel_pos_bias) {
      GraphBuilder& b = op.builder();
      Value* seq = op.Shape(in.input_ids, {.start = 1, .end = 2});
      Value* bias = rel_pos_bias->forward(op, b.ints({0}), seq, seq);  // [1, heads, seq, seq]
      if (rel_pos_x_bias) {  // the distances of x0 and of y1, key - query: [batch, seq, seq]
        auto relative = [&](int64_t axis) {
          Value* c = op.Gather(in.extra[0], b.scalar_i64(axis), {.axis = 2});  // [batch, seq]
          return op.Sub(op.Unsqueeze(c, {1}), op.Unsqueeze(c, {2}));
        };
        bias = op.Add(bias, op.Add(rel_pos_x_bias->lookup(op, relative(0)), rel_pos_y_bias->lookup(op, relative(3))));
      }
      mask = op.Add(mask, op.Mul(bias, 1.0 / std::sqrt(static_cast<double>(spec_.attention.head_dim))));
    }
    const AttentionContext ctx{mask};
    for (const EncoderLayer* layer : layers) h = layer->forward(op, h, ctx);
    return h;
  }

  LayoutLMv3TextEmbeddings* embeddings;
  std::vector<EncoderLayer*> layers;
  RelativePositionBias* rel_pos_bias = nullptr;
  RelativePositionBias *rel_pos_x_bias = nullptr, *rel_pos_y_bias = nullptr;

 private:
  EncoderSpec spec_;
};

}  // namespace

std::unique_ptr<Architecture> create_layoutlmv3(const HfConfig& c, DataType dtype) {
  if (!c.bool_or("text_embed", true))
    c.fail("text_embed", "LayoutLMv3 without text embeddings reads pixel_values alone: mobius builds the text side "
                         "(input_ids, bbox), with no pixel_values input");
  EncoderSpec s = roberta_spec(c, dtype, "layoutlmv3", "LayoutLMv3Model");
  if (s.type_vocab_size <= 0) c.fail("type_vocab_size", "expected at least one token type");
  s.heads->missing = {"fill-mask", "multiple-choice"};
  const FirstTokenHead classification{"classifier.dense", "tanh", "classifier.out_proj"};
  if (label_count(c) >= 10) s.heads->token_classification = classification;  // LayoutLMv3ForTokenClassification
  s.heads->question_answering = {.dense = "qa_outputs.dense", .act = "tanh", .out = "qa_outputs.out_proj"};
  LayoutLMv3Sizes z{.max_2d = c.int_or("max_2d_position_embeddings", 1024),
                    .coordinate_size = c.int_or("coordinate_size", 128), .shape_size = c.int_or("shape_size", 128),
                    .rel_pos_bins = c.int_or("rel_pos_bins", 32), .max_rel_pos = c.int_or("max_rel_pos", 128),
                    .rel_2d_pos_bins = c.int_or("rel_2d_pos_bins", 64),
                    .max_rel_2d_pos = c.int_or("max_rel_2d_pos", 256),
                    .relative = c.bool_or("has_relative_attention_bias", true),
                    .spatial = c.bool_or("has_spatial_attention_bias", true)};
  if (z.max_2d <= 0) c.fail("max_2d_position_embeddings", "expected a positive table size");
  if (z.coordinate_size <= 0 || z.shape_size <= 0 || 4 * z.coordinate_size + 2 * z.shape_size != s.hidden_size)
    c.fail("coordinate_size", "4 * coordinate_size + 2 * shape_size must equal hidden_size (the box embeddings)");
  // T5's buckets: half for each direction, half of those exact; the log buckets need max_rel > exact ones
  auto check_bins = [&](const char* bins_field, int64_t bins, const char* max_field, int64_t max_distance) {
    if (bins < 4 || bins > kMaxSmallSize) c.fail(bins_field, "expected 4 .. 4096 buckets");
    if (max_distance <= bins / 4) c.fail(max_field, "expected a distance beyond the exact buckets");
  };
  if (z.relative) check_bins("rel_pos_bins", z.rel_pos_bins, "max_rel_pos", z.max_rel_pos);
  if (z.relative && z.spatial) check_bins("rel_2d_pos_bins", z.rel_2d_pos_bins, "max_rel_2d_pos", z.max_rel_2d_pos);
  return std::make_unique<LayoutLMv3TextEncoder>(s, z);
}

}  // namespace mobius
