// NllbMoeForConditionalGeneration (transformers/models/nllb_moe/modeling_nllb_moe.py,
// configuration_nllb_moe.py) under text2text-generation (tasks/text2text_generation.h): M2M-100's
// layout with top-2 mixture-of-experts feed-forwards.
//   embeddings : embed_tokens(input_ids) * embed_scale (sqrt(d_model) with scale_embedding) +
//                NllbMoeSinusoidalPositionalEmbedding (M2M-100's tensor2tensor table of
//                max_position_embeddings + 2 rows, at pad_token_id + the count of non-padding
//                tokens so far (+ past in the decoder), pad_token_id at padding;
//                blocks/sinusoidal_position.h); encoder.embed_tokens, decoder.embed_tokens and
//                lm_head are model.shared with tie_word_embeddings (default), else their own keys
//   encoder layer (pre-norm): x + self_attn(self_attn_layer_norm(x)), then
//                x + ffn(ff_layer_norm(x))
//   decoder layer (pre-norm): x + self_attn (causal, cached), x + cross_attention (cached,
//                cross_attention_layer_norm), x + ffn(ff_layer_norm(x))
//   attention  : q/k/v/out_proj with biases, scaled by head_dim**-0.5
//   ffn        : layer i is sparse when (i + 1) % encoder_sparse_step (decoder_sparse_step) == 0
//                (a step of 0: none): blocks/top2_moe.h (router.classifier, experts.expert_{e}),
//                its router told the encoder's padding (the decoder's mask hides no token from it);
//                else fc1, act, fc2 with biases
//   final      : layer_norm on both stacks; lm_head without bias.
// The router's capacity is counted over all the tokens of the call (batch * seq, padding
// positions included), as transformers counts it: a package run on a batch routes as transformers
// does on the same batch, and a sequence run alone can route differently than within a batch.
// second_expert_policy "sampling" and "random" draw random numbers in NllbMoeTop2Router at
// inference too, so no graph reproduces them: only "all" is built. router_dtype: float32 only.
#include <cmath>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/cross_attention.h"
#include "blocks/sinusoidal_position.h"
#include "blocks/top2_moe.h"
#include "registry/config_defaults.h"
#include "tasks/text2text_generation.h"
#include "util/error.h"

namespace mobius {
namespace {

struct NllbMoeSpec {
  int64_t vocab_size, d_model, max_position_embeddings, pad_token_id;
  int64_t encoder_layers, decoder_layers, encoder_heads, decoder_heads, encoder_ffn_dim, decoder_ffn_dim;
  int64_t encoder_sparse_step, decoder_sparse_step;
  float embed_scale;
  bool tied;
  std::string act;
  Top2MoEOptions moe;  // ffn_dim set per stack
  DataType dtype;

