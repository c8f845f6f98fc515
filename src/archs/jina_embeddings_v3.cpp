// The rotary post-norm encoders of transformers' jina_embeddings_v3 family
// (transformers/models/jina_embeddings_v3/modeling_jina_embeddings_v3.py, and its modular
// descendants nomic_bert/modeling_nomic_bert.py and gte/modeling_gte.py, with their
// configuration_*.py):
//   embeddings : LayerNorm(word_embeddings(input_ids) [+ token_type_embeddings(token_type_ids)])
//                (JinaEmbeddingsV3Embeddings: no position embeddings; GTE without token types when
//                type_vocab_size is 0)
//   each layer : h = post_attention_layernorm(x + self_attn(x))
//                out = post_mlp_layernorm(h + mlp(h))                   (JinaEmbeddingsV3Layer)
//     self_attn: {q, k, v, o}_proj, RoPE (Llama's rotate_half, default rope_theta of the config
//       class: jina 20000, nomic_bert 1000, gte 160000; rope_parameters as LlamaRotaryEmbedding
//       reads them) at positions 0..seq-1, bidirectional over the tokens of attention_mask
//     mlp: jina fc2(act(fc1(x))) (CLIPMLP, biases); nomic_bert down_proj(act(gate_proj(x)) *
//       up_proj(x)) (GemmaMLP, no biases, silu); gte the same with a bias on down_proj only
//   no final norm. The type differences: jina and gte have biases on the attention projections,
//   nomic_bert none; head_dim from config.json where set (all three read it).
// Checkpoint keys as transformers saves them (conversion_mapping.py turns its own names back into
// the original checkpoints' on save): q, k, v fused as [q | k | v] rows; jina emb_ln,
// encoder.layers.N.{mixer.Wqkv, mixer.out_proj, norm1, mlp.fc1, mlp.fc2, norm2}; nomic_bert emb_ln,
// encoder.layers.N.{attn.Wqkv, attn.out_proj, norm1, mlp.fc12 (gate), mlp.fc11 (up), mlp.fc2,
// norm2}; gte embeddings.LayerNorm, encoder.layer.N.{attention.qkv_proj, attention.o_proj, attn_ln,
// mlp.up_gate_proj ([up | gate] rows), mlp.down_proj, mlp_ln}, lm_head.norm.
// The unpadded implementations these models were trained with see each sequence from position 0;
// RoPE depends on i - j only, so the padded batch at positions 0..seq-1 equals them.
// Heads (tasks/text_heads.h): jina_embeddings_v3 has XLM-RoBERTa's (base_model_prefix "roberta":
// lm_head, classifier.dense / out_proj, classifier, qa_outputs); nomic_bert and gte BERT's
// pooler + classifier for text-classification and classifier for token-classification, and their
// own fill-mask heads (nomic_bert cls.predictions.transform.{dense, layer_norm} with hidden_act,
// decoder bias tied to cls.predictions.bias; gte lm_head.{dense, norm} with gelu and
// lm_head.decoder's own bias). None has multiple-choice; nomic_bert and gte no question answering.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "blocks/attention.h"
#include "blocks/mlp.h"
#include "blocks/spec_check.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"

namespace mobius {
namespace {

// Module names as the type's checkpoints spell them (see the top of this file).
struct RotaryEncoderNames {
  std::string embeddings_norm = "emb_ln";
  std::string layers = "encoder.layers";
  std::string attention = "mixer";  // its fused projection and o_proj: AttentionOptions
  std::string attention_norm = "norm1", mlp_norm = "norm2";
};

struct RotaryEncoderSpec {
  RotaryEncoderNames names;
  int64_t vocab_size, hidden_size, num_hidden_layers;
  int64_t type_vocab_size;  // 0: no token_type_embeddings, no token_type_ids input
  float layer_norm_eps;
  AttentionOptions attention;
  MLPOptions mlp;
  bool up_gate = false;  // UpGateMLP (gte) instead of make_mlp(mlp)
  RopeConfig rope;
  TextHeadLayout heads;
  DataType dtype;
};

NormOptions norm_options(const RotaryEncoderSpec& s) {
  return {.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype};
}

// GteMLP as saved: down_proj(act(gate) * up), up | gate the halves of up_gate_proj (no bias),
// down_proj's bias per MLPOptions::down_bias. x [..., hidden] -> [..., hidden].
class UpGateMLP : public FeedForward {
 public:
  explicit UpGateMLP(const MLPOptions& o) : intermediate_size_(o.intermediate_size) {
    init_activation(o.hidden_act, o.dtype);
    up_gate_proj = child<Linear>("up_gate_proj", LinearOptions{o.hidden_size, 2 * o.intermediate_size, o.bias, o.dtype});
    down_proj = child<Linear>("down_proj", LinearOptions{o.intermediate_size, o.hidden_size,
                                                         o.down_bias.value_or(o.bias), o.dtype});
  }
  Value* forward(Ops& op, Value* x) const override {
    auto s = enter(op);
    std::vector<Value*> up_gate = op.Split(up_gate_proj->forward(op, x), {intermediate_size_, intermediate_size_},
                                           {.axis = -1});
    return down_proj->forward(op, op.Mul(act(op, up_gate[1]), up_gate[0]));
  }
  Linear *up_gate_proj, *down_proj;

