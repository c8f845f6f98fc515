// CANINE (transformers/models/canine/modeling_canine.py, configuration_canine.py; CanineModel and its
// heads), character-level, no vocabulary: input_ids are Unicode code points.
//   char_embeddings     concat_k HashBucketCodepointEmbedder_k(((ids + 1) * prime_k) % num_hash_buckets)
//                       (num_hash_functions tables of hidden_size / num_hash_functions, primes 31, 43, ...)
//                       + token_type_embeddings + char_position_embeddings(0..seq-1), LayerNorm
//   initial_char_encoder  one BERT layer (blocks/encoder.h EncoderLayer, BERT's names) of local attention:
//                       query i sees the tokens j of attention_mask with i // s == j // s,
//                       s = local_transformer_stride (CanineAttention's chunks: from and to chunks alike)
//   chars_to_molecules  Conv1d(hidden, hidden, downsampling_rate, stride downsampling_rate), hidden_act,
//                       the last molecule dropped, the first character prepended, LayerNorm
//   encoder             num_hidden_layers BERT layers over the molecules, whose mask is attention_mask
//                       max-pooled by downsampling_rate (_downsample_attention_mask)
//   pooler              pooler_output = tanh(pooler.dense(molecules[:, 0]))
//   projection          the molecules repeated back to characters (_repeat_molecules: molecule
//                       min(i // rate + 1, last) for character i) concatenated after the characters'
//                       encoding, Conv1d(2 * hidden, hidden, upsampling_kernel_size) with zero padding
//                       (k - 1) // 2 before and the rest after, hidden_act, LayerNorm
//   final_char_encoder  one BERT layer of full attention: last_hidden_state
// Heads (base_model_prefix "canine"; no masked LM): text-classification and multiple-choice a
// classifier over pooler_output, token-classification classifier, question-answering qa_outputs.
#include <array>
#include <memory>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/conv.h"
#include "blocks/encoder.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/spec_check.h"
#include "blocks/vision_transformer.h"

namespace mobius {
namespace {

constexpr std::array<int64_t, 16> kCaninePrimes = {31,  43,  59,  61,  73,  97,  103, 113,
                                                   137, 149, 157, 173, 181, 193, 211, 223};

struct CanineSizes {
  int64_t num_hash_functions, num_hash_buckets, downsampling_rate, upsampling_kernel_size, local_transformer_stride;
};

class CanineModel : public Encoder {
 public:
  CanineModel(const EncoderSpec& s, const CanineSizes& z) : spec_(s), z_(z) {
    const int64_t H = s.hidden_size;
    for (int64_t k = 0; k < z.num_hash_functions; ++k)
      hash_embedders_.push_back(child<Embedding>("char_embeddings.HashBucketCodepointEmbedder_" + std::to_string(k),
                                                 z.num_hash_buckets, H / z.num_hash_functions, s.dtype));
    char_position_embeddings_ =
        child<Embedding>("char_embeddings.char_position_embeddings", z.num_hash_buckets, H, s.dtype);
    token_type_embeddings_ = child<Embedding>("char_embeddings.token_type_embeddings", s.type_vocab_size, H, s.dtype);
    const NormOptions norm{.dim = H, .eps = s.layer_norm_eps, .dtype = s.dtype};
    embeddings_norm_ = child<LayerNorm>("char_embeddings.LayerNorm", norm);
    initial_layer_ = child<EncoderLayer>("initial_char_encoder.layer.0", s);
    downsample_ = child<Conv1d>("chars_to_molecules.conv",
                                Conv1dOptions{.in_channels = H, .out_channels = H, .kernel_size = z.downsampling_rate,
                                              .stride = z.downsampling_rate, .dtype = s.dtype});
    downsample_norm_ = child<LayerNorm>("chars_to_molecules.LayerNorm", norm);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers_.push_back(child<EncoderLayer>("encoder.layer." + std::to_string(i), s));
    pooler_ = child<Linear>("pooler.dense", LinearOptions{H, H, true, s.dtype});
    projection_ = child<Conv1d>("projection.conv", Conv1dOptions{.in_channels = 2 * H, .out_channels = H,
                                                                 .kernel_size = z.upsampling_kernel_size,
                                                                 .dtype = s.dtype});
    projection_norm_ = child<LayerNorm>("projection.LayerNorm", norm);
    final_layer_ = child<EncoderLayer>("final_char_encoder.layer.0", s);
  }

  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return true; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  Value* forward(Ops& op, const EncoderInputs& in) const override { return forward_outputs(op, in).last_hidden_state; }

