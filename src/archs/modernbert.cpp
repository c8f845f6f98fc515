// ModernBERT (transformers/models/modernbert/modeling_modernbert.py, configuration_modernbert.py;
// ModernBertModel and its heads):
//   embeddings : norm(tok_embeddings(input_ids))                  (ModernBertEmbeddings, no positions)
//   each layer : h = x + attn(attn_norm(x))                        (attn_norm: none in layer 0)
//                out = h + mlp(mlp_norm(h))                        (ModernBertEncoderLayer)
//     attn: one Wqkv projection viewed [3, heads, head_dim] (q | k | v), RoPE (rotate_half) at
//       positions 0..seq-1, Wo; bidirectional over the tokens of attention_mask, and on a
//       "sliding_attention" layer only within |i - j| <= local_attention // 2
//       (create_bidirectional_sliding_window_mask, config.sliding_window)
//     mlp: Wo(act(input) * gate), input | gate the halves of Wi (GeGLU with hidden_activation gelu)
//   final_norm after the last layer. Every LayerNorm has a bias only with norm_bias.
// The layers' types: layer_types, else "full_attention" on every global_attn_every_n_layers-th
// layer from layer 0 (default 3), "sliding_attention" elsewhere; each type its own RoPE theta
// (rope_parameters.{full_attention, sliding_attention}, else global_rope_theta 160000 /
// local_rope_theta 10000 as ModernBertConfig.convert_rope_params_to_dict reads them; a legacy
// rope_scaling applies to both). Unpadding (flash attention's varlen path) is an implementation
// detail: RoPE and the window depend on i - j only, so the padded batch at positions 0..seq-1 is
// what each unpadded sequence computes.
// Heads (base_model_prefix "model"): fill-mask head.{dense, norm} (ModernBertPredictionHead:
// dense bias classifier_bias, classifier_activation) then decoder (tied to tok_embeddings, bias
// decoder_bias); text-classification and multiple-choice pool by classifier_pooling ("cls": token
// 0, multiple-choice the first kept token; "mean" over the mask), then head and classifier;
// token-classification and question-answering: classifier(head(x)) at every token.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/layer_types.h"
#include "archs/modernbert.h"
#include "blocks/attention.h"
#include "blocks/encoder.h"
#include "blocks/local_attention_mask.h"
#include "blocks/mlp.h"
#include "blocks/spec_check.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"

namespace mobius {
namespace {

struct ModernBertSpec {
  int64_t vocab_size, hidden_size, num_hidden_layers;
  float norm_eps;
  bool norm_bias;
  AttentionOptions attention;
  MLPOptions mlp;
  std::vector<std::string> layer_types;
  int64_t sliding_window;  // one-sided: local_attention // 2
  RopeConfig full_rope, sliding_rope;
  TextHeadLayout heads;
  DataType dtype;
};

NormOptions norm_options(const ModernBertSpec& s) {
  return {.dim = s.hidden_size, .eps = s.norm_eps, .dtype = s.dtype, .bias = s.norm_bias};
}

// ModernBertEncoderLayer. forward: x [batch, seq, hidden] -> [batch, seq, hidden].
class ModernBertLayer : public Module {
 public:
  ModernBertLayer(const ModernBertSpec& s, int64_t index) {
    if (index > 0) attn_norm = child<LayerNorm>("attn_norm", norm_options(s));
    attn = child<Attention>("attn", s.attention);
    mlp_norm = child<LayerNorm>("mlp_norm", norm_options(s));
    mlp = child<GatedMLP>("mlp", s.mlp);
  }
  Value* forward(Ops& op, Value* x, const AttentionContext& ctx) const {
    auto s = enter(op);
    Value* h = op.Add(x, attn->forward(op, attn_norm ? attn_norm->forward(op, x) : x, ctx, nullptr, nullptr).hidden);
    return op.Add(h, mlp->forward(op, mlp_norm->forward(op, h)));
  }

