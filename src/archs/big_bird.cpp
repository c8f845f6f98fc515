// BigBird (transformers/models/big_bird/modeling_big_bird.py, configuration_big_bird.py;
// BigBirdModel): BERT's embeddings and post-norm layers (archs/bert.h bert_spec, base_model_prefix
// "bert"; q, k, v biases per use_bias) whose self-attention is attention_type's:
//   original_full  BERT's full attention over the tokens (BigBirdSelfAttention)
//   block_sparse   BigBirdBlockSparseAttention, which BigBirdModel.forward runs only for inputs of
//                  more than (5 + 2 * num_random_blocks) * block_size tokens (shorter ones it runs
//                  as original_full, set_attention_type): the graph does the same at every length.
// Block-sparse, in eval: the sequence is padded to nb = ceil(seq / block_size) blocks (only masked
// keys added), and with qb, kb the blocks of query i and key j:
//   qb 0 or nb - 1       attend every token (global rows)
//   otherwise            attend the tokens of blocks 0 and nb - 1 (global columns) and of
//                        |qb - kb| <= 1 (the sliding band), and num_random_blocks random blocks,
//                        which outside training are a constant all-zero list
//                        (_bigbird_block_rand_mask_with_head): block 0 again, r more times. A key
//                        listed r + 1 times counts r + 1 times in the softmax and the sum over the
//                        values: here one column with the bias log(r + 1) on its score.
//   padding queries      0 (context_layer * from_mask), before attention.output.dense
// The masked columns' penalty (-10000) leaves no weight on them, as the lowest value here does,
// for every query with a token to attend (every token query attends itself).
// Embeddings: LayerNorm(word_embeddings(input_ids) + token_type_embeddings + position_embeddings
// (0..seq-1)); rescale_embeddings (the words times sqrt(hidden_size)) is refused.
// Heads (BigBirdFor<Task>): BERT's cls.predictions, text-classification classifier.dense + hidden_act
// + classifier.out_proj (BigBirdClassificationHead on the first token), multiple-choice bert.pooler
// (a Linear) + tanh + classifier, token-classification classifier; question-answering
// BigBirdForQuestionAnsweringHead qa_classifier (a BERT feed-forward sublayer with its residual
// before qa_outputs) and the question mask from sep_token_id (tasks/text_heads.h
// QuestionMaskedSpans; the graph takes token_type_ids, which transformers derives from that mask
// only when none are given).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/encoder.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/spec_check.h"

namespace mobius {
namespace {

struct BigBirdSparsity {
  bool block_sparse;
  int64_t block_size, random_blocks;
};

// BigBirdSelfAttention / BigBirdBlockSparseAttention (attention.self): x [batch, seq, hidden], the
// additive mask [batch, 1, seq, seq], keep (bool [batch, seq, 1]: false zeroes the query's context;
// null: none) -> context [batch, seq, hidden].
class BigBirdSelfAttentionMixer : public Module {
 public:
  explicit BigBirdSelfAttentionMixer(const EncoderSpec& s)
      : heads_(s.attention.num_attention_heads), head_dim_(s.attention.head_dim) {
    const LinearOptions o{s.hidden_size, s.hidden_size, s.attention.qkv_bias, s.dtype};
    query = child<Linear>("query", o);
    key = child<Linear>("key", o);
    value = child<Linear>("value", o);
  }
  Value* forward(Ops& op, Value* x, Value* mask, Value* keep) const {
    auto s = enter(op);
    auto heads = [&](Value* t) {
      return op.Transpose(op.Reshape(t, {0, 0, heads_, head_dim_}), {.perm = {0, 2, 1, 3}});
    };
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
    AttentionOutputs att = op.Attention(heads(query->forward(op, x)), heads(key->forward(op, x)),
                                        heads(value->forward(op, x)), mask, nullptr, nullptr, {.scale = scale});
    op.builder().producer(att.y).tags = {.num_heads = heads_, .kv_num_heads = heads_, .head_size = head_dim_};
    Value* context = op.Reshape(op.Transpose(att.y, {.perm = {0, 2, 1, 3}}), {0, 0, heads_ * head_dim_});
    return keep ? op.Where(keep, context, 0.0) : context;
  }
  Linear *query, *key, *value;

 private:
  int64_t heads_, head_dim_;
};

// BigBirdLayer: x [batch, seq, hidden] -> [batch, seq, hidden].
class BigBirdSparseLayer : public Module {
 public:
  explicit BigBirdSparseLayer(const EncoderSpec& s) : act_(s.hidden_act) {
    const NormOptions norm{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype};
    attention = child<BigBirdSelfAttentionMixer>("attention.self", s);
    attention_dense = child<Linear>("attention.output.dense", LinearOptions{s.hidden_size, s.hidden_size, true, s.dtype});
    attention_norm = child<LayerNorm>("attention.output.LayerNorm", norm);
    intermediate = child<Linear>("intermediate.dense", LinearOptions{s.hidden_size, s.intermediate_size, true, s.dtype});
    output = child<Linear>("output.dense", LinearOptions{s.intermediate_size, s.hidden_size, true, s.dtype});
    output_norm = child<LayerNorm>("output.LayerNorm", norm);
  }
  Value* forward(Ops& op, Value* x, Value* mask, Value* keep) const {
    auto s = enter(op);
    Value* a = attention_dense->forward(op, attention->forward(op, x, mask, keep));
    Value* h = attention_norm->forward(op, op.Add(a, x));
    Value* f = output->forward(op, activation(op, act_, intermediate->forward(op, h)));
    return output_norm->forward(op, op.Add(f, h));
  }
  BigBirdSelfAttentionMixer* attention;
  Linear *attention_dense, *intermediate, *output;
  LayerNorm *attention_norm, *output_norm;

