// BROS (transformers/models/bros/modeling_bros.py, configuration_bros.py; BrosModel): BERT's
// embeddings and post-norm layers (archs/bert.h bert_spec, base_model_prefix "bros") whose
// attention scores also read the relative positions of the tokens' boxes, from the graph input
// bbox (float [batch_size, sequence_length, 4] = x0, y0, x1, y1, normalized coordinates, as
// BrosModel.forward names it):
//   box      the 8 corner coordinates (x0, y0, x1, y0, x1, y1, x0, y1) of each token, the first
//            dim_bbox of them, times bbox_scale
//   E[i, j]  = bbox_projection(sin | cos of (box_j - box_i) per coordinate at the frequencies
//            of the checkpoint's x_pos_emb.inv_freq (x coordinates) and y_pos_emb.inv_freq (y),
//            persistent buffers made 1 / 10000^(2k / e), e = (hidden_size / 4) / dim_bbox)
//            [batch, seq, seq, head_dim] (BrosBboxEmbeddings; one E for every layer and head)
//   scores   (q_i . k_j + q_i . E[i, j]) / sqrt(head_dim) + the padding mask  (BrosSelfAttention)
// The checkpoint's embeddings.position_ids (a persistent buffer, 0..max_position_embeddings - 1) is
// not read: the positions are 0..seq-1 as BERT's.
// Heads: token-classification (BrosForTokenClassification: classifier). Refused: the SpadeEE and
// SpadeEL heads (BrosSpadeEEForTokenClassification, BrosSpadeELForTokenClassification), whose
// relation logits [batch, seq, seq + 1] against a dummy node are no task's outputs; transformers
// has no other BROS head.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/attention.h"
#include "blocks/encoder.h"
#include "blocks/linear.h"

namespace mobius {
namespace {

// The encoder's AttentionContext with the box encodings every BrosAttention reads.
struct BrosAttentionContext : AttentionContext {
  Value* bbox_pos_emb;  // [batch, seq, seq, head_dim]: E above
};

// BrosSelfAttention with BERT's projections and attention.output.dense: x [batch, seq, hidden] ->
// [batch, seq, hidden]; ctx a BrosAttentionContext (BrosEncoder's).
class BrosAttention : public Attention {
 public:
  explicit BrosAttention(const AttentionOptions& o) : Attention(o), heads_(o.num_attention_heads), head_dim_(o.head_dim) {}
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const override {
    (void)past_key, (void)past_value;
    auto s = enter(op);
    const auto& bros = static_cast<const BrosAttentionContext&>(ctx);
    auto split = [&](Value* v) { return op.Reshape(v, {0, 0, heads_, head_dim_}); };  // [b, seq, n, d]
    auto heads = [&](Value* v) { return op.Transpose(v, {.perm = {0, 2, 1, 3}}); };   // [b, n, seq, d]
    Value* q = split(q_proj->forward(op, x));
    Value* k = heads(split(k_proj->forward(op, x)));
    Value* v = heads(split(v_proj->forward(op, x)));
    // q_i . E[i, j] per head: [b, seq, n, d] x [b, seq, d, seq] -> [b, seq, n, seq] -> [b, n, seq, seq]
    Value* box = op.MatMul(q, op.Transpose(bros.bbox_pos_emb, {.perm = {0, 1, 3, 2}}));
    const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim_));
    Value* bias = op.Add(ctx.mask, op.Mul(op.Transpose(box, {.perm = {0, 2, 1, 3}}), scale));
    AttentionOutputs a = op.Attention(heads(q), k, v, bias, nullptr, nullptr, {.scale = static_cast<float>(scale)});
    // the head counts and size the multi_head_attention pass (--ep cpu) reads
    op.builder().producer(a.y).tags = {.num_heads = heads_, .kv_num_heads = heads_, .head_size = head_dim_};
    Value* y = op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, heads_ * head_dim_});
    return {o_proj->forward(op, y), nullptr, nullptr};
  }

 private:
  int64_t heads_, head_dim_;
};

struct BrosBoxes {
  int64_t dim_bbox;  // the corner coordinates read, of the 8
  double bbox_scale;
  int64_t frequencies;  // per coordinate: ceil(((hidden / 4) / dim_bbox) / 2), the inv_freq buffers' size
  int64_t width;        // dim_bbox_sinusoid_emb_1d = (hidden / 4) / dim_bbox
};

