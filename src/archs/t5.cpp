// T5 family encoder-decoders under text2text-generation (tasks/text2text_generation.h):
// T5ForConditionalGeneration (transformers/models/t5/modeling_t5.py, configuration_t5.py),
// MT5ForConditionalGeneration (models/mt5, the T5 v1.1 layout), UMT5ForConditionalGeneration
// (models/umt5). Both stacks (T5Stack):
//   embeddings : shared(input_ids) (no scaling, no positions; encoder/decoder.embed_tokens are
//                tied to `shared`)
//   each block : pre-norm residual sublayers, T5LayerNorm = RMSNorm without mean, eps
//                layer_norm_epsilon: self-attention (layer.0), in the decoder cross-attention
//                (layer.1, EncDecAttention), feed-forward (layer.-1, DenseReluDense)
//   final      : final_layer_norm
// Attention is unscaled (T5Attention.scaling = 1), heads num_heads of d_kv, no biases; its scores
// get the relative position bias (blocks/relative_position_bias.h; bidirectional in the encoder,
// causal in the decoder), computed by block 0 and shared by the stack (t5, mt5) or one per block
// (umt5); cross-attention has none. Feed-forward: feed_forward_proj "relu" = wi, act, wo;
// "gated-gelu" (T5 v1.1, mt5, umt5) = wo(gelu_new(wi_0 x) * wi_1 x); "gated-ACT" and "ACT" in
// general. LM head: the `shared` matrix (transformers 5 ties lm_head.weight for every member: the
// configs force tie_word_embeddings), applied to the decoder output scaled by d_model**-0.5 when
// t5's scale_decoder_outputs holds (default: tie_word_embeddings not false in config.json),
// always for umt5, never for mt5 (as their forward() does).
// LongT5ForConditionalGeneration (models/longt5) with encoder_attention_type "local": the T5
// layout, the encoder's self-attention named LocalSelfAttention and local: query i attends to the
// tokens j with |i - j| <= local_radius (LongT5LocalAttention's blocks of local_radius + 1 and
// their neighbours, masked to that distance; blocks/local_attention_mask.h), its relative bias that
// of j - i as in T5 (compute_bias over the 3-block window gives the same buckets).
// With "transient-global" (LongT5TransientGlobalAttention, TransientGlobalSelfAttention) the same
// local keys plus one side key per global_block_size block of the sequence: the block's tokens of
// the layer-normed input summed, then global_input_layer_norm (each layer's own), then the layer's
// k and v (blocks/transient_global.h); the side scores get block 0's global_relative_attention_bias
// of (block - the query's block), and the whole bias (local and side) is computed by block 0 and
// shared. The side keys enter the Attention op as its past keys (ONNX Attention concatenates them
// before the local ones), under a mask [side | local].
// SwitchTransformersForConditionalGeneration (models/switch_transformers, T5 v1.0 layout with
// `mlp` for `DenseReluDense`): every encoder_sparse_step-th block (i % step == 1, or all with
// step 1; step = num_layers // num_sparse_encoder_layers, likewise in the decoder) has the
// top-1 mixture of experts of blocks/switch_moe.h; the others a dense wi, dense_act_fn, wo.
// tie_word_embeddings (default true) ties both embed_tokens and lm_head to `shared` and scales the
// decoder output by d_model**-0.5; without it encoder.embed_tokens, decoder.embed_tokens and
// lm_head are read from their own keys, unscaled.
// A checkpoint whose config.json architectures is an "...EncoderModel" (T5EncoderModel as Flux's and
// SD3's text_encoder_2 saves it; MT5EncoderModel, UMT5EncoderModel, LongT5EncoderModel,
// SwitchTransformersEncoderModel) builds the encoder stack alone under feature-extraction
// (tasks/feature_extraction.h: input_ids, attention_mask -> last_hidden_state).
// Not modeled: the float16 clamp of T5Block (it only changes values past float16's range).
#include <cmath>
#include <optional>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/cross_attention.h"
#include "blocks/local_attention_mask.h"
#include "blocks/mlp.h"
#include "blocks/relative_position_bias.h"
#include "blocks/switch_moe.h"
#include "blocks/transient_global.h"
#include "registry/config_defaults.h"
#include "tasks/feature_extraction.h"
#include "tasks/text2text_generation.h"
#include "util/error.h"

