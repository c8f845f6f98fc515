// Longformer (transformers/models/longformer/modeling_longformer.py, configuration_longformer.py;
// LongformerModel): RoBERTa's embeddings and post-norm layers (archs/bert.h roberta_spec,
// base_model_prefix "longformer") whose self-attention (LongformerSelfAttention, attention.self) is
// local with global tokens. Graph inputs: input_ids, attention_mask, token_type_ids and
// global_attention_mask (int64 [batch_size, sequence_length], 1 = global attention, as
// LongformerModel.forward names it; the task heads of transformers fill it in when it is not given
// (the first token, or the question's tokens from sep_token_id), this graph always reads it). With
//   token_j   attention_mask[j] == 1;  global_j  token_j and global_attention_mask[j] == 1
//             (_merge_to_attention_mask: attention_mask * (global_attention_mask + 1) == 2)
//   w         attention_window[layer] / 2 (attention_window: one even int, or one per layer)
// each layer's attention.self, for x [batch, seq, hidden], scores scaled by 1 / sqrt(head_dim):
//   query i not global: softmax over the keys j with token_j and |i - j| <= w, or global_j (each
//     key once: the sliding chunks drop the global keys from the band and add them as columns) of
//     query(x_i).key(x_j), times value(x_j); 0 at a padding query (its probabilities are zeroed)
//   query i global:     softmax over every key j with token_j of query_global(x_i).key_global(x_j),
//     times value_global(x_j) (_compute_global_attn_output_from_hidden)
// Both are built as full attention under a mask (blocks/local_attention_mask.h): the padding of the
// sequence to a multiple of the window (_pad_to_window_size) adds only masked keys, and the band in
// the padded sequence is the band in this one. Then, as RoBERTa:
//   h   = attention.output.LayerNorm(attention.output.dense(attn) + x)
//   out = output.LayerNorm(output.dense(act(intermediate.dense(h))) + h)
// Heads (LongformerFor<Task>): RoBERTa's lm_head (tied decoder) and classifier (dense, tanh,
// out_proj on the first token), token-classification classifier, question-answering qa_outputs,
// multiple-choice longformer.pooler + classifier.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/encoder.h"
#include "blocks/linear.h"
#include "blocks/local_attention_mask.h"
#include "blocks/norms.h"
#include "blocks/spec_check.h"

namespace mobius {
namespace {

// The masks a LongformerSlidingLayer reads.
struct LongformerMasks {
  Value* local;      // additive [batch, 1, seq, seq]: the band, the global keys, no padding
  Value* global;     // additive [batch, 1, seq, seq]: every token
  Value* is_global;  // bool [batch, seq, 1]: the global queries
  Value* is_token;   // bool [batch, seq, 1]: the queries that are not padding
};

// LongformerSelfAttention (attention.self): x [batch, seq, hidden] -> [batch, seq, hidden].
class LongformerSelfAttentionMixer : public Module {
 public:
  explicit LongformerSelfAttentionMixer(const EncoderSpec& s)
      : heads_(s.attention.num_attention_heads), head_dim_(s.attention.head_dim) {
    const LinearOptions o{s.hidden_size, s.hidden_size, true, s.dtype};
    query = child<Linear>("query", o);
    key = child<Linear>("key", o);
    value = child<Linear>("value", o);
    query_global = child<Linear>("query_global", o);
    key_global = child<Linear>("key_global", o);
    value_global = child<Linear>("value_global", o);
  }
  Value* forward(Ops& op, Value* x, const LongformerMasks& m) const {
    auto s = enter(op);
    Value* local = attend(op, x, query, key, value, m.local);
    Value* global = attend(op, x, query_global, key_global, value_global, m.global);
    return op.Where(m.is_global, global, op.Where(m.is_token, local, 0.0));
  }
  Linear *query, *key, *value, *query_global, *key_global, *value_global;