 private:
  int64_t intermediate_size_;
};

// JinaEmbeddingsV3Layer. forward: x [batch, seq, hidden] -> [batch, seq, hidden].
class RotaryEncoderLayer : public Module {
 public:
  RotaryEncoderLayer(const RotaryEncoderSpec& s, std::unique_ptr<FeedForward> feed_forward) {
    self_attn = child<Attention>(s.names.attention, s.attention);
    post_attention_layernorm = child<LayerNorm>(s.names.attention_norm, norm_options(s));
    mlp = adopt("mlp", std::move(feed_forward));
    post_mlp_layernorm = child<LayerNorm>(s.names.mlp_norm, norm_options(s));
  }
  Value* forward(Ops& op, Value* x, const AttentionContext& ctx) const {
    auto s = enter(op);
    Value* h = post_attention_layernorm->forward(op, op.Add(x, self_attn->forward(op, x, ctx, nullptr, nullptr).hidden));
    return post_mlp_layernorm->forward(op, op.Add(h, mlp->forward(op, h)));
  }

  Attention* self_attn;
  LayerNorm* post_attention_layernorm;
  FeedForward* mlp;
  LayerNorm* post_mlp_layernorm;
};

class RotaryEncoder : public Encoder {
 public:
  explicit RotaryEncoder(const RotaryEncoderSpec& s) : spec_(s) {
    check_attention(s.attention);
    words = child<Embedding>("embeddings.word_embeddings", s.vocab_size, s.hidden_size, s.dtype);
    if (s.type_vocab_size > 0)
      token_types = child<Embedding>("embeddings.token_type_embeddings", s.type_vocab_size, s.hidden_size, s.dtype);
    embeddings_norm = child<LayerNorm>(s.names.embeddings_norm, norm_options(s));
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<RotaryEncoderLayer>(s.names.layers + "." + std::to_string(i), s,
                                                 s.up_gate ? std::unique_ptr<FeedForward>(std::make_unique<UpGateMLP>(s.mlp)) : make_mlp(s.mlp)));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return token_types != nullptr; }
  const TextHeadLayout* head_layout() const override { return &spec_.heads; }
  const Embedding* word_embeddings() const override { return words; }

  Value* forward(Ops& op, const EncoderInputs& in) const override {
    GraphBuilder& b = op.builder();
    Value* h = words->forward(op, in.input_ids);
    if (token_types) h = op.Add(h, token_types->forward(op, in.token_type_ids));
    h = embeddings_norm->forward(op, h);
    Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
    Value* positions = op.Expand(op.Range(b.scalar_i64(0), seq, b.scalar_i64(1)), op.Shape(in.input_ids));
    const AttentionContext ctx{padding_mask(op, in.attention_mask, spec_.dtype),
                               rope_tables(op, spec_.rope, positions, spec_.dtype)};
    for (const RotaryEncoderLayer* layer : layers) h = layer->forward(op, h, ctx);
    return h;
  }

  Embedding* words;
  Embedding* token_types = nullptr;
  LayerNorm* embeddings_norm;
  std::vector<RotaryEncoderLayer*> layers;