namespace mobius {
namespace {

enum class BiasSharing { first_block, every_block };  // t5/mt5, umt5
enum class OutputScale { config, always, never };      // t5, umt5, mt5

// Switch Transformers' sparse blocks: each stack's sparse step (0: none) and its experts.
struct SwitchLayout {
  int64_t encoder_sparse_step, decoder_sparse_step;
  SwitchMoEOptions experts;
  // SwitchTransformersStack: is block i sparse?
  static bool sparse(int64_t step, int64_t i) { return step > 0 && (i % step == 1 || step == 1); }
};

struct T5Spec {
  int64_t vocab_size, d_model, d_kv, d_ff, num_layers, num_decoder_layers, num_heads;
  int64_t num_buckets, max_distance;
  float eps;
  bool gated;
  std::string act;
  bool scale_output;
  BiasSharing bias_sharing;
  bool tied = true;                   // embed_tokens and lm_head = shared (switch: tie_word_embeddings)
  std::string ff_name = "DenseReluDense";  // switch: "mlp"
  std::string encoder_self_attention = "SelfAttention";  // longt5: "LocalSelfAttention"
  std::optional<int64_t> local_radius;                    // longt5: the encoder's local attention
  std::optional<int64_t> global_block_size;               // longt5 transient-global: its side keys
  std::optional<SwitchLayout> switch_layout;
  DataType dtype;

