// RoC-BERT (transformers/models/roc_bert/modeling_roc_bert.py, configuration_roc_bert.py;
// RoCBertModel): BERT's layers and heads (archs/bert.h bert_spec, base_model_prefix "roc_bert")
// over embeddings that also read each token's glyph-shape and pronunciation ids, the graph inputs
// input_shape_ids and input_pronunciation_ids (int64 [batch_size, sequence_length], as
// RoCBertModel.forward names them; each only when enable_shape / enable_pronunciation):
//   concat_input true:  LayerNorm(map_inputs_layer(concat(word_embeddings(input_ids),
//                         shape_embed(input_shape_ids), pronunciation_embed(input_pronunciation_ids)))
//                         + token_type_embeddings + position_embeddings)
//   concat_input false: (LayerNorm(word + token type + position embeddings) + shape_embed(...)
//                         + pronunciation_embed(...)) / (1 + the number of enabled ones)
// Positions 0..seq-1 (BERT's).
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

struct RocBertSpec {
  EncoderSpec encoder;
  bool concat_input;
  bool shape, pronunciation;  // enable_shape, enable_pronunciation
  int64_t shape_vocab_size, shape_embed_dim, pronunciation_vocab_size, pronunciation_embed_dim;
};

// RoCBertEmbeddings (blocks/encoder.h TokenEmbeddings): input_ids, token_type_ids and the
// enabled ones of input_shape_ids, input_pronunciation_ids (EncoderInputs::extra, in that order),
// int64 [batch, seq] -> [batch, seq, hidden].
class RocBertEmbeddings : public TokenEmbeddings {
 public:
  explicit RocBertEmbeddings(const RocBertSpec& s) {
    const EncoderSpec& e = s.encoder;
    words = child<Embedding>("word_embeddings", e.vocab_size, e.hidden_size, e.dtype);
    int64_t width = e.hidden_size;
    if (s.shape) {
      extra.push_back(child<Embedding>("shape_embed", s.shape_vocab_size, s.shape_embed_dim, e.dtype));
      width += s.shape_embed_dim;
    }
    if (s.pronunciation) {
      extra.push_back(child<Embedding>("pronunciation_embed", s.pronunciation_vocab_size,
                                       s.pronunciation_embed_dim, e.dtype));
      width += s.pronunciation_embed_dim;
    }
    if (s.concat_input)
      map_inputs_layer = child<Linear>("map_inputs_layer", LinearOptions{width, e.hidden_size, true, e.dtype});
    position_embeddings = child<Embedding>("position_embeddings", e.max_position_embeddings, e.hidden_size, e.dtype);
    token_type_embeddings = child<Embedding>("token_type_embeddings", e.type_vocab_size, e.hidden_size, e.dtype);
    layer_norm = child<LayerNorm>("LayerNorm", NormOptions{.dim = e.hidden_size, .eps = e.layer_norm_eps, .dtype = e.dtype});
  }
  const Embedding* word_embeddings() const override { return words; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    auto s = enter(op);
    Value* positions = token_positions(op, in.input_ids, PositionIds::kArange, 0);
    Value* x = words->forward(op, in.input_ids);
    if (map_inputs_layer) {
      std::vector<Value*> parts = {x};
      for (size_t i = 0; i < extra.size(); ++i) parts.push_back(extra[i]->forward(op, in.extra[i]));
      x = map_inputs_layer->forward(op, parts.size() == 1 ? x : op.Concat(parts, {.axis = -1}));
    }
    x = op.Add(op.Add(x, token_type_embeddings->forward(op, in.token_type_ids)),
               position_embeddings->forward(op, positions));
    x = layer_norm->forward(op, x);
    if (map_inputs_layer || extra.empty()) return x;
    for (size_t i = 0; i < extra.size(); ++i) x = op.Add(x, extra[i]->forward(op, in.extra[i]));
    return op.Div(x, static_cast<double>(1 + extra.size()));
  }

  Embedding *words, *position_embeddings, *token_type_embeddings;
  std::vector<Embedding*> extra;  // shape_embed, pronunciation_embed: the enabled ones
  Linear* map_inputs_layer = nullptr;
  LayerNorm* layer_norm;
};

int64_t width(const HfConfig& c, const char* field, int64_t fallback) {
  const int64_t w = c.int_or(field, fallback);
  if (w <= 0 || w > kMaxHiddenSize) c.fail(field, "expected a positive width");
  return w;
}

}  // namespace

std::unique_ptr<Architecture> create_roc_bert(const HfConfig& c, DataType dtype) {
  RocBertSpec s;
  s.encoder = bert_spec(c, dtype, "roc_bert", "RoCBertModel");
  if (s.encoder.type_vocab_size <= 0) c.fail("type_vocab_size", "expected at least one token type");
  s.concat_input = c.bool_or("concat_input", true);
  s.shape = c.bool_or("enable_shape", true);
  s.pronunciation = c.bool_or("enable_pronunciation", true);
  s.shape_vocab_size = c.int_or("shape_vocab_size", 24858);
  s.shape_embed_dim = width(c, "shape_embed_dim", 512);
  s.pronunciation_vocab_size = c.int_or("pronunciation_vocab_size", 910);
  s.pronunciation_embed_dim = width(c, "pronunciation_embed_dim", 768);
  if (s.shape_vocab_size <= 0) c.fail("shape_vocab_size", "expected a positive vocabulary size");
  if (s.pronunciation_vocab_size <= 0) c.fail("pronunciation_vocab_size", "expected a positive vocabulary size");
  if (!s.concat_input && s.shape && s.shape_embed_dim != s.encoder.hidden_size)
    c.fail("shape_embed_dim", "must equal hidden_size when concat_input is false (the embeddings are added)");
  if (!s.concat_input && s.pronunciation && s.pronunciation_embed_dim != s.encoder.hidden_size)
    c.fail("pronunciation_embed_dim", "must equal hidden_size when concat_input is false (the embeddings are added)");
  std::vector<ExtraInput> inputs;
  if (s.shape) inputs.push_back({"input_shape_ids", {}});
  if (s.pronunciation) inputs.push_back({"input_pronunciation_ids", {}});
  return std::make_unique<PostNormEncoder>(
      s.encoder, EncoderParts{.embeddings = std::make_unique<RocBertEmbeddings>(s), .extra_inputs = inputs});
}

}  // namespace mobius