  LayerNorm* attn_norm = nullptr;  // nn.Identity in layer 0
  Attention* attn;
  LayerNorm* mlp_norm;
  GatedMLP* mlp;
};

class ModernBertModel : public Encoder {
 public:
  explicit ModernBertModel(const ModernBertSpec& s) : spec_(s) {
    check_attention(s.attention);
    words = child<Embedding>("embeddings.tok_embeddings", s.vocab_size, s.hidden_size, s.dtype);
    embeddings_norm = child<LayerNorm>("embeddings.norm", norm_options(s));
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<ModernBertLayer>("layers." + std::to_string(i), s, i));
    final_norm = child<LayerNorm>("final_norm", norm_options(s));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return false; }
  const TextHeadLayout* head_layout() const override { return &spec_.heads; }
  const Embedding* word_embeddings() const override { return words; }

  Value* forward(Ops& op, const EncoderInputs& in) const override {
    GraphBuilder& b = op.builder();
    Value* h = embeddings_norm->forward(op, words->forward(op, in.input_ids));
    Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
    Value* positions = op.Expand(op.Range(b.scalar_i64(0), seq, b.scalar_i64(1)), op.Shape(in.input_ids));
    const AttentionContext full{padding_mask(op, in.attention_mask, spec_.dtype),
                                rope_tables(op, spec_.full_rope, positions, spec_.dtype)};
    const AttentionContext sliding{local_padding_mask(op, in.attention_mask, spec_.sliding_window, spec_.dtype),
                                   rope_tables(op, spec_.sliding_rope, positions, spec_.dtype)};
    for (size_t i = 0; i < layers.size(); ++i)
      h = layers[i]->forward(op, h, spec_.layer_types[i] == "sliding_attention" ? sliding : full);
    return final_norm->forward(op, h);
  }

  Embedding* words;
  LayerNorm* embeddings_norm;
  std::vector<ModernBertLayer*> layers;
  LayerNorm* final_norm;

 private:
  ModernBertSpec spec_;
};

// The RoPE of one layer type: its rope_parameters entry, or without rope_parameters the legacy
// rope_scaling (ModernBertConfig.convert_rope_params_to_dict adds it to both types' dicts, which
// already say rope_type "default": only a rope_type key in it changes the type), the theta from
// `theta_key` (default `theta`) unless that entry sets one.
RopeConfig modernbert_rope(const HfConfig& c, const std::optional<HfConfig>& params, const char* theta_key,
                           double theta, int64_t head_dim) {
  std::optional<HfConfig> p = params;
  if (!c.sub("rope_parameters")) {
    p = c.sub("rope_scaling");
    if (p && !p->has("rope_type")) p.reset();
  }
  return RopeConfig::from_params(c, p, head_dim, {.rope_theta = c.float_or(theta_key, theta)});
}

}  // namespace

ModernBertLayers read_modernbert_layers(const HfConfig& c, int64_t num_hidden_layers, int64_t head_dim) {
  ModernBertLayers l;
  // __post_init__: layer i is global when i % global_attn_every_n_layers == 0
  const int64_t every = c.int_or("global_attn_every_n_layers", 3);
  if (every <= 0) c.fail("global_attn_every_n_layers", "must be positive");
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < num_hidden_layers; ++i) fallback.push_back(i % every ? "sliding_attention" : "full_attention");
  l.layer_types = read_layer_types(c, num_hidden_layers, fallback);
  // sliding_window is local_attention // 2 (-1 when null: ModernBertDecoderConfig); a
  // sliding_window in config.json wins (ModernBertConfig's setter, ModernBertDecoderConfig's
  // attribute set after __post_init__ computes it)
  if (c.has("sliding_window")) {
    l.sliding_window = c.get_int("sliding_window");
  } else {
    const auto& j = c.json();
    const bool null_local = j.contains("local_attention") && j["local_attention"].is_null();
    const int64_t local = null_local ? -1 : c.int_or("local_attention", 128);
    l.sliding_window = local < 0 ? -1 : local / 2;
  }
  // rope_parameters: dict[Literal["full_attention", "sliding_attention"], dict] (the config class
  // refuses a flat dict)
  if (c.sub("rope_parameters"))
    for (const auto& [key, value] : c.json()["rope_parameters"].items())
      if (key != "full_attention" && key != "sliding_attention")
        c.fail("rope_parameters", "its keys are the layer types full_attention and sliding_attention, not '" + key + "'");
  const auto [full, sliding] = read_layer_type_rope_params(c);
  l.full_rope = modernbert_rope(c, full, "global_rope_theta", 160000.0, head_dim);
  l.sliding_rope = modernbert_rope(c, sliding, "local_rope_theta", 10000.0, head_dim);
  for (const RopeConfig* r : {&l.full_rope, &l.sliding_rope})
    if (r->rotary_dim() < 2 || r->rotary_dim() % 2) c.fail("num_attention_heads", "the rotated head size must be even");
  return l;
}