  EncoderOutputs forward_outputs(Ops& op, const EncoderInputs& in) const override {
    GraphBuilder& b = op.builder();
    const int64_t rate = z_.downsampling_rate;
    Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
    Value* positions = op.Range(b.scalar_i64(0), seq, b.scalar_i64(1));  // [seq]
    // CanineEmbeddings
    std::vector<Value*> shards;
    Value* shifted = op.Add(in.input_ids, b.scalar_i64(1));
    for (size_t k = 0; k < hash_embedders_.size(); ++k) {
      Value* hashed = op.Mul(shifted, b.scalar_i64(kCaninePrimes[k]));  // >= 0: Div floors, hashed % buckets
      Value* bucket = op.Sub(hashed, op.Mul(op.Div(hashed, b.scalar_i64(z_.num_hash_buckets)),
                                           b.scalar_i64(z_.num_hash_buckets)));
      shards.push_back(hash_embedders_[k]->forward(op, bucket));
    }
    Value* h = op.Concat(shards, {.axis = -1});
    h = op.Add(h, token_type_embeddings_->forward(op, in.token_type_ids));
    h = op.Add(h, char_position_embeddings_->forward(op, positions));
    Value* chars = initial_layer_->forward(op, embeddings_norm_->forward(op, h),
                                           AttentionContext{local_mask(op, in.attention_mask, positions)});
    // CharactersToMolecules
    Value* down = downsample_->forward(op, transpose_channels(op, chars));
    down = activation(op, spec_.hidden_act, transpose_channels(op, down));
    Value* molecules = op.Concat({op.Slice(chars, {0}, {1}, {1}), op.Slice(down, {0}, {-1}, {1})}, {.axis = 1});
    molecules = downsample_norm_->forward(op, molecules);
    // the molecules' mask: attention_mask max-pooled by rate (the trailing characters dropped)
    Value* count = op.Div(seq, b.scalar_i64(rate));
    Value* end = op.Unsqueeze(op.Mul(count, b.scalar_i64(rate)), {0});
    Value* kept = op.Slice(in.attention_mask, b.ints({0}), end, b.ints({1}));
    Value* molecule_mask = op.ReduceMax(op.Reshape(kept, b.ints({0, -1, rate})), {2}, {.keepdims = 0});
    const AttentionContext deep{padding_mask(op, molecule_mask, spec_.dtype)};
    for (const EncoderLayer* layer : layers_) molecules = layer->forward(op, molecules, deep);
    Value* pooled = op.Tanh(pooler_->forward(op, token_at(op, molecules, 0)));
    // _repeat_molecules: character i reads molecule min(i // rate + 1, molecules - 1)
    Value* last = op.Sub(op.Squeeze(op.Shape(molecules, {.start = 1, .end = 2}), {0}), b.scalar_i64(1));
    Value* index = op.Min(op.Add(op.Div(positions, b.scalar_i64(rate)), b.scalar_i64(1)), last);
    Value* repeated = op.Gather(molecules, index, {.axis = 1});
    // ConvProjection: zero padding (k - 1) // 2 before, the rest after
    const int64_t k = z_.upsampling_kernel_size, before = (k - 1) / 2;
    Value* projected = op.Conv(transpose_channels(op, op.Concat({chars, repeated}, {.axis = -1})),
                               projection_->weight->value(op), projection_->bias->value(op),
                               {.kernel_shape = {k}, .strides = {1}, .pads = {before, k - 1 - before}});
    projected = projection_norm_->forward(op, activation(op, spec_.hidden_act, transpose_channels(op, projected)));
    const AttentionContext full{padding_mask(op, in.attention_mask, spec_.dtype)};
    Value* out = final_layer_->forward(op, projected, full);
    return {out, pooled};
  }

 private:
  static Value* transpose_channels(Ops& op, Value* x) { return op.Transpose(x, {.perm = {0, 2, 1}}); }

