// XLM and FlauBERT (transformers/models/xlm/modeling_xlm.py, configuration_xlm.py; flaubert/
// modeling_flaubert.py, configuration_flaubert.py; XLMModel / FlaubertModel and their heads):
//   embeddings : layer_norm_emb(embeddings(input_ids) + position_embeddings(0..seq-1)
//                [+ lang_embeddings(langs), n_langs > 1 and use_lang_emb] + embeddings(token_type_ids))
//                (token types index the word embeddings; a sinusoidal_embeddings table is saved
//                as position_embeddings' weight)
//   layers     : BERT's layers (blocks/encoder.h EncoderLayer) kept in parallel lists:
//                attentions.N.{q,k,v,out}_lin, layer_norm1.N, ffns.N.{lin1, lin2} (4 * emb_dim wide,
//                exact gelu, relu without gelu_activation), layer_norm2.N; post-norm (FlauBERT's
//                layerdrop: training only; its pre_norm is refused: transformers 5.23's FlaubertModel
//                fails on it, cache[i] of an EncoderDecoderCache, so there is nothing to equal)
//   output     : every row multiplied by attention_mask (padding positions 0, as XLMModel's
//                tensor *= mask; the attention never reads them)
// Config fields as XLMConfig.attribute_map reads them (hidden_size -> emb_dim, num_attention_heads
// -> n_heads, num_hidden_layers -> n_layers, n_words -> vocab_size). Inputs: input_ids,
// attention_mask, token_type_ids, and langs [batch, seq] with language embeddings.
// Heads (base_model_prefix "transformer"):
//   fill-mask (…WithLMHeadModel)  pred_layer.proj (tied to embeddings; asm's adaptive softmax refused)
//   text-classification          sequence_summary.summary (to num_labels) of the first token (or
//                                the last: summary_type), then summary_activation
//   multiple-choice              the same summary, then logits_proj (num_labels -> 1)
//   token-classification         classifier;  question-answering (…ForQuestionAnsweringSimple) qa_outputs
#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/encoder.h"
#include "blocks/spec_check.h"
#include "registry/config_defaults.h"
#include "tasks/image_classification.h"

namespace mobius {
namespace {

struct XlmSpec {
  EncoderSpec encoder;  // sizes, layers (names per layer below), heads
  int64_t n_langs;      // > 0: lang_embeddings and the langs input
};

class XlmModel : public Encoder {
 public:
  explicit XlmModel(const XlmSpec& s) : spec_(s) {
    const EncoderSpec& e = s.encoder;
    check_spec(e);
    words = child<Embedding>("embeddings", e.vocab_size, e.hidden_size, e.dtype);
    positions = child<Embedding>("position_embeddings", e.max_position_embeddings, e.hidden_size, e.dtype);
    if (s.n_langs > 0) langs = child<Embedding>("lang_embeddings", s.n_langs, e.hidden_size, e.dtype);
    layer_norm_emb = child<LayerNorm>("layer_norm_emb", NormOptions{.dim = e.hidden_size, .eps = e.layer_norm_eps,
                                                                    .dtype = e.dtype});
    for (int64_t i = 0; i < e.num_hidden_layers; ++i) {
      EncoderSpec layer = e;
      const std::string n = std::to_string(i);
      layer.names = {"attentions." + n, "layer_norm1." + n, "ffns." + n + ".lin1", "ffns." + n + ".lin2",
                     "layer_norm2." + n};
      layers.push_back(adopt("", std::make_unique<EncoderLayer>(layer)));
    }
  }
  DataType dtype() const override { return spec_.encoder.dtype; }
  int64_t hidden_size() const override { return spec_.encoder.hidden_size; }
  bool has_token_type_ids() const override { return true; }
  std::vector<ExtraInput> extra_inputs() const override {
    return langs ? std::vector<ExtraInput>{{"langs", {}}} : std::vector<ExtraInput>{};
  }
  const TextHeadLayout* head_layout() const override { return &*spec_.encoder.heads; }
  const Embedding* word_embeddings() const override { return words; }

  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* x = op.Add(words->forward(op, in.input_ids),
                      positions->forward(op, token_positions(op, in.input_ids, PositionIds::kArange, 0)));
    if (langs) x = op.Add(x, langs->forward(op, in.extra[0]));
    x = layer_norm_emb->forward(op, op.Add(x, words->forward(op, in.token_type_ids)));
    const AttentionContext ctx{padding_mask(op, in.attention_mask, spec_.encoder.dtype)};
    for (const EncoderLayer* layer : layers) x = layer->forward(op, x, ctx);
    return op.Mul(x, op.Unsqueeze(op.CastLike(in.attention_mask, x), {-1}));
  }