  AttentionOptions attention() const {
    AttentionOptions a;
    a.hidden_size = d_model;
    a.num_attention_heads = a.num_key_value_heads = num_heads;
    a.head_dim = d_kv;
    a.scale = 1.0f;
    a.dtype = dtype;
    a.names = {"q", "k", "v", "o"};
    return a;
  }
  NormOptions norm() const { return {.dim = d_model, .eps = eps, .dtype = dtype}; }
  MLPOptions mlp() const {
    MLPOptions m{.hidden_size = d_model, .intermediate_size = d_ff, .hidden_act = act, .dtype = dtype, .gated = gated};
    m.up_name = "wi";
    m.down_name = "wo";
    m.gate_name = "wi_0";
    m.gated_up_name = "wi_1";
    m.gated_down_name = "wo";
    return m;
  }
  RelativePositionBiasOptions bias(bool bidirectional) const {
    return {num_buckets, max_distance, num_heads, bidirectional, dtype};
  }
};

// The config fields as T5Config / MT5Config / UMT5Config read them (configuration_<type>.py):
// their attribute_map aliases win over the fields (head_dim sets d_kv, ...); the class defaults of
// fields config.json leaves out are filled in before (registry/config_defaults.h: e.g. MT5Config's
// feed_forward_proj "gated-gelu"), so the fallbacks here only serve a config without a class row.
T5Spec t5_spec(const HfConfig& config, DataType dtype, OutputScale scale, BiasSharing sharing) {
  const HfConfig c = with_attribute_map(config, {{"hidden_size", "d_model"},
                                                 {"num_attention_heads", "num_heads"},
                                                 {"num_hidden_layers", "num_layers"},
                                                 {"head_dim", "d_kv"}});
  T5Spec s;
  s.vocab_size = c.get_int("vocab_size");
  s.d_model = c.int_or("d_model", 512);
  s.d_kv = c.int_or("d_kv", 64);
  s.d_ff = c.int_or("d_ff", 2048);
  s.num_layers = c.int_or("num_layers", 6);
  s.num_decoder_layers = c.int_or("num_decoder_layers", s.num_layers);
  if (s.num_decoder_layers < 1) c.fail("num_decoder_layers", "must be at least 1");
  s.num_heads = c.int_or("num_heads", 8);
  s.num_buckets = c.int_or("relative_attention_num_buckets", 32);
  s.max_distance = c.int_or("relative_attention_max_distance", 128);
  s.eps = static_cast<float>(c.float_or("layer_norm_epsilon", 1e-6));
  // T5Config.__post_init__: "gated-ACT" or "ACT"; gated-gelu means gelu_new
  const std::string proj = c.string_or("feed_forward_proj", "relu");
  const size_t dash = proj.find('-');
  s.gated = dash != std::string::npos;
  if (s.gated && proj.substr(0, dash) != "gated")
    c.fail("feed_forward_proj", "'" + proj + "' is neither 'ACT' nor 'gated-ACT'");
  s.act = proj == "gated-gelu" ? "gelu_new" : proj.substr(s.gated ? dash + 1 : 0);
  if (!is_known_activation(s.act)) c.fail("feed_forward_proj", "unsupported activation '" + s.act + "'");
  if (s.num_buckets < 4) c.fail("relative_attention_num_buckets", "must be at least 4");
  if (s.max_distance <= s.num_buckets / 4)
    c.fail("relative_attention_max_distance", "must exceed relative_attention_num_buckets / 4");
  s.scale_output = scale == OutputScale::always ||
                   (scale == OutputScale::config &&
                    c.bool_or("scale_decoder_outputs", c.bool_or("tie_word_embeddings", true)));
  s.bias_sharing = sharing;
  s.dtype = dtype;
  return s;
}

// LongT5's transient-global side keys of an encoder (blocks/transient_global.h).
struct SideKeys {
  GlobalBlocks blocks;
  Value* mask;      // additive [batch, 1, seq, num_globals]
  Value* relative;  // int64 [batch, seq, num_globals]
};

// The position-dependent part of a stack's self-attention masks: the padding or causal mask
// plus the relative bias of the last block that has one (t5: block 0's, shared by the stack);
// with side keys, [side mask + side bias | that], the side bias from `side_bias`.
struct StackMask {
  Value* base;                // additive [batch, 1, seq, total]
  Value *past, *seq, *total;  // int64 [1]
  std::optional<SideKeys> side = std::nullopt;
  Value* with_bias = nullptr;
  Value* for_layer(Ops& op, const RelativePositionBias* bias, const RelativePositionBias* side_bias) {
    if (bias) with_bias = op.Add(base, bias->forward(op, past, seq, total));
    if (bias && side) {
      MOBIUS_ASSERT(side_bias, "the block with the relative bias has the global one");
      with_bias = op.Concat({op.Add(side->mask, side_bias->lookup(op, side->relative)), with_bias}, {.axis = -1});
    }
    MOBIUS_ASSERT(with_bias || !side, "block 0 has the relative bias");
    return with_bias ? with_bias : base;
  }
};

// T5LayerSelfAttention / T5LayerCrossAttention / T5LayerFF: x + sublayer(layer_norm(x)).
class T5Sublayer : public Module {
 public:
  explicit T5Sublayer(const T5Spec& s) { layer_norm = adopt("layer_norm", make_norm(s.norm())); }
  Norm* layer_norm;
};

class T5SelfAttentionLayer : public T5Sublayer {
 public:
  T5SelfAttentionLayer(const T5Spec& s, bool has_bias, bool bidirectional)
      : T5Sublayer(s), num_heads_(s.num_heads), d_kv_(s.d_kv) {
    const std::string name = bidirectional ? s.encoder_self_attention : "SelfAttention";
    attention = child<Attention>(name, s.attention());
    if (has_bias)
      relative_attention_bias = child<RelativePositionBias>(name + ".relative_attention_bias", s.bias(bidirectional));
    if (bidirectional && s.global_block_size) {
      global_input_layer_norm = adopt(name + ".global_input_layer_norm", make_norm(s.norm()));
      if (has_bias)
        global_relative_attention_bias =
            child<RelativePositionBias>(name + ".global_relative_attention_bias", s.bias(true));
    }
  }
  // past_key/past_value null in the encoder (no cache).
  AttentionResult forward(Ops& op, Value* x, StackMask& mask, Value* past_key, Value* past_value) const {
    auto sc = enter(op);
    Value* m = mask.for_layer(op, relative_attention_bias, global_relative_attention_bias);
    Value* h = layer_norm->forward(op, x);
    if (global_input_layer_norm) {  // the side keys/values, before the local ones
      Value* side = global_input_layer_norm->forward(op, global_aggregates(op, h, mask.side->blocks));
      const auto heads = [&](const Linear* proj) {
        // no -1: a sequence shorter than global_block_size has no side key ([batch, 0, inner])
        return op.Transpose(op.Reshape(proj->forward(op, side), {0, 0, num_heads_, d_kv_}), {.perm = {0, 2, 1, 3}});
      };
      past_key = heads(attention->k_proj);
      past_value = heads(attention->v_proj);
    }
    AttentionResult a = attention->forward(op, h, {.mask = m}, past_key, past_value);
    a.hidden = op.Add(x, a.hidden);
    return a;
  }
  Attention* attention;
  RelativePositionBias* relative_attention_bias = nullptr;
  Norm* global_input_layer_norm = nullptr;                        // longt5 transient-global
  RelativePositionBias* global_relative_attention_bias = nullptr;  // longt5 transient-global, block 0

