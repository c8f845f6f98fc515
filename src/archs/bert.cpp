// BERT-family encoders: one EncoderSpec (blocks/encoder.h) filled from config.json. The types
// differ only in fields and names (transformers/models/<type>/modeling_<type>.py):
//   bert, ernie     BertModel: position ids 0..seq-1, token type embeddings
//                   (ernie: only without use_task_id)
//   roberta, xlm-roberta, camembert, data2vec-text
//                   as bert, position ids counted from padding_idx + 1 over the non-padding
//                   tokens of input_ids (RobertaEmbeddings)
//   electra         as bert, embeddings of width embedding_size projected to hidden_size by
//                   embeddings_project when the two differ
//   mpnet           as roberta (padding_idx 1), no token type embeddings, attention.attn.{q,k,v,o},
//                   attention.LayerNorm, a relative position bias (T5's buckets, 32 of them, up to
//                   distance 128) shared by the layers: encoder.relative_attention_bias; heads as roberta
//   albert          BERT's layers shared across depth (AlbertTransformer): embeddings of width
//                   embedding_size, encoder.embedding_hidden_mapping_in to hidden_size, layer i runs
//                   group int(i / (num_hidden_layers / num_hidden_groups)) of
//                   encoder.albert_layer_groups, each group its inner_group_num albert_layers
//                   (attention.{query,key,value,dense,LayerNorm}, ffn, ffn_output,
//                   full_layer_layer_norm); heads: predictions.{dense, hidden_act, LayerNorm,
//                   decoder, bias} from embedding_size, albert.pooler + tanh + classifier
//   roformer        as bert without position embeddings: q and k rotated (interleaved pairs) by
//                   the sin | cos table encoder.embed_positions (saved with the weights), embeddings
//                   of width embedding_size projected by embeddings_project as ELECTRA's; heads:
//                   cls.predictions (from embedding_size), classifier.dense + hidden_act +
//                   classifier.out_proj, multiple choice the last token's sequence_summary + classifier
//   rembert         as bert, embeddings of width input_embedding_size projected to hidden_size by
//                   encoder.embedding_hidden_mapping_in; fill-mask cls.predictions.{dense (to
//                   output_embedding_size), hidden_act, LayerNorm, decoder} untied by default
//   distilbert      no token type embeddings; fields dim / n_layers / n_heads / hidden_dim /
//                   activation; layers transformer.layer.{i} with attention.{q,k,v,out}_lin,
//                   sa_layer_norm, ffn.lin1/lin2, output_layer_norm; LayerNorm eps fixed at 1e-12
//   roberta-prelayernorm  as roberta with pre-norm layers (blocks/encoder.h): attention.LayerNorm,
//                   intermediate.LayerNorm, the model's LayerNorm after the last layer
//   xlm-roberta-xl  as roberta with pre-norm layers: attention.self_attn_layer_norm, LayerNorm,
//                   encoder.LayerNorm after the last layer, no LayerNorm in the embeddings
//   megatron-bert   as bert with pre-norm layers: attention.ln, ln, encoder.ln after the last
//                   layer, no LayerNorm in the embeddings
// All: post-norm layers (but the three above), bidirectional attention with q/k/v/o biases, no pooler (the
// feature-extraction output is last_hidden_state; pooler weights stay unused).
// Heads (tasks/text_heads.h), as each type's <Type>For<Task> classes name them:
//   bert, ernie     cls.predictions.{transform.dense, hidden_act, transform.LayerNorm, decoder, bias};
//                   classification and multiple choice over <prefix>.pooler.dense + tanh + classifier
//   roberta & co.   lm_head.{dense, gelu, layer_norm, decoder, bias}; classification
//                   classifier.dense + tanh + classifier.out_proj (RobertaClassificationHead),
//                   multiple choice <prefix>.pooler.dense + tanh + classifier
//   electra         generator_predictions.{dense, gelu, LayerNorm} + generator_lm_head (from
//                   embedding_size); classifier.dense + gelu + classifier.out_proj; multiple choice
//                   sequence_summary.summary + summary_activation + classifier (ElectraSequenceSummary)
//   distilbert      vocab_transform, activation, vocab_layer_norm (eps 1e-12), vocab_projector;
//                   pre_classifier + relu + classifier for classification and multiple choice
//   all             token classification: classifier; question answering: qa_outputs
#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/encoder.h"
#include "blocks/spec_check.h"
#include "util/error.h"