std::unique_ptr<Architecture> create_modernbert(const HfConfig& c, DataType dtype) {
  ModernBertSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = c.get_int("num_hidden_layers");
  s.norm_eps = static_cast<float>(c.float_or("norm_eps", 1e-5));
  s.norm_bias = c.bool_or("norm_bias", false);
  AttentionOptions& a = s.attention = encoder_attention(c, s.hidden_size, dtype, {.o_proj = "Wo"});
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", false);
  a.fused_qkv = FusedQKV{.name = "Wqkv"};
  s.mlp = MLPOptions{.hidden_size = s.hidden_size, .intermediate_size = c.get_int("intermediate_size"),
                     .hidden_act = read_activation(c, "hidden_activation", "gelu"),
                     .bias = c.bool_or("mlp_bias", false), .dtype = dtype, .fused_gate_up = true,
                     .gated_down_name = "Wo", .gate_up_name = "Wi"};
  ModernBertLayers layers = read_modernbert_layers(c, s.num_hidden_layers, a.head_dim);
  if (layers.sliding_window < 0)
    c.fail(c.has("sliding_window") ? "sliding_window" : "local_attention", "must not be negative");
  s.layer_types = std::move(layers.layer_types);
  s.sliding_window = layers.sliding_window;
  s.full_rope = layers.full_rope;
  s.sliding_rope = layers.sliding_rope;

  const std::string act = read_activation(c, "classifier_activation", "gelu");
  const FirstTokenHead head{.dense = "head.dense", .act = act, .out = "classifier", .norm = "head.norm",
                            .dense_bias = c.bool_or("classifier_bias", false), .norm_bias = s.norm_bias,
                            .eps = s.norm_eps};
  const std::string pooling = c.string_or("classifier_pooling", "cls");
  if (pooling != "cls" && pooling != "mean") c.fail("classifier_pooling", "unsupported '" + pooling + "' (cls, mean)");
  FirstTokenHead sequence = head, choice = head;
  sequence.pooling = pooling == "mean" ? "mean" : "";  // "cls": token 0 (ModernBertForSequenceClassification)
  choice.pooling = pooling;                             // "cls": the first kept token (ModernBertForMultipleChoice)
  s.heads = TextHeadLayout{.base_model_prefix = "model", .base_model_class = "ModernBertModel",
                           .masked_lm = {.dense = "head.dense", .act = act, .norm = "head.norm", .decoder = "decoder",
                                         .bias = "decoder.bias", .eps = s.norm_eps,
                                         .dense_bias = head.dense_bias, .norm_bias = s.norm_bias,
                                         .decoder_bias = c.bool_or("decoder_bias", true)},
                           .sequence_classification = sequence, .multiple_choice = choice,
                           .token_classification = head, .question_answering = head};
  return std::make_unique<ModernBertModel>(s);
}

}  // namespace mobius