 private:
  int64_t num_heads_ = 0, d_kv_ = 0;
};

class T5CrossAttentionLayer : public T5Sublayer {
 public:
  explicit T5CrossAttentionLayer(const T5Spec& s) : T5Sublayer(s) {
    attention = child<CrossAttention>("EncDecAttention", s.attention());
  }
  AttentionResult forward(Ops& op, Value* x, Value* encoder_hidden_states, Value* mask, const KVPair& past) const {
    auto sc = enter(op);
    AttentionResult a =
        attention->forward(op, layer_norm->forward(op, x), encoder_hidden_states, mask, past.key, past.value);
    a.hidden = op.Add(x, a.hidden);
    return a;
  }
  CrossAttention* attention;
};

class T5FeedForwardLayer : public T5Sublayer {
 public:
  T5FeedForwardLayer(const T5Spec& s, bool sparse) : T5Sublayer(s) {
    if (sparse)
      ffn = adopt(s.ff_name, std::make_unique<SwitchSparseMLP>(s.switch_layout->experts));
    else
      ffn = adopt(s.ff_name, make_mlp(s.mlp()));
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    return op.Add(x, ffn->forward(op, layer_norm->forward(op, x)));
  }
  FeedForward* ffn;
};

// T5Block: layer.0 self-attention, [layer.1 cross-attention,] layer.-1 feed-forward.
class T5Block : public Module {
 public:
  T5Block(const T5Spec& s, bool has_bias, bool decoder, bool sparse) {
    self_attention = child<T5SelfAttentionLayer>("layer.0", s, has_bias, !decoder);
    if (decoder) cross_attention = child<T5CrossAttentionLayer>("layer.1", s);
    ff = child<T5FeedForwardLayer>(decoder ? "layer.2" : "layer.1", s, sparse);
  }
  Value* encode(Ops& op, Value* x, StackMask& mask) const {
    auto sc = enter(op);
    return ff->forward(op, self_attention->forward(op, x, mask, nullptr, nullptr).hidden);
  }
  // Returns the block's output and its presents (self, cross).
  std::pair<Value*, std::vector<KVPair>> forward(Ops& op, Value* x, StackMask& mask, Value* encoder_hidden_states,
                                                 Value* cross_mask, const std::vector<KVPair>& past) const {
    auto sc = enter(op);
    AttentionResult a = self_attention->forward(op, x, mask, past[0].key, past[0].value);
    AttentionResult c = cross_attention->forward(op, a.hidden, encoder_hidden_states, cross_mask, past[1]);
    return {ff->forward(op, c.hidden), {{a.present_key, a.present_value}, {c.present_key, c.present_value}}};
  }
  T5SelfAttentionLayer* self_attention;
  T5CrossAttentionLayer* cross_attention = nullptr;
  T5FeedForwardLayer* ff;
};

// The encoder stack (T5Stack without a decoder): embed(input_ids), the blocks over the padding
// mask (local / transient-global for longt5), final_layer_norm -> [batch, seq, d_model].
Value* t5_encode(Ops& op, const T5Spec& s, const Embedding* embed, const std::vector<T5Block*>& blocks,
                 const Norm* norm, Value* input_ids, Value* attention_mask) {
  Value* h = embed->forward(op, input_ids);
  Value* seq = op.Shape(input_ids, {.start = 1, .end = 2});
  Value* base = s.local_radius ? local_padding_mask(op, attention_mask, *s.local_radius, s.dtype)
                               : padding_mask(op, attention_mask, s.dtype);
  StackMask mask{base, op.builder().ints({0}), seq, seq};
  if (s.global_block_size) {
    GlobalBlocks g = fixed_global_blocks(op, attention_mask, *s.global_block_size);
    mask.side = SideKeys{g, additive_mask(op, side_attention_allowed(op, attention_mask, g), s.dtype),
                         side_relative_positions(op, g)};
  }
  for (const T5Block* block : blocks) h = block->encode(op, h, mask);
  return norm->forward(op, h);
}

bool has_bias_at(const T5Spec& s, int64_t i) { return i == 0 || s.bias_sharing == BiasSharing::every_block; }

bool sparse_at(const T5Spec& s, bool decoder, int64_t i) {
  const auto& l = s.switch_layout;
  return l && SwitchLayout::sparse(decoder ? l->decoder_sparse_step : l->encoder_sparse_step, i);
}

class T5ForConditionalGeneration : public Seq2SeqLM {
 public:
  explicit T5ForConditionalGeneration(const T5Spec& s) : s_(s) {
    if (s.tied) {
      shared = child<Embedding>("shared", s.vocab_size, s.d_model, s.dtype);
      encoder_embed = decoder_embed = shared;
    } else {
      encoder_embed = child<Embedding>("encoder.embed_tokens", s.vocab_size, s.d_model, s.dtype);
      decoder_embed = child<Embedding>("decoder.embed_tokens", s.vocab_size, s.d_model, s.dtype);
    }
    const auto has_bias = [&](int64_t i) { return has_bias_at(s, i); };
    const auto sparse = [&](bool decoder, int64_t i) { return sparse_at(s, decoder, i); };
    for (int64_t i = 0; i < s.num_layers; ++i)
      encoder.push_back(child<T5Block>("encoder.block." + std::to_string(i), s, has_bias(i), false, sparse(false, i)));
    encoder_norm = adopt("encoder.final_layer_norm", make_norm(s.norm()));
    for (int64_t i = 0; i < s.num_decoder_layers; ++i)
      decoder.push_back(child<T5Block>("decoder.block." + std::to_string(i), s, has_bias(i), true, sparse(true, i)));
    decoder_norm = adopt("decoder.final_layer_norm", make_norm(s.norm()));
    lm_head = child<LMHead>("lm_head", LMHeadOptions{s.d_model, s.vocab_size, false, s.dtype}, shared);
  }

  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.d_model; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> decoder_states() const override {
    return self_and_cross_states(s_.num_decoder_layers, s_.num_heads, s_.d_kv);
  }