  AttentionOptions attention(int64_t heads) const {
    AttentionOptions a;
    a.hidden_size = d_model;
    a.num_attention_heads = a.num_key_value_heads = heads;
    a.head_dim = d_model / heads;
    a.qkv_bias = a.o_bias = true;
    a.dtype = dtype;
    a.names.o_proj = "out_proj";
    return a;
  }
  NormOptions norm() const { return {.dim = d_model, .eps = 1e-5f, .dtype = dtype, .kind = NormKind::LayerNorm}; }
  static bool sparse(int64_t step, int64_t i) { return step > 0 && (i + 1) % step == 0; }
};

NllbMoeSpec nllb_moe_spec(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"hidden_size", "d_model"},
                                                 {"num_attention_heads", "encoder_attention_heads"},
                                                 {"num_hidden_layers", "encoder_layers"}});
  NllbMoeSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.d_model = c.int_or("d_model", 1024);
  if (s.d_model % 2 != 0 || s.d_model < 4) c.fail("d_model", "must be even and at least 4 (the sinusoidal table's halves)");
  s.max_position_embeddings = c.int_or("max_position_embeddings", 1024);
  s.pad_token_id = c.int_or("pad_token_id", 1);
  if (s.pad_token_id < 0) c.fail("pad_token_id", "must not be negative (the position table's padding row)");
  s.encoder_layers = c.int_or("encoder_layers", 12);
  s.decoder_layers = c.int_or("decoder_layers", 12);
  if (s.decoder_layers < 1) c.fail("decoder_layers", "must be at least 1");
  const auto heads = [&](const char* field) {
    const int64_t h = c.int_or(field, 16);
    if (h <= 0 || s.d_model % h != 0) c.fail(field, "must divide d_model");
    return h;
  };
  s.encoder_heads = heads("encoder_attention_heads");
  s.decoder_heads = heads("decoder_attention_heads");
  s.encoder_ffn_dim = c.int_or("encoder_ffn_dim", 4096);
  s.decoder_ffn_dim = c.int_or("decoder_ffn_dim", 4096);
  s.encoder_sparse_step = c.int_or("encoder_sparse_step", 4);
  s.decoder_sparse_step = c.int_or("decoder_sparse_step", 4);
  if (s.encoder_sparse_step < 0) c.fail("encoder_sparse_step", "must not be negative");
  if (s.decoder_sparse_step < 0) c.fail("decoder_sparse_step", "must not be negative");
  s.embed_scale = c.bool_or("scale_embedding", true) ? static_cast<float>(std::sqrt(static_cast<double>(s.d_model))) : 1.0f;
  s.tied = c.bool_or("tie_word_embeddings", true);
  s.act = c.string_or("activation_function", "relu");
  if (!is_known_activation(s.act)) c.fail("activation_function", "unsupported activation '" + s.act + "'");

  const std::string policy = c.string_or("second_expert_policy", "all");
  if (policy != "all")
    c.fail("second_expert_policy", "'" + policy + "' draws random numbers at inference in transformers' "
                                   "NllbMoeTop2Router; only \"all\" is supported");
  const std::string router_dtype = c.string_or("router_dtype", "float32");
  if (router_dtype != "float32") c.fail("router_dtype", "'" + router_dtype + "' is not supported (only \"float32\")");
  Top2MoEOptions& m = s.moe;
  m.d_model = s.d_model;
  m.num_experts = c.int_or("num_experts", 128);
  if (m.num_experts < 2) c.fail("num_experts", "must be at least 2 (top-2 routing)");
  m.expert_capacity = c.int_or("expert_capacity", 64);
  if (m.expert_capacity < 0) c.fail("expert_capacity", "must not be negative");
  m.moe_eval_capacity_token_fraction = c.float_or("moe_eval_capacity_token_fraction", 1.0);
  m.normalize_router_prob_before_dropping = c.bool_or("normalize_router_prob_before_dropping", false);
  m.batch_prioritized_routing = c.bool_or("batch_prioritized_routing", false);
  m.router_ignore_padding_tokens = c.bool_or("router_ignore_padding_tokens", false);
  m.router_bias = c.bool_or("router_bias", false);
  m.moe_token_dropout = static_cast<float>(c.float_or("moe_token_dropout", 0.2));
  if (m.moe_token_dropout < 0 || m.moe_token_dropout >= 1) c.fail("moe_token_dropout", "must be in [0, 1)");
  m.act = s.act;
  m.dtype = dtype;
  return s;
}

// The feed-forward of a layer: NllbMoeDenseActDense or NllbMoeSparseMLP, under "ffn".
class NllbMoeLayer : public Module {
 protected:
  NllbMoeLayer(const NllbMoeSpec& s, int64_t ffn_dim, bool sparse) {
    self_attn_layer_norm = adopt("self_attn_layer_norm", make_norm(s.norm()));
    ff_layer_norm = adopt("ff_layer_norm", make_norm(s.norm()));
    if (sparse) {
      Top2MoEOptions m = s.moe;
      m.ffn_dim = ffn_dim;
      moe = child<Top2SparseMLP>("ffn", m);
    } else {
      dense = adopt("ffn", make_mlp({.hidden_size = s.d_model, .intermediate_size = ffn_dim, .hidden_act = s.act,
                                     .bias = true, .dtype = s.dtype, .gated = false}));
    }
  }
  // x + ffn(ff_layer_norm(x)); attention_mask: the router's padding (moe only), or null.
  Value* feed_forward(Ops& op, Value* x, Value* attention_mask) const {
    Value* h = ff_layer_norm->forward(op, x);
    return op.Add(x, moe ? moe->forward(op, h, attention_mask) : dense->forward(op, h));
  }

 public:
  Norm *self_attn_layer_norm, *ff_layer_norm;
  FeedForward* dense = nullptr;
  Top2SparseMLP* moe = nullptr;
};

class NllbMoeEncoderLayer : public NllbMoeLayer {
 public:
  NllbMoeEncoderLayer(const NllbMoeSpec& s, bool sparse) : NllbMoeLayer(s, s.encoder_ffn_dim, sparse) {
    self_attn = child<Attention>("self_attn", s.attention(s.encoder_heads));
  }
  Value* forward(Ops& op, Value* x, Value* mask, Value* attention_mask) const {
    auto sc = enter(op);
    x = op.Add(x, self_attn->forward(op, self_attn_layer_norm->forward(op, x), {.mask = mask}, nullptr, nullptr).hidden);
    return feed_forward(op, x, attention_mask);
  }
  Attention* self_attn;
};