 private:
  // softmax(q(x).k(x) / sqrt(head_dim) + mask) v(x) per head -> [batch, seq, hidden]
  Value* attend(Ops& op, Value* x, const Linear* q, const Linear* k, const Linear* v, Value* mask) const {
    auto heads = [&](Value* t) {
      return op.Transpose(op.Reshape(t, {0, 0, heads_, head_dim_}), {.perm = {0, 2, 1, 3}});
    };
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
    AttentionOutputs att = op.Attention(heads(q->forward(op, x)), heads(k->forward(op, x)), heads(v->forward(op, x)),
                                        mask, nullptr, nullptr, {.scale = scale});
    op.builder().producer(att.y).tags = {.num_heads = heads_, .kv_num_heads = heads_, .head_size = head_dim_};
    return op.Reshape(op.Transpose(att.y, {.perm = {0, 2, 1, 3}}), {0, 0, heads_ * head_dim_});
  }
  int64_t heads_, head_dim_;
};

// LongformerLayer: x [batch, seq, hidden] -> [batch, seq, hidden].
class LongformerSlidingLayer : public Module {
 public:
  explicit LongformerSlidingLayer(const EncoderSpec& s) : act_(s.hidden_act) {
    const NormOptions norm{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype};
    attention = child<LongformerSelfAttentionMixer>("attention.self", s);
    attention_dense = child<Linear>("attention.output.dense", LinearOptions{s.hidden_size, s.hidden_size, true, s.dtype});
    attention_norm = child<LayerNorm>("attention.output.LayerNorm", norm);
    intermediate = child<Linear>("intermediate.dense", LinearOptions{s.hidden_size, s.intermediate_size, true, s.dtype});
    output = child<Linear>("output.dense", LinearOptions{s.intermediate_size, s.hidden_size, true, s.dtype});
    output_norm = child<LayerNorm>("output.LayerNorm", norm);
  }
  Value* forward(Ops& op, Value* x, const LongformerMasks& m) const {
    auto s = enter(op);
    Value* h = attention_norm->forward(op, op.Add(attention_dense->forward(op, attention->forward(op, x, m)), x));
    Value* f = output->forward(op, activation(op, act_, intermediate->forward(op, h)));
    return output_norm->forward(op, op.Add(f, h));
  }
  LongformerSelfAttentionMixer* attention;
  Linear *attention_dense, *intermediate, *output;
  LayerNorm *attention_norm, *output_norm;

 private:
  std::string act_;
};

class LongformerModel : public Encoder {
 public:
  LongformerModel(const EncoderSpec& s, std::vector<int64_t> windows) : spec_(s), windows_(std::move(windows)) {
    check_spec(s);
    embeddings = child<EncoderEmbeddings>("embeddings", s);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<LongformerSlidingLayer>(s.layers + "." + std::to_string(i), s));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return spec_.type_vocab_size > 0; }
  std::vector<ExtraInput> extra_inputs() const override { return {{"global_attention_mask", {}}}; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = embeddings->forward(op, in.input_ids, in.token_type_ids);
    Value* token = op.Cast(in.attention_mask, {.to = DataType::BOOL});
    Value* global = op.And(token, op.Equal(in.extra[0], op.builder().scalar_i64(1)));  // [batch, seq]
    LongformerMasks m{nullptr, padding_mask(op, in.attention_mask, spec_.dtype), op.Unsqueeze(global, {2}),
                      op.Unsqueeze(token, {2})};
    std::map<int64_t, Value*> local;  // one mask per window
    for (size_t i = 0; i < layers.size(); ++i) {
      const int64_t w = windows_[i] / 2;
      if (!local.contains(w)) local[w] = local_padding_mask(op, in.attention_mask, w, spec_.dtype, global);
      m.local = local[w];
      h = layers[i]->forward(op, h, m);
    }
    return h;
  }

  EncoderEmbeddings* embeddings;
  std::vector<LongformerSlidingLayer*> layers;

 private:
  EncoderSpec spec_;
  std::vector<int64_t> windows_;
};

}  // namespace

std::unique_ptr<Architecture> create_longformer(const HfConfig& c, DataType dtype) {
  EncoderSpec s = roberta_spec(c, dtype, "longformer", "LongformerModel");
  return std::make_unique<LongformerModel>(s, longformer_attention_windows(c, s.num_hidden_layers));
}

}  // namespace mobius