namespace mobius {
namespace {

// The checkpoint's field names for the sizes shared by every member.
struct SizeFields {
  const char* hidden_size = "hidden_size";
  const char* num_hidden_layers = "num_hidden_layers";
  const char* num_attention_heads = "num_attention_heads";
  const char* intermediate_size = "intermediate_size";
  const char* hidden_act = "hidden_act";
};

// BertConfig's is_decoder and position_embedding_type: only the bidirectional encoder with
// absolute position embeddings.
void check_bert_options(const HfConfig& c) {
  if (c.bool_or("is_decoder", false))
    c.fail("is_decoder", "only the bidirectional encoder is supported (feature-extraction)");
  if (c.has("position_embedding_type") && c.get_string("position_embedding_type") != "absolute")
    c.fail("position_embedding_type", "unsupported '" + c.get_string("position_embedding_type") +
                                          "' (only absolute position embeddings)");
}

// The sizes, hidden_act and attention of every member, under the checkpoint's field names.
EncoderSpec encoder_sizes(const HfConfig& c, DataType dtype, const SizeFields& f = {}) {
  EncoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int(f.hidden_size);
  s.num_hidden_layers = c.get_int(f.num_hidden_layers);
  s.max_position_embeddings = c.int_or("max_position_embeddings", 512);
  s.intermediate_size = c.get_int(f.intermediate_size);
  s.hidden_act = c.string_or(f.hidden_act, "gelu");
  if (!is_known_activation(s.hidden_act))
    c.fail(f.hidden_act, "unsupported activation '" + s.hidden_act + "'");
  s.attention = encoder_attention(c, s.hidden_size, dtype, {"self.query", "self.key", "self.value", "output.dense"},
                                  f.num_attention_heads, f.hidden_size);
  return s;
}

EncoderSpec encoder_spec(const HfConfig& c, DataType dtype, const SizeFields& f = {}) {
  check_bert_options(c);
  return encoder_sizes(c, dtype, f);
}

}  // namespace

FirstTokenHead sequence_summary(const HfConfig& c, const std::string& default_type, bool default_use_proj) {
  const std::string type = c.string_or("summary_type", default_type);
  if (type != "first" && type != "last")
    c.fail("summary_type", "only 'first' and 'last' are supported (the multiple-choice head's summary)");
  if (c.bool_or("summary_proj_to_labels", false))
    c.fail("summary_proj_to_labels", "a summary projected to the labels is not supported");
  FirstTokenHead h{c.bool_or("summary_use_proj", default_use_proj) ? "sequence_summary.summary" : "",
                   c.has("summary_activation") ? c.get_string("summary_activation") : "", "classifier",
                   type == "last" ? -1 : 0};
  if (!h.act.empty() && !is_known_activation(h.act))
    c.fail("summary_activation", "unsupported activation '" + h.act + "'");
  return h;
}

EncoderSpec bert_encoder_spec(const HfConfig& c, DataType dtype) {
  EncoderSpec s = encoder_sizes(c, dtype);
  s.type_vocab_size = c.int_or("type_vocab_size", 2);
  s.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  return s;
}

EncoderSpec bert_spec(const HfConfig& c, DataType dtype, const std::string& prefix, const std::string& base_class) {
  check_bert_options(c);
  EncoderSpec s = bert_encoder_spec(c, dtype);
  const FirstTokenHead pooled{prefix + ".pooler.dense", "tanh", "classifier"};  // BertPooler + classifier
  s.heads = TextHeadLayout{prefix, base_class,
                           {"cls.predictions.transform.dense", s.hidden_act, "cls.predictions.transform.LayerNorm",
                            "cls.predictions.decoder", "cls.predictions.bias", s.layer_norm_eps},
                           pooled, pooled};
  return s;
}

EncoderSpec roberta_spec(const HfConfig& c, DataType dtype, const std::string& prefix, const std::string& base_class) {
  EncoderSpec s = bert_spec(c, dtype, prefix, base_class);
  s.position_ids = PositionIds::kFromInputIds;
  s.padding_idx = c.int_or("pad_token_id", 1);
  s.heads->masked_lm = {"lm_head.dense", "gelu", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias",
                        s.layer_norm_eps};
  s.heads->sequence_classification = {"classifier.dense", "tanh", "classifier.out_proj"};
  return s;
}

namespace {

std::unique_ptr<Architecture> make_roberta(const HfConfig& c, DataType dtype, const std::string& prefix,
                                           const std::string& base_class) {
  return std::make_unique<PostNormEncoder>(roberta_spec(c, dtype, prefix, base_class));
}

std::unique_ptr<Architecture> make(const EncoderSpec& s) {
  return std::make_unique<PostNormEncoder>(s);
}

class AlbertEncoder : public Encoder {
 public:
  AlbertEncoder(const EncoderSpec& s, int64_t groups, int64_t inner) : spec_(s) {
    check_spec(s);
    embeddings = child<EncoderEmbeddings>("embeddings", s);
    embedding_hidden_mapping_in = child<Linear>("encoder.embedding_hidden_mapping_in",
                                                LinearOptions{s.embedding_size, s.hidden_size, true, s.dtype});
    std::vector<std::vector<EncoderLayer*>> group_layers(groups);
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t j = 0; j < inner; ++j)
        group_layers[g].push_back(child<EncoderLayer>(
            "encoder.albert_layer_groups." + std::to_string(g) + ".albert_layers." + std::to_string(j), s));
    const double per_group = static_cast<double>(s.num_hidden_layers) / static_cast<double>(groups);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      for (EncoderLayer* layer : group_layers[static_cast<int64_t>(static_cast<double>(i) / per_group)])
        layers_.push_back(layer);
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return true; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = embedding_hidden_mapping_in->forward(op, embeddings->forward(op, in.input_ids, in.token_type_ids));
    const AttentionContext ctx{padding_mask(op, in.attention_mask, spec_.dtype)};
    for (const EncoderLayer* layer : layers_) h = layer->forward(op, h, ctx);
    return h;
  }