class NllbMoeDecoderLayer : public NllbMoeLayer {
 public:
  NllbMoeDecoderLayer(const NllbMoeSpec& s, bool sparse) : NllbMoeLayer(s, s.decoder_ffn_dim, sparse) {
    self_attn = child<Attention>("self_attn", s.attention(s.decoder_heads));
    cross_attention = child<CrossAttention>("cross_attention", s.attention(s.decoder_heads));
    cross_attention_layer_norm = adopt("cross_attention_layer_norm", make_norm(s.norm()));
  }
  // Returns the output and the presents {self, cross}.
  std::pair<Value*, std::vector<KVPair>> forward(Ops& op, Value* x, Value* self_mask, Value* encoder_hidden_states,
                                                 Value* cross_mask, const std::vector<KVPair>& past) const {
    auto sc = enter(op);
    AttentionResult a =
        self_attn->forward(op, self_attn_layer_norm->forward(op, x), {.mask = self_mask}, past[0].key, past[0].value);
    x = op.Add(x, a.hidden);
    AttentionResult c = cross_attention->forward(op, cross_attention_layer_norm->forward(op, x), encoder_hidden_states,
                                                 cross_mask, past[1].key, past[1].value);
    x = op.Add(x, c.hidden);
    return {feed_forward(op, x, nullptr), {{a.present_key, a.present_value}, {c.present_key, c.present_value}}};
  }
  Attention* self_attn;
  CrossAttention* cross_attention;
  Norm* cross_attention_layer_norm;
};

class NllbMoeForConditionalGeneration : public Seq2SeqLM {
 public:
  explicit NllbMoeForConditionalGeneration(const NllbMoeSpec& s) : s_(s) {
    encoder_embed = child<Embedding>("model.encoder.embed_tokens", s.vocab_size, s.d_model, s.dtype);
    decoder_embed = child<Embedding>("model.decoder.embed_tokens", s.vocab_size, s.d_model, s.dtype);
    if (s.tied) encoder_embed->weight->source_key = decoder_embed->weight->source_key = "model.shared.weight";
    for (int64_t i = 0; i < s.encoder_layers; ++i)
      encoder_layers.push_back(child<NllbMoeEncoderLayer>("model.encoder.layers." + std::to_string(i), s,
                                                          NllbMoeSpec::sparse(s.encoder_sparse_step, i)));
    encoder_norm = adopt("model.encoder.layer_norm", make_norm(s.norm()));
    for (int64_t i = 0; i < s.decoder_layers; ++i)
      decoder_layers.push_back(child<NllbMoeDecoderLayer>("model.decoder.layers." + std::to_string(i), s,
                                                          NllbMoeSpec::sparse(s.decoder_sparse_step, i)));
    decoder_norm = adopt("model.decoder.layer_norm", make_norm(s.norm()));
    lm_head = child<LMHead>("lm_head", LMHeadOptions{s.d_model, s.vocab_size, false, s.dtype},
                            s.tied ? decoder_embed : nullptr);
  }

  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.d_model; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> decoder_states() const override {
    return self_and_cross_states(s_.decoder_layers, s_.decoder_heads, s_.d_model / s_.decoder_heads);
  }

  Value* encode(Ops& op, Value* input_ids, Value* attention_mask) const override {
    Value* h = embed(op, encoder_embed, input_ids, op.builder().ints({0}));
    Value* mask = padding_mask(op, attention_mask, s_.dtype);
    for (const NllbMoeEncoderLayer* l : encoder_layers) h = l->forward(op, h, mask, attention_mask);
    return encoder_norm->forward(op, h);
  }

  Seq2SeqDecoderOutputs decode(Ops& op, const Seq2SeqDecoderInputs& in) const override {
    Seq2SeqDecoderOutputs out;
    Seq2SeqStepMasks step = seq2seq_step_masks(op, in, s_.dtype);
    Value* h = embed(op, decoder_embed, in.input_ids, step.past_length);
    h = run_decoder_layers(op, h, decoder_layers, step.self_mask, step.cross_mask, in, out);
    out.logits = lm_head->forward(op, decoder_norm->forward(op, h));
    return out;
  }

  Embedding *encoder_embed, *decoder_embed;
  std::vector<NllbMoeEncoderLayer*> encoder_layers;
  std::vector<NllbMoeDecoderLayer*> decoder_layers;
  Norm *encoder_norm, *decoder_norm;
  LMHead* lm_head;

 private:
  // embed_tokens(input_ids) * embed_scale + the positions from the padding
  // (create_position_ids_from_input_ids with past_key_values_length = past).
  Value* embed(Ops& op, const Embedding* table, Value* input_ids, Value* past) const {
    Value* h = table->forward(op, input_ids);
    if (s_.embed_scale != 1.0f) h = op.Mul(h, s_.embed_scale);
    const auto pad = static_cast<double>(s_.pad_token_id);
    Value* token = op.Cast(op.Not(op.Equal(input_ids, pad)), {.to = DataType::INT64});
    Value* count = op.Mul(op.Add(op.CumSum(token, op.builder().scalar_i64(1)), past), token);
    return op.Add(h, sinusoidal_positions_t2t(op, op.Add(count, pad), s_.max_position_embeddings + 2, s_.d_model,
                                              s_.pad_token_id, s_.dtype));
  }

  NllbMoeSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_nllb_moe(const HfConfig& c, DataType dtype) {
  return std::make_unique<NllbMoeForConditionalGeneration>(nllb_moe_spec(c, dtype));
}

}  // namespace mobius