// BrosModel's last_hidden_state under the feature-extraction task.
class BrosEncoder : public Encoder {
 public:
  BrosEncoder(const EncoderSpec& s, const BrosBoxes& boxes) : spec_(s), boxes_(boxes) {
    embeddings = child<EncoderEmbeddings>("embeddings", s);
    // BrosPositionalEmbedding1D's inv_freq buffers, saved with the weights (1 / 10000^(2k / e) as
    // made), float32 whatever the model dtype
    x_inv_freq = param("bbox_embeddings.bbox_sinusoid_emb.x_pos_emb.inv_freq", {boxes.frequencies}, DataType::FLOAT);
    y_inv_freq = param("bbox_embeddings.bbox_sinusoid_emb.y_pos_emb.inv_freq", {boxes.frequencies}, DataType::FLOAT);
    bbox_projection = child<Linear>("bbox_embeddings.bbox_projection",
                                    LinearOptions{s.hidden_size / 4, s.attention.head_dim, false, s.dtype});
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<EncoderLayer>(s.layers + "." + std::to_string(i), s, std::make_unique<BrosAttention>(s.attention)));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return spec_.type_vocab_size > 0; }
  std::vector<ExtraInput> extra_inputs() const override { return {{"bbox", {4}, DataType::FLOAT}}; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }

  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = embeddings->forward(op, in.input_ids, in.token_type_ids);
    BrosAttentionContext ctx;
    ctx.mask = padding_mask(op, in.attention_mask, spec_.dtype);
    ctx.bbox_pos_emb = box_encodings(op, in.extra[0]);
    for (const EncoderLayer* layer : layers) h = layer->forward(op, h, ctx);
    return h;
  }

  EncoderEmbeddings* embeddings;
  Parameter *x_inv_freq, *y_inv_freq;
  Linear* bbox_projection;
  std::vector<EncoderLayer*> layers;

 private:
  // BrosBboxEmbeddings of bbox float [batch, seq, 4]: [batch, seq, seq, head_dim] in the model dtype.
  Value* box_encodings(Ops& op, Value* bbox) const {
    GraphBuilder& b = op.builder();
    std::vector<int64_t> corner_columns = {0, 1, 2, 1, 2, 3, 0, 3};  // x0, y0, x1, y0, x1, y1, x0, y1
    corner_columns.resize(static_cast<size_t>(boxes_.dim_bbox));
    Value* corners = op.Gather(bbox, b.ints(corner_columns), {.axis = 2});
    Value* scaled = op.Mul(corners, boxes_.bbox_scale);
    // box_j - box_i: [batch, i, j, dim_bbox]
    Value* relative = op.Sub(op.Unsqueeze(scaled, {1}), op.Unsqueeze(scaled, {2}));
    // the frequencies of each coordinate [dim_bbox, frequencies]: x_pos_emb's for x, y_pos_emb's for y
    std::vector<Value*> rows;
    for (int64_t i = 0; i < boxes_.dim_bbox; ++i)
      rows.push_back(op.Unsqueeze((i % 2 == 0 ? x_inv_freq : y_inv_freq)->value(op), {0}));
    Value* angles = op.Mul(op.Unsqueeze(relative, {4}), op.Concat(rows, {.axis = 0}));
    Value* sinusoid = op.Concat({op.Sin(angles), op.Cos(angles)}, {.axis = -1});  // [b, i, j, dim_bbox, 2 f]
    sinusoid = op.Reshape(sinusoid, {0, 0, 0, -1});
    if (spec_.dtype != DataType::FLOAT) sinusoid = op.Cast(sinusoid, {.to = spec_.dtype});
    return bbox_projection->forward(op, sinusoid);
  }
  EncoderSpec spec_;
  BrosBoxes boxes_;
};

}  // namespace

std::unique_ptr<Architecture> create_bros(const HfConfig& c, DataType dtype) {
  if (const auto a = c.json().find("architectures");
      a != c.json().end() && a->is_array() && !a->empty() && (*a)[0].is_string()) {
    const std::string cls = (*a)[0].get<std::string>();
    if (cls == "BrosSpadeEEForTokenClassification" || cls == "BrosSpadeELForTokenClassification")
      c.fail("architectures", cls + ": the SpadeEE / SpadeEL relation heads (logits [batch, seq, seq + 1] against a "
                                    "dummy node) are not supported; BrosForTokenClassification and BrosModel are");
  }
  EncoderSpec s = bert_spec(c, dtype, "bros", "BrosModel");
  s.heads->missing = {"fill-mask", "text-classification", "question-answering", "multiple-choice"};
  BrosBoxes boxes{.dim_bbox = c.int_or("dim_bbox", 8), .bbox_scale = c.float_or("bbox_scale", 100.0), .frequencies = 0,
                  .width = 0};
  if (boxes.dim_bbox < 1 || boxes.dim_bbox > 8)
    c.fail("dim_bbox", "expected 1 .. 8 (the corner coordinates of a box, x0, y0, x1, y0, x1, y1, x0, y1)");
  if (s.hidden_size % 4 != 0) c.fail("hidden_size", "must be a multiple of 4 (the box encodings are hidden_size / 4 wide)");
  boxes.width = s.hidden_size / 4 / boxes.dim_bbox;
  boxes.frequencies = (boxes.width + 1) / 2;
  if (boxes.width < 1 || boxes.dim_bbox * 2 * boxes.frequencies != s.hidden_size / 4)
    c.fail("dim_bbox", "dim_bbox * 2 * ceil(((hidden_size / 4) / dim_bbox) / 2) must equal hidden_size / 4 "
                       "(the width of bbox_projection's input)");
  return std::make_unique<BrosEncoder>(s, boxes);
}

}  // namespace mobius