  Embedding *words, *positions, *langs = nullptr;
  LayerNorm* layer_norm_emb;
  std::vector<EncoderLayer*> layers;

 private:
  XlmSpec spec_;
};

std::unique_ptr<Architecture> make_xlm(const HfConfig& config, DataType dtype, const std::string& base_class) {
  const HfConfig c = with_attribute_map(config, {{"hidden_size", "emb_dim"}, {"num_attention_heads", "n_heads"},
                                                 {"num_hidden_layers", "n_layers"}, {"n_words", "vocab_size"}});
  if (!c.bool_or("is_encoder", true)) c.fail("is_encoder", "XLM is built as an encoder only (XLMModel refuses a decoder)");
  if (c.bool_or("causal", false)) c.fail("causal", "only the bidirectional encoder is supported (feature-extraction)");
  if (c.bool_or("asm", false)) c.fail("asm", "the adaptive log-softmax prediction layer is not supported");
  XlmSpec s;
  EncoderSpec& e = s.encoder;
  e.dtype = dtype;
  e.vocab_size = c.get_int("vocab_size");
  e.hidden_size = c.get_int("emb_dim");
  e.num_hidden_layers = c.get_int("n_layers");
  e.max_position_embeddings = c.int_or("max_position_embeddings", 512);
  e.intermediate_size = 4 * e.hidden_size;  // XLMModel.hidden_dim
  e.hidden_act = c.bool_or("gelu_activation", true) ? "gelu" : "relu";
  e.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  e.attention = encoder_attention(c, e.hidden_size, dtype, {"q_lin", "k_lin", "v_lin", "out_lin"}, "n_heads", "emb_dim");
  const int64_t n_langs = c.int_or("n_langs", 1);
  if (n_langs < 1 || n_langs > kMaxPositions) c.fail("n_langs", "expected at least 1");
  s.n_langs = n_langs > 1 && c.bool_or("use_lang_emb", true) ? n_langs : 0;

  // XLMSequenceSummary: the first or last token, summary (to num_labels), summary_activation
  const std::string type = c.string_or("summary_type", "first");
  if (type != "first" && type != "last")
    c.fail("summary_type", "only 'first' and 'last' are supported (the classification heads' summary)");
  if (!c.bool_or("summary_use_proj", true) || !c.bool_or("summary_proj_to_labels", true))
    c.fail(c.bool_or("summary_use_proj", true) ? "summary_proj_to_labels" : "summary_use_proj",
           "only a summary projected to the labels is supported (the classification heads' logits)");
  const std::string act = c.has("summary_activation") ? c.get_string("summary_activation") : "";
  if (!act.empty() && !is_known_activation(act)) c.fail("summary_activation", "unsupported activation '" + act + "'");
  const FirstTokenHead summary{.dense = "sequence_summary.summary", .act = act, .token = type == "last" ? -1 : 0};
  FirstTokenHead choice = summary;
  choice.out = "logits_proj";
  choice.width = label_count(c);
  e.heads = TextHeadLayout{.base_model_prefix = "transformer", .base_model_class = base_class,
                           .masked_lm = {.decoder = "pred_layer.proj", .bias = "pred_layer.proj.bias"},
                           .sequence_classification = summary, .multiple_choice = choice};
  return std::make_unique<XlmModel>(s);
}

}  // namespace

std::unique_ptr<Architecture> create_xlm(const HfConfig& c, DataType dtype) {
  return make_xlm(c, dtype, "XLMModel");
}

std::unique_ptr<Architecture> create_flaubert(const HfConfig& c, DataType dtype) {
  if (c.bool_or("pre_norm", false))
    c.fail("pre_norm", "unsupported: transformers' FlaubertModel fails on its pre-norm path (cache[i] of an "
                       "EncoderDecoderCache), which leaves no reference to equal");
  return make_xlm(c, dtype, "FlaubertModel");
}

}  // namespace mobius