 private:
  RotaryEncoderSpec spec_;
};

// The fields the three types read alike; head_dim from config.json's head_dim when set (nomic_bert's
// config field; jina and gte read it too: LlamaAttention's getattr(config, "head_dim", ...)), else
// hidden_size / num_attention_heads.
RotaryEncoderSpec rotary_encoder_spec(const HfConfig& c, DataType dtype, double default_theta) {
  if (c.bool_or("is_decoder", false)) c.fail("is_decoder", "only the bidirectional encoder is supported");
  RotaryEncoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = c.get_int("num_hidden_layers");
  s.type_vocab_size = c.int_or("type_vocab_size", 0);
  if (s.type_vocab_size < 0) c.fail("type_vocab_size", "must not be negative");
  s.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  const int64_t heads = c.get_int("num_attention_heads");
  AttentionOptions& a = s.attention;
  a.hidden_size = s.hidden_size;
  a.num_attention_heads = a.num_key_value_heads = heads;
  if (heads <= 0) c.fail("num_attention_heads", "must be positive");
  const std::optional<int64_t> head_dim = c.opt_int("head_dim");
  if (!head_dim && s.hidden_size % heads != 0) c.fail("num_attention_heads", "must divide hidden_size");
  a.head_dim = head_dim ? *head_dim : s.hidden_size / heads;
  a.qkv_bias = a.o_bias = true;
  a.fused_qkv = FusedQKV{.name = "Wqkv"};
  a.names.o_proj = "out_proj";
  a.dtype = dtype;
  s.rope = RopeConfig::from_hf(c, a.head_dim, {.rope_theta = default_theta});
  if (s.rope.rotary_dim() < 2 || s.rope.rotary_dim() % 2) c.fail("num_attention_heads", "the rotated head size must be even");
  s.mlp = MLPOptions{.hidden_size = s.hidden_size, .intermediate_size = c.get_int("intermediate_size"),
                     .hidden_act = read_activation(c, "hidden_act", "gelu"), .dtype = dtype};
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_jina_embeddings_v3(const HfConfig& c, DataType dtype) {
  RotaryEncoderSpec s = rotary_encoder_spec(c, dtype, 20000.0);
  s.mlp.gated = false;  // CLIPMLP: fc1, fc2 with biases
  s.mlp.bias = true;  // (s.names: the defaults, jina's)
  const FirstTokenHead classification{"classifier.dense", "tanh", "classifier.out_proj"};  // RobertaClassificationHead
  s.heads = TextHeadLayout{"roberta", "JinaEmbeddingsV3Model",
                           {"lm_head.dense", "gelu", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias",
                            s.layer_norm_eps},
                           classification, {}, {"multiple-choice"}};
  return std::make_unique<RotaryEncoder>(s);
}

std::unique_ptr<Architecture> create_nomic_bert(const HfConfig& c, DataType dtype) {
  RotaryEncoderSpec s = rotary_encoder_spec(c, dtype, 1000.0);
  s.attention.qkv_bias = s.attention.o_bias = false;
  s.names.attention = "attn";
  s.mlp.gate_name = "fc12";  // NomicBertMLP's gate_proj and up_proj as saved
  s.mlp.gated_up_name = "fc11";
  s.mlp.gated_down_name = "fc2";
  const FirstTokenHead pooled{"nomic_bert.pooler.dense", "tanh", "classifier"};  // NomicBertPooler + classifier
  s.heads = TextHeadLayout{"nomic_bert", "NomicBertModel",
                           {"cls.predictions.transform.dense", s.mlp.hidden_act, "cls.predictions.transform.layer_norm",
                            "cls.predictions.decoder", "cls.predictions.bias", s.layer_norm_eps},
                           pooled, {}, {"question-answering", "multiple-choice"}};
  return std::make_unique<RotaryEncoder>(s);
}

std::unique_ptr<Architecture> create_gte(const HfConfig& c, DataType dtype) {
  RotaryEncoderSpec s = rotary_encoder_spec(c, dtype, 160000.0);
  s.names = {.embeddings_norm = "embeddings.LayerNorm", .layers = "encoder.layer", .attention = "attention",
             .attention_norm = "attn_ln", .mlp_norm = "mlp_ln"};
  s.attention.fused_qkv = FusedQKV{.name = "qkv_proj"};
  s.attention.names.o_proj = "o_proj";
  s.up_gate = true;
  s.mlp.down_bias = true;  // GteMLP: up_gate_proj without bias
  const FirstTokenHead pooled{"gte.pooler.dense", "tanh", "classifier"};  // GtePooler + classifier
  s.heads = TextHeadLayout{"gte", "GteModel",
                           {"lm_head.dense", "gelu", "lm_head.norm", "lm_head.decoder", "lm_head.decoder.bias",
                            s.layer_norm_eps},
                           pooled, {}, {"question-answering", "multiple-choice"}};
  return std::make_unique<RotaryEncoder>(s);
}

}  // namespace mobius