  Value* encode(Ops& op, Value* input_ids, Value* attention_mask) const override {
    return t5_encode(op, s_, encoder_embed, encoder, encoder_norm, input_ids, attention_mask);
  }

  Seq2SeqDecoderOutputs decode(Ops& op, const Seq2SeqDecoderInputs& in) const override {
    Seq2SeqDecoderOutputs out;
    Value* h = decoder_embed->forward(op, in.input_ids);
    Seq2SeqStepMasks step = seq2seq_step_masks(op, in, s_.dtype);
    Value* seq = op.Shape(in.input_ids, {.start = 1, .end = 2});
    StackMask mask{step.self_mask, step.past_length, seq, op.Add(step.past_length, seq)};
    h = decoder_norm->forward(op, run_decoder_layers(op, h, decoder, mask, step.cross_mask, in, out));
    if (s_.scale_output) h = op.Mul(h, 1.0 / std::sqrt(static_cast<double>(s_.d_model)));
    out.logits = lm_head->forward(op, h);
    return out;
  }

  Embedding* shared = nullptr;  // null when untied
  Embedding *encoder_embed, *decoder_embed;
  LMHead* lm_head;
  std::vector<T5Block*> encoder, decoder;
  Norm *encoder_norm, *decoder_norm;

 private:
  T5Spec s_;
};

// T5EncoderModel (and MT5EncoderModel, UMT5EncoderModel, LongT5EncoderModel,
// SwitchTransformersEncoderModel: config.json architectures "...EncoderModel"): the encoder stack
// alone under feature-extraction, last_hidden_state = final_layer_norm output; embed_tokens is
// `shared` (the classes' _tied_weights_keys tie encoder.embed_tokens to it).
class T5EncoderModel : public Encoder {
 public:
  explicit T5EncoderModel(const T5Spec& s) : s_(s) {
    shared = child<Embedding>("shared", s.vocab_size, s.d_model, s.dtype);
    for (int64_t i = 0; i < s.num_layers; ++i)
      encoder.push_back(child<T5Block>("encoder.block." + std::to_string(i), s, has_bias_at(s, i), false,
                                       sparse_at(s, false, i)));
    encoder_norm = adopt("encoder.final_layer_norm", make_norm(s.norm()));
  }
  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.d_model; }
  bool has_token_type_ids() const override { return false; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    return t5_encode(op, s_, shared, encoder, encoder_norm, in.input_ids, in.attention_mask);
  }