  EncoderEmbeddings* embeddings;
  Linear* embedding_hidden_mapping_in;

 private:
  EncoderSpec spec_;
  std::vector<EncoderLayer*> layers_;  // in the order they run, shared ones repeated
};

}  // namespace

std::unique_ptr<Architecture> create_bert(const HfConfig& c, DataType dtype) {
  return make(bert_spec(c, dtype, "bert", "BertModel"));
}

std::unique_ptr<Architecture> create_ernie(const HfConfig& c, DataType dtype) {
  if (c.bool_or("use_task_id", false))
    c.fail("use_task_id", "task type embeddings (task_type_ids) are not supported");
  return make(bert_spec(c, dtype, "ernie", "ErnieModel"));
}

std::unique_ptr<Architecture> create_roberta(const HfConfig& c, DataType dtype) {
  return make_roberta(c, dtype, "roberta", "RobertaModel");
}

std::unique_ptr<Architecture> create_xlm_roberta(const HfConfig& c, DataType dtype) {
  return make_roberta(c, dtype, "roberta", "XLMRobertaModel");
}

std::unique_ptr<Architecture> create_camembert(const HfConfig& c, DataType dtype) {
  return make_roberta(c, dtype, "roberta", "CamembertModel");
}

std::unique_ptr<Architecture> create_data2vec_text(const HfConfig& c, DataType dtype) {
  return make_roberta(c, dtype, "data2vec_text", "Data2VecTextModel");
}

std::unique_ptr<Architecture> create_roberta_prelayernorm(const HfConfig& c, DataType dtype) {
  EncoderSpec s = roberta_spec(c, dtype, "roberta_prelayernorm", "RobertaPreLayerNormModel");
  s.placement = NormPlacement::pre;
  s.names.attention_norm = "attention.LayerNorm";
  s.names.ffn_norm = "intermediate.LayerNorm";
  s.final_norm = "LayerNorm";
  return make(s);
}

std::unique_ptr<Architecture> create_xlm_roberta_xl(const HfConfig& c, DataType dtype) {
  EncoderSpec s = roberta_spec(c, dtype, "roberta", "XLMRobertaXLModel");
  s.placement = NormPlacement::pre;
  s.names.attention_norm = "attention.self_attn_layer_norm";
  s.names.ffn_norm = "LayerNorm";
  s.embeddings_norm = "";
  s.final_norm = "encoder.LayerNorm";
  return make(s);
}

std::unique_ptr<Architecture> create_megatron_bert(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "bert", "MegatronBertModel");
  s.placement = NormPlacement::pre;
  s.names.attention_norm = "attention.ln";
  s.names.ffn_norm = "ln";
  s.embeddings_norm = "";
  s.final_norm = "encoder.ln";
  return make(s);
}

std::unique_ptr<Architecture> create_mpnet(const HfConfig& c, DataType dtype) {
  EncoderSpec s = roberta_spec(c, dtype, "mpnet", "MPNetModel");
  s.type_vocab_size = 0;
  s.padding_idx = 1;  // MPNetEmbeddings.padding_idx, whatever pad_token_id says
  s.attention.names = {"attn.q", "attn.k", "attn.v", "attn.o"};
  s.names.attention_norm = "attention.LayerNorm";
  s.relative_attention_num_buckets = c.int_or("relative_attention_num_buckets", 32);
  if (s.relative_attention_num_buckets != 32)  // MPNetEncoder.compute_position_bias(num_buckets=32)
    c.fail("relative_attention_num_buckets", "MPNet's encoder buckets the distances for a table of 32 rows");
  return make(s);
}