 private:
  std::string act_;
};

class BigBirdModel : public Encoder {
 public:
  BigBirdModel(const EncoderSpec& s, const BigBirdSparsity& z) : spec_(s), z_(z) {
    check_spec(s);
    embeddings = child<EncoderEmbeddings>("embeddings", s);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<BigBirdSparseLayer>(s.layers + "." + std::to_string(i), s));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return spec_.type_vocab_size > 0; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = embeddings->forward(op, in.input_ids, in.token_type_ids);
    Value* mask = padding_mask(op, in.attention_mask, spec_.dtype);
    Value* keep = nullptr;
    if (z_.block_sparse) {
      // block-sparse past (5 + 2 r) * block_size tokens, original_full up to it
      Value* seq = op.Shape(in.input_ids, {.start = 1, .end = 2});  // [1]
      Value* sparse = op.Greater(seq, static_cast<double>((5 + 2 * z_.random_blocks) * z_.block_size));
      mask = op.Where(sparse, sparse_mask(op, in.attention_mask, seq), mask);
      Value* token = op.Cast(op.Unsqueeze(in.attention_mask, {2}), {.to = DataType::BOOL});  // [batch, seq, 1]
      keep = op.Or(token, op.Not(op.Unsqueeze(sparse, {0, 1})));
    }
    for (const BigBirdSparseLayer* layer : layers) h = layer->forward(op, h, mask, keep);
    return h;
  }

  EncoderEmbeddings* embeddings;
  std::vector<BigBirdSparseLayer*> layers;

 private:
  // The block-sparse pattern over the tokens, additive [batch, 1, seq, seq], with log(r + 1) on the
  // columns of block 0 in the rows that list it r + 1 times.
  Value* sparse_mask(Ops& op, Value* attention_mask, Value* seq) const {
    GraphBuilder& b = op.builder();
    auto sc = b.scope("block_sparse_mask");
    const double bs = static_cast<double>(z_.block_size);
    Value* pos = op.Range(b.scalar_i64(0), op.Squeeze(seq, {0}), b.scalar_i64(1));
    Value* block = op.Div(pos, bs);                                              // [seq]
    Value* last = op.Sub(op.Div(op.Add(op.Squeeze(seq, {0}), bs - 1), bs), 1.0);  // nb - 1
    Value* edge = op.Or(op.Equal(block, 0.0), op.Equal(block, last));           // [seq]
    Value* qb = op.Unsqueeze(block, {1}), * kb = op.Unsqueeze(block, {0});
    Value* band = op.LessOrEqual(op.Abs(op.Sub(qb, kb)), 1.0);                   // [seq, seq]
    Value* pattern = op.Or(op.Or(op.Unsqueeze(edge, {1}), op.Unsqueeze(edge, {0})), band);
    Value* token = op.Cast(op.Unsqueeze(attention_mask, {1, 2}), {.to = DataType::BOOL});  // [batch, 1, 1, seq]
    Value* additive = additive_mask(op, op.And(op.Unsqueeze(pattern, {0, 1}), token), spec_.dtype);
    // rows 1 .. nb - 2 list block 0 r + 1 times
    Value* repeated = op.And(op.Not(op.Unsqueeze(edge, {1})), op.Equal(kb, 0.0));
    const double log_count = std::log(static_cast<double>(z_.random_blocks + 1));
    Value* bias = op.Cast(repeated, {.to = spec_.dtype});
    return op.Add(additive, op.Mul(bias, log_count));
  }

  EncoderSpec spec_;
  BigBirdSparsity z_;
};

}  // namespace

std::unique_ptr<Architecture> create_big_bird(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "bert", "BigBirdModel");
  if (c.bool_or("rescale_embeddings", false))
    c.fail("rescale_embeddings", "word embeddings scaled by sqrt(hidden_size) are not supported");
  if (c.bool_or("add_cross_attention", false))
    c.fail("add_cross_attention", "only the bidirectional encoder is supported (feature-extraction)");
  s.attention.qkv_bias = c.bool_or("use_bias", true);
  const std::string type = c.string_or("attention_type", "block_sparse");
  if (type != "block_sparse" && type != "original_full")
    c.fail("attention_type", "expected 'block_sparse' or 'original_full', got '" + type + "'");
  const BigBirdSparsity z{.block_sparse = type == "block_sparse", .block_size = c.int_or("block_size", 64),
                          .random_blocks = c.int_or("num_random_blocks", 3)};
  if (z.block_size < 1 || z.block_size > kMaxPositions) c.fail("block_size", "expected a positive block size");
  // block-sparse without random blocks fails in transformers (an empty gather viewed with -1)
  if (z.random_blocks < (z.block_sparse ? 1 : 0) || z.random_blocks > kMaxSmallSize)
    c.fail("num_random_blocks", "expected " + std::string(z.block_sparse ? "1" : "0") + " .. " +
                                    std::to_string(kMaxSmallSize) + " (attention_type " + type + ")");
  s.heads->sequence_classification = {"classifier.dense", s.hidden_act, "classifier.out_proj"};
  s.heads->multiple_choice = {"bert.pooler", "tanh", "classifier"};
  s.heads->question_masked_spans = {.name = "qa_classifier",
                                    .act = s.hidden_act,
                                    .intermediate_size = s.intermediate_size,
                                    .sep_token_id = c.int_or("sep_token_id", 66),
                                    .eps = s.layer_norm_eps};
  return std::make_unique<BigBirdModel>(s, z);
}

}  // namespace mobius