  Embedding* shared;
  std::vector<T5Block*> encoder;
  Norm* encoder_norm;

 private:
  T5Spec s_;
};

// The model config.json's architectures names: the encoder alone for an "...EncoderModel" class,
// else the encoder-decoder.
std::unique_ptr<Architecture> t5_model(const HfConfig& c, const T5Spec& s) {
  const nlohmann::json& j = c.json();
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string() && j["architectures"][0].get<std::string>().ends_with("EncoderModel"))
    return std::make_unique<T5EncoderModel>(s);
  return std::make_unique<T5ForConditionalGeneration>(s);
}

}  // namespace

std::unique_ptr<Architecture> create_t5(const HfConfig& c, DataType dtype) {
  return t5_model(c, t5_spec(c, dtype, OutputScale::config, BiasSharing::first_block));
}

std::unique_ptr<Architecture> create_mt5(const HfConfig& c, DataType dtype) {
  return t5_model(c, t5_spec(c, dtype, OutputScale::never, BiasSharing::first_block));
}

std::unique_ptr<Architecture> create_umt5(const HfConfig& c, DataType dtype) {
  return t5_model(c, t5_spec(c, dtype, OutputScale::always, BiasSharing::every_block));
}

std::unique_ptr<Architecture> create_longt5(const HfConfig& c, DataType dtype) {
  const std::string type = c.string_or("encoder_attention_type", "local");
  if (type != "local" && type != "transient-global")
    c.fail("encoder_attention_type", "'" + type + "' is neither \"local\" nor \"transient-global\"");
  T5Spec s = t5_spec(c, dtype, OutputScale::config, BiasSharing::first_block);
  s.encoder_self_attention = type == "local" ? "LocalSelfAttention" : "TransientGlobalSelfAttention";
  s.local_radius = c.int_or("local_radius", 127);
  if (*s.local_radius < 0) c.fail("local_radius", "must not be negative");
  if (type == "transient-global") {
    s.global_block_size = c.int_or("global_block_size", 16);
    if (*s.global_block_size < 1) c.fail("global_block_size", "must be at least 1");
  }
  return t5_model(c, s);
}

std::unique_ptr<Architecture> create_switch_transformers(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"hidden_size", "d_model"},
                                                 {"num_attention_heads", "num_heads"},
                                                 {"num_hidden_layers", "num_layers"}});
  T5Spec s = t5_spec(c, dtype, OutputScale::never, BiasSharing::first_block);
  // SwitchTransformersDenseActDense: wi, dense_act_fn, wo (never gated; feed_forward_proj unread)
  s.gated = false;
  s.act = c.string_or("dense_act_fn", "relu");
  if (!is_known_activation(s.act)) c.fail("dense_act_fn", "unsupported activation '" + s.act + "'");
  s.tied = c.bool_or("tie_word_embeddings", true);
  s.scale_output = s.tied;
  s.ff_name = "mlp";
  const int64_t num_experts = c.int_or("num_experts", 8);
  if (num_experts < 1) c.fail("num_experts", "must be at least 1");
  const int64_t capacity = c.int_or("expert_capacity", 64);
  if (capacity < 0) c.fail("expert_capacity", "must not be negative");
  // SwitchTransformersConfig.__post_init__: step = layers // sparse layers, or layers when 0
  const auto step = [&](const char* field, int64_t layers) {
    const int64_t n = c.int_or(field, 3);
    if (n < 0) c.fail(field, "must not be negative");
    return n > 0 ? layers / n : layers;
  };
  s.switch_layout = SwitchLayout{step("num_sparse_encoder_layers", s.num_layers),
                                 step("num_sparse_decoder_layers", s.num_decoder_layers),
                                 {.d_model = s.d_model, .d_ff = s.d_ff, .num_experts = num_experts,
                                  .expert_capacity = capacity, .router_bias = c.bool_or("router_bias", false),
                                  .act = s.act, .dtype = dtype}};
  return t5_model(c, s);
}

}  // namespace mobius