std::unique_ptr<Architecture> create_albert(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "albert", "AlbertModel");
  s.embedding_size = c.int_or("embedding_size", 128);
  if (s.embedding_size <= 0 || s.embedding_size > kMaxHiddenSize) c.fail("embedding_size", "expected a positive width");
  s.attention.names = {"query", "key", "value", "dense"};
  s.names = {"attention", "attention.LayerNorm", "ffn", "ffn_output", "full_layer_layer_norm"};
  s.heads->masked_lm = {"predictions.dense", s.hidden_act, "predictions.LayerNorm", "predictions.decoder",
                        "predictions.bias", s.layer_norm_eps};
  s.heads->sequence_classification = s.heads->multiple_choice = {"albert.pooler", "tanh", "classifier"};
  const int64_t groups = c.int_or("num_hidden_groups", 1), inner = c.int_or("inner_group_num", 1);
  if (groups < 1 || groups > s.num_hidden_layers)
    c.fail("num_hidden_groups", "expected 1 .. num_hidden_layers groups");
  if (inner < 1 || inner > s.num_hidden_layers) c.fail("inner_group_num", "expected 1 .. num_hidden_layers layers");
  return std::make_unique<AlbertEncoder>(s, groups, inner);
}

std::unique_ptr<Architecture> create_electra(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "electra", "ElectraModel");
  s.embedding_size = c.int_or("embedding_size", 128);
  s.heads->masked_lm = {"generator_predictions.dense", "gelu", "generator_predictions.LayerNorm",
                        "generator_lm_head", "generator_lm_head.bias", s.layer_norm_eps};
  s.heads->sequence_classification = {"classifier.dense", "gelu", "classifier.out_proj"};
  s.heads->multiple_choice = sequence_summary(c, "first", true);
  return make(s);
}

std::unique_ptr<Architecture> create_roformer(const HfConfig& c, DataType dtype) {
  if (c.bool_or("rotary_value", false)) c.fail("rotary_value", "rotating the values is not supported");
  EncoderSpec s = bert_spec(c, dtype, "roformer", "RoFormerModel");
  s.embedding_size = c.int_or("embedding_size", s.hidden_size);  // RoFormerConfig: null -> hidden_size
  if (s.embedding_size <= 0 || s.embedding_size > kMaxHiddenSize) c.fail("embedding_size", "expected a positive width");
  if (s.attention.head_dim % 2 != 0) c.fail("num_attention_heads", "the rotated head size must be even");
  s.rope_table = "encoder.embed_positions";
  s.attention.rope_interleaved = true;
  s.heads->sequence_classification = {"classifier.dense", s.hidden_act, "classifier.out_proj"};
  s.heads->multiple_choice = sequence_summary(c, "last", false);
  return make(s);
}

std::unique_ptr<Architecture> create_rembert(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "rembert", "RemBertModel");
  s.embedding_size = c.int_or("input_embedding_size", 256);
  if (s.embedding_size <= 0 || s.embedding_size > kMaxHiddenSize)
    c.fail("input_embedding_size", "expected a positive width");
  s.embeddings_project = "encoder.embedding_hidden_mapping_in";
  const int64_t output_size = c.int_or("output_embedding_size", 1664);
  if (output_size <= 0 || output_size > kMaxHiddenSize) c.fail("output_embedding_size", "expected a positive width");
  if (c.bool_or("tie_word_embeddings", false) && output_size != s.embedding_size)
    c.fail("tie_word_embeddings", "the decoder is tied to the input embeddings only when output_embedding_size "
                                  "equals input_embedding_size");
  s.heads->masked_lm = {"cls.predictions.dense", s.hidden_act, "cls.predictions.LayerNorm", "cls.predictions.decoder",
                        "cls.predictions.decoder.bias", s.layer_norm_eps, output_size};
  return make(s);
}

std::unique_ptr<Architecture> create_distilbert(const HfConfig& c, DataType dtype) {
  EncoderSpec s = encoder_spec(c, dtype, {"dim", "n_layers", "n_heads", "hidden_dim", "activation"});
  s.layers = "transformer.layer";
  s.attention.names = {"q_lin", "k_lin", "v_lin", "out_lin"};
  s.names = {"attention", "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm"};
  const FirstTokenHead pre_classifier{"pre_classifier", "relu", "classifier"};
  s.heads = TextHeadLayout{"distilbert", "DistilBertModel",
                           {"vocab_transform", s.hidden_act, "vocab_layer_norm", "vocab_projector",
                            "vocab_projector.bias", 1e-12f},
                           pre_classifier, pre_classifier};
  return make(s);
}

}  // namespace mobius