  // The initial encoder's local attention: key j of attention_mask for query i when i // s == j // s;
  // positions [seq] -> additive [batch, 1, seq, seq]: 0 there, half the dtype's lowest value at the
  // padding of i's chunk, the lowest value outside it. A chunk without tokens (all padding) thus
  // attends uniformly over its own keys, as CanineAttention's per-chunk softmax does there (its
  // scores + lowest all round to lowest), not over the whole sequence.
  Value* local_mask(Ops& op, Value* attention_mask, Value* positions) const {
    GraphBuilder& b = op.builder();
    Value* chunk = op.Div(positions, b.scalar_i64(z_.local_transformer_stride));
    Value* same = op.Equal(op.Unsqueeze(chunk, {1}), op.Unsqueeze(chunk, {0}));  // [seq, seq]
    Value* keys = op.Unsqueeze(op.Cast(attention_mask, {.to = DataType::BOOL}), {1, 2});  // [batch, 1, 1, seq]
    Value* padding = op.Mul(additive_mask(op, keys, spec_.dtype), 0.5);
    return op.Where(same, padding, additive_mask(op, same, spec_.dtype));
  }

  EncoderSpec spec_;
  CanineSizes z_;
  std::vector<Embedding*> hash_embedders_;
  Embedding *char_position_embeddings_, *token_type_embeddings_;
  LayerNorm *embeddings_norm_, *downsample_norm_, *projection_norm_;
  EncoderLayer *initial_layer_, *final_layer_;
  std::vector<EncoderLayer*> layers_;
  Conv1d *downsample_, *projection_;
  Linear* pooler_;
};

}  // namespace

std::unique_ptr<Architecture> create_canine(const HfConfig& c, DataType dtype) {
  EncoderSpec s;
  s.dtype = dtype;
  s.vocab_size = 0;  // no word embeddings: the hash tables below
  s.hidden_size = c.get_int("hidden_size");
  check_size("hidden_size", s.hidden_size, kMaxHiddenSize);
  s.num_hidden_layers = c.get_int("num_hidden_layers");
  check_size("num_hidden_layers", s.num_hidden_layers, kMaxLayers);
  s.intermediate_size = c.get_int("intermediate_size");
  check_size("intermediate_size", s.intermediate_size, kMaxFfnSize);
  s.hidden_act = c.string_or("hidden_act", "gelu");
  if (!is_known_activation(s.hidden_act)) c.fail("hidden_act", "unsupported activation '" + s.hidden_act + "'");
  s.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  s.type_vocab_size = c.int_or("type_vocab_size", 16);
  check_size("type_vocab_size", s.type_vocab_size, kMaxVocabSize);
  s.attention = encoder_attention(c, s.hidden_size, dtype, {"self.query", "self.key", "self.value", "output.dense"});
  CanineSizes z{.num_hash_functions = c.int_or("num_hash_functions", 8),
                .num_hash_buckets = c.int_or("num_hash_buckets", 16384),
                .downsampling_rate = c.int_or("downsampling_rate", 4),
                .upsampling_kernel_size = c.int_or("upsampling_kernel_size", 4),
                .local_transformer_stride = c.int_or("local_transformer_stride", 128)};
  check_size("num_hash_functions", z.num_hash_functions, static_cast<int64_t>(kCaninePrimes.size()));
  if (s.hidden_size % z.num_hash_functions) c.fail("num_hash_functions", "must divide hidden_size");
  check_size("num_hash_buckets", z.num_hash_buckets, kMaxVocabSize);
  check_size("downsampling_rate", z.downsampling_rate, kMaxPositions);
  check_size("upsampling_kernel_size", z.upsampling_kernel_size, kMaxSmallSize);
  check_size("local_transformer_stride", z.local_transformer_stride, kMaxPositions);
  const FirstTokenHead pooled{.out = "classifier", .pooling = "pooler_output"};
  s.heads = TextHeadLayout{.base_model_prefix = "canine", .base_model_class = "CanineModel",
                           .sequence_classification = pooled, .multiple_choice = pooled, .missing = {"fill-mask"}};
  return std::make_unique<CanineModel>(s, z);
}

}  // namespace mobius
