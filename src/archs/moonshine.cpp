// Moonshine (transformers/models/moonshine/modeling_moonshine.py, configuration_moonshine.py;
// MoonshineForConditionalGeneration) under speech-to-text on the raw waveform
// (tasks/speech_to_text.h SpeechInput::waveform; onnxruntime-genai 0.18 has no model type for it:
// its "moonshine" section belongs to the streaming_enc_dec_asr type of moonshine_streaming):
//   encoder: conv1 (Conv1d 1 -> hidden, kernel 127, stride 64, no bias), tanh, groupnorm
//            (GroupNorm(1, hidden), eps 1e-5), conv2 (hidden -> 2 hidden, kernel 7, stride 3),
//            GELU, conv3 (2 hidden -> hidden, kernel 3, stride 2), GELU; pre-norm layers
//            (input_layernorm, self_attn, post_attention_layernorm, mlp fc1 -> encoder_hidden_act
//            -> fc2), layer_norm. Every LayerNorm has no bias (eps 1e-5).
//            The frame mask is attention_mask[:, ::384][:, :frames] (the conv strides 64 * 3 * 2).
//   decoder: embed_tokens, pre-norm layers (input_layernorm, causal self_attn,
//            post_attention_layernorm, encoder_attn, final_layernorm, mlp: fc1 to 2 x
//            intermediate_size, chunked into (h, gate), fc2(decoder_hidden_act(gate) * h)), norm;
//            proj_out tied to embed_tokens (tie_word_embeddings, default true).
//   attention: q/k/v (bias: attention_bias), o_proj without bias, scale head_dim^-0.5; the self
//            attentions rotate the first int(head_dim * partial_rotary_factor) channels of q and k
//            in interleaved pairs (rotate_half on x[0::2], x[1::2]; partial_rotary_factor 0.9 by
//            default, MoonshineConfig.__post_init__), positions 0.. in the encoder, past.. in the
//            decoder; the cross attention has no rotation and reads the encoder graph's keys/values.
// MoonshineAttention views the queries with num_key_value_heads heads and rewrites the shared
// config's num_attention_heads / num_key_value_heads as each layer is built, so transformers only
// runs configs whose encoder and decoder heads and key/value heads are all equal: others are
// refused. pad_head_dim_to_multiple_of pads q, k, v with zeros and the scale keeps the unpadded
// head_dim, which changes no output: it is ignored.
#include <tuple>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/conv.h"
#include "blocks/cross_attention.h"
#include "blocks/mlp.h"
#include "blocks/rope.h"
#include "registry/config_defaults.h"
#include "tasks/speech_to_text.h"

namespace mobius {
namespace {

constexpr int64_t kDownsample = 64 * 3 * 2;  // the conv strides: samples per frame

struct MoonshineSpec {
  int64_t vocab_size, hidden_size, intermediate_size, encoder_layers, decoder_layers, heads, head_dim;
  std::string encoder_act, decoder_act;
  bool attention_bias, tied;
  RopeConfig rope;
  DataType dtype;
};

// MoonshineConfig's attribute_map aliases win over the fields; the class defaults of fields
// config.json leaves out are filled in before (registry/config_defaults.h).
MoonshineSpec moonshine_spec(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"num_key_value_heads", "decoder_num_key_value_heads"},
                                                 {"num_attention_heads", "decoder_num_attention_heads"},
                                                 {"num_hidden_layers", "decoder_num_hidden_layers"},
                                                 {"hidden_act", "decoder_hidden_act"}});
  MoonshineSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.intermediate_size = c.get_int("intermediate_size");
  s.encoder_layers = c.int_or("encoder_num_hidden_layers", 6);
  s.decoder_layers = c.int_or("decoder_num_hidden_layers", 6);
  if (s.decoder_layers < 1) c.fail("decoder_num_hidden_layers", "must be at least 1");
  s.heads = c.int_or("encoder_num_attention_heads", 8);
  if (s.heads < 1 || s.hidden_size % s.heads != 0) c.fail("encoder_num_attention_heads", std::to_string(s.heads) + " must divide hidden_size " + std::to_string(s.hidden_size));
  if (s.encoder_layers < 0) c.fail("encoder_num_hidden_layers", "must be at least 0");
  // None means the attention heads (MoonshineConfig.__post_init__)
  const auto heads_or = [&](const char* field, int64_t fallback) {
    return c.has(field) && !c.json()[field].is_null() ? c.get_int(field) : fallback;
  };
  const int64_t decoder_heads = c.int_or("decoder_num_attention_heads", 8);
  for (auto [field, value] : {std::pair{"decoder_num_attention_heads", decoder_heads},
                              std::pair{"encoder_num_key_value_heads", heads_or("encoder_num_key_value_heads", s.heads)},
                              std::pair{"decoder_num_key_value_heads", heads_or("decoder_num_key_value_heads", decoder_heads)}})
    if (value != s.heads)
      c.fail(field, "must equal encoder_num_attention_heads (" + std::to_string(s.heads) +
                        "): transformers' MoonshineAttention runs only equal head counts");
  // MoonshineAttention: getattr(config, "head_dim", hidden_size / heads), a field config.json may add
  s.head_dim = c.has("head_dim") && !c.json()["head_dim"].is_null() ? c.get_int("head_dim") : s.hidden_size / s.heads;
  s.encoder_act = c.string_or("encoder_hidden_act", "gelu");
  s.decoder_act = c.string_or("decoder_hidden_act", "silu");
  for (auto [field, act] : {std::pair{"encoder_hidden_act", s.encoder_act}, std::pair{"decoder_hidden_act", s.decoder_act}})
    if (!is_known_activation(act) || act == "xielu") c.fail(field, "unsupported activation '" + act + "'");
  s.attention_bias = c.bool_or("attention_bias", false);
  s.tied = c.bool_or("tie_word_embeddings", true);
  s.rope = RopeConfig::from_hf(c, s.head_dim, {.partial_rotary_factor = 0.9});
  if (s.rope.rotary_dim() % 2 != 0 || s.rope.rotary_dim() < 2)
    c.fail("partial_rotary_factor", "int(head_dim * partial_rotary_factor) must be even and at least 2 (got " +
                                        std::to_string(s.rope.rotary_dim()) + ")");
  return s;
}

NormOptions norm_options(const MoonshineSpec& s) {
  return {.dim = s.hidden_size, .eps = 1e-5f, .dtype = s.dtype, .bias = false, .kind = NormKind::LayerNorm};
}

AttentionOptions attention_options(const MoonshineSpec& s) {
  AttentionOptions a;
  a.hidden_size = s.hidden_size;
  a.num_attention_heads = a.num_key_value_heads = s.heads;
  a.head_dim = s.head_dim;
  a.qkv_bias = s.attention_bias;
  a.o_bias = false;
  a.rope_interleaved = true;
  a.dtype = s.dtype;
  return a;
}

// MoonshineDecoderMLP: fc1 -> (h, gate) -> fc2(act(gate) * h).
class DecoderMLP : public Module {
 public:
  explicit DecoderMLP(const MoonshineSpec& s) : act_(s.decoder_act), inter_(s.intermediate_size) {
    fc1 = child<Linear>("fc1", LinearOptions{s.hidden_size, 2 * s.intermediate_size, true, s.dtype});
    fc2 = child<Linear>("fc2", LinearOptions{s.intermediate_size, s.hidden_size, true, s.dtype});
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    Value* both = fc1->forward(op, x);
    Value* h = op.Slice(both, {0}, {inter_}, {-1});
    Value* gate = op.Slice(both, {inter_}, {2 * inter_}, {-1});
    return fc2->forward(op, op.Mul(activation(op, act_, gate), h));
  }
  Linear *fc1, *fc2;

 private:
  std::string act_;
  int64_t inter_;
};

class MoonshineEncoderLayer : public Module {
 public:
  explicit MoonshineEncoderLayer(const MoonshineSpec& s) {
    self_attn = child<Attention>("self_attn", attention_options(s));
    mlp = child<MLP>("mlp", MLPOptions{.hidden_size = s.hidden_size, .intermediate_size = s.intermediate_size,
                                       .hidden_act = s.encoder_act, .bias = true, .dtype = s.dtype, .gated = false});
    input_layernorm = child<LayerNorm>("input_layernorm", norm_options(s));
    post_attention_layernorm = child<LayerNorm>("post_attention_layernorm", norm_options(s));
  }
  Value* forward(Ops& op, Value* h, const AttentionContext& ctx) const {
    auto sc = enter(op);
    h = op.Add(h, self_attn->forward(op, input_layernorm->forward(op, h), ctx, nullptr, nullptr).hidden);
    return op.Add(h, mlp->forward(op, post_attention_layernorm->forward(op, h)));
  }
  Attention* self_attn;
  MLP* mlp;
  LayerNorm *input_layernorm, *post_attention_layernorm;
};

// The frame mask of the samples' attention_mask int64 [batch, samples] for hidden [batch, frames,
// hidden]: attention_mask[:, ::384][:, :frames] (MoonshineEncoder.forward; MoonshineDecoder.forward
// of transformers 4.x reduced the mask it was given the same way: Optimum's decoder contract).
Value* moonshine_frame_mask(Ops& op, Value* attention_mask, Value* hidden) {
  GraphBuilder& b = op.builder();
  Value* frames = op.Squeeze(op.Shape(hidden, {.start = 1, .end = 2}), {0});
  Value* index = op.Mul(op.Range(b.scalar_i64(0), frames, b.scalar_i64(1)), static_cast<double>(kDownsample));
  return op.Gather(attention_mask, index, {.axis = 1});
}

// MoonshineEncoder: input_values [batch, samples], attention_mask int64 [batch, samples]
// -> hidden [batch, frames, hidden], the frame mask int64 [batch, frames].
class MoonshineEncoder : public Module {
 public:
  explicit MoonshineEncoder(const MoonshineSpec& s) : s_(s) {
    const int64_t h = s.hidden_size;
    conv1 = child<Conv1d>("conv1", Conv1dOptions{.in_channels = 1, .out_channels = h, .kernel_size = 127,
                                                 .stride = 64, .bias = false, .dtype = s.dtype});
    conv2 = child<Conv1d>("conv2", Conv1dOptions{.in_channels = h, .out_channels = 2 * h, .kernel_size = 7,
                                                 .stride = 3, .dtype = s.dtype});
    conv3 = child<Conv1d>("conv3", Conv1dOptions{.in_channels = 2 * h, .out_channels = h, .kernel_size = 3,
                                                 .stride = 2, .dtype = s.dtype});
    groupnorm_weight = param("groupnorm.weight", {h}, s.dtype);
    groupnorm_bias = param("groupnorm.bias", {h}, s.dtype);
    for (int64_t i = 0; i < s.encoder_layers; ++i)
      layers.push_back(child<MoonshineEncoderLayer>("layers." + std::to_string(i), s));
    layer_norm = child<LayerNorm>("layer_norm", norm_options(s));
  }

  std::pair<Value*, Value*> forward(Ops& op, Value* input_values, Value* attention_mask) const {
    auto sc = enter(op);
    GraphBuilder& b = op.builder();
    Value* x = op.Tanh(conv1->forward(op, op.Unsqueeze(input_values, {1})));  // [batch, hidden, t]
    x = group_norm(op, x);
    x = op.Gelu(conv2->forward(op, x));
    x = op.Gelu(conv3->forward(op, x));
    Value* h = op.Transpose(x, {.perm = {0, 2, 1}});  // [batch, frames, hidden]
    Value* frames = op.Shape(h, {.start = 1, .end = 2});
    Value* frame_mask = moonshine_frame_mask(op, attention_mask, h);
    Value* batch_frames = op.Concat({op.Shape(h, {.start = 0, .end = 1}), frames}, {.axis = 0});
    Value* positions = op.Expand(op.Unsqueeze(op.Range(b.scalar_i64(0), op.Squeeze(frames, {0}), b.scalar_i64(1)), {0}),
                                 batch_frames);
    AttentionContext ctx{.mask = padding_mask(op, frame_mask, s_.dtype),
                         .rope = rope_tables(op, s_.rope, positions, s_.dtype)};
    for (const MoonshineEncoderLayer* l : layers) h = l->forward(op, h, ctx);
    return {layer_norm->forward(op, h), frame_mask};
  }

  Conv1d *conv1, *conv2, *conv3;
  Parameter *groupnorm_weight, *groupnorm_bias;
  std::vector<MoonshineEncoderLayer*> layers;
  LayerNorm* layer_norm;

 private:
  // GroupNorm(num_groups=1): x [batch, hidden, t] normalized over its channels and time together
  // (InstanceNormalization of the flattened row), then the per-channel affine.
  Value* group_norm(Ops& op, Value* x) const {
    GraphBuilder& b = op.builder();
    Value* flat = op.Reshape(x, {0, 1, -1});
    Value* one = b.constant_float({1.0f}, {1}, s_.dtype);
    Value* zero = b.constant_float({0.0f}, {1}, s_.dtype);
    Value* y = op.Reshape(op.InstanceNormalization(flat, one, zero, {.epsilon = 1e-5f}), op.Shape(x));
    return op.Add(op.Mul(y, op.Unsqueeze(groupnorm_weight->value(op), {1})), op.Unsqueeze(groupnorm_bias->value(op), {1}));
  }
  MoonshineSpec s_;
};

class MoonshineDecoderLayer : public Module {
 public:
  explicit MoonshineDecoderLayer(const MoonshineSpec& s) {
    self_attn = child<Attention>("self_attn", attention_options(s));
    AttentionOptions cross = attention_options(s);
    cross.rope_interleaved = false;
    encoder_attn = child<CrossAttention>("encoder_attn", cross);
    mlp = child<DecoderMLP>("mlp", s);
    input_layernorm = child<LayerNorm>("input_layernorm", norm_options(s));
    post_attention_layernorm = child<LayerNorm>("post_attention_layernorm", norm_options(s));
    final_layernorm = child<LayerNorm>("final_layernorm", norm_options(s));
  }
  // past: {self, cross}; encoder_hidden_states: the cross states' source (CrossAttention::forward),
  // or null (the cross cache is the encoder's). Returns the output and the presents: the self
  // cache's, and with encoder_hidden_states the cross cache's.
  std::pair<Value*, std::vector<KVPair>> forward(Ops& op, Value* h, const AttentionContext& self_ctx,
                                                 Value* encoder_hidden_states, Value* cross_mask,
                                                 const std::vector<KVPair>& past) const {
    auto sc = enter(op);
    AttentionResult a = self_attn->forward(op, input_layernorm->forward(op, h), self_ctx, past[0].key, past[0].value);
    h = op.Add(h, a.hidden);
    AttentionResult c = encoder_attn->forward(op, post_attention_layernorm->forward(op, h), encoder_hidden_states,
                                              cross_mask, past[1].key, past[1].value);
    h = op.Add(h, c.hidden);
    h = op.Add(h, mlp->forward(op, final_layernorm->forward(op, h)));
    std::vector<KVPair> present{{a.present_key, a.present_value}};
    if (encoder_hidden_states) present.push_back({c.present_key, c.present_value});
    return {h, present};
  }
  Attention* self_attn;
  CrossAttention* encoder_attn;
  DecoderMLP* mlp;
  LayerNorm *input_layernorm, *post_attention_layernorm, *final_layernorm;
};

class Decoder : public Module {
 public:
  explicit Decoder(const MoonshineSpec& s) {
    embed_tokens = child<Embedding>("embed_tokens", s.vocab_size, s.hidden_size, s.dtype);
    for (int64_t i = 0; i < s.decoder_layers; ++i)
      layers.push_back(child<MoonshineDecoderLayer>("layers." + std::to_string(i), s));
    norm = child<LayerNorm>("norm", norm_options(s));
  }
  Embedding* embed_tokens;
  std::vector<MoonshineDecoderLayer*> layers;
  LayerNorm* norm;
};

class MoonshineForConditionalGeneration : public SpeechToText {
 public:
  explicit MoonshineForConditionalGeneration(const MoonshineSpec& s) : s_(s) {
    encoder = child<MoonshineEncoder>("model.encoder", s_);
    decoder = child<Decoder>("model.decoder", s_);
    proj_out = child<LMHead>("proj_out", LMHeadOptions{s.hidden_size, s.vocab_size, false, s.dtype},
                             s.tied ? decoder->embed_tokens : nullptr);
  }

  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.hidden_size; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  SpeechInput speech_input() const override { return SpeechInput::waveform; }
  Dim encoder_sequence_length() const override { return "encoder_sequence_length"; }
  std::vector<LayerStates> decoder_states() const override {
    return self_and_cross_states(s_.decoder_layers, s_.heads, s_.head_dim);
  }

  SpeechEncoderOutputs encode(Ops& op, Value* input_values, Value* attention_mask) const override {
    SpeechEncoderOutputs out;
    std::tie(out.encoder_hidden_states, out.encoder_attention_mask) = encoder->forward(op, input_values, attention_mask);
    return out;
  }

  std::vector<std::vector<KVPair>> project_cross(Ops& op, Value* encoder_hidden_states) const override {
    std::vector<std::vector<KVPair>> cross;
    for (const MoonshineDecoderLayer* l : decoder->layers) {
      auto sc = op.builder().scope(l->path());  // the layer's nodes under its own name
      cross.push_back({l->encoder_attn->project(op, encoder_hidden_states)});
    }
    return cross;
  }

  Value* frame_mask(Ops& op, Value* attention_mask, Value* encoder_hidden_states) const override {
    return moonshine_frame_mask(op, attention_mask, encoder_hidden_states);
  }

  SpeechDecoderOutputs decode(Ops& op, const SpeechDecoderInputs& in) const override {
    auto sc = op.builder().scope("model.decoder");
    GraphBuilder& b = op.builder();
    SpeechDecoderOutputs out;
    Value* past = op.Shape(in.past[0][0].key, {.start = 2, .end = 3});
    Value* start = op.Squeeze(past, {0});
    Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
    Value* positions = op.Expand(op.Unsqueeze(op.Range(start, op.Add(start, seq), b.scalar_i64(1)), {0}),
                                 op.Shape(in.input_ids));
    AttentionContext self_ctx{.mask = decoder_causal_mask(op, in.input_ids, past, s_.dtype),
                              .rope = rope_tables(op, s_.rope, positions, s_.dtype)};
    Value* cross_mask = cross_attention_mask(op, in.encoder_attention_mask, in.input_ids, s_.dtype);
    Value* h = decoder->embed_tokens->forward(op, in.input_ids);
    for (size_t i = 0; i < decoder->layers.size(); ++i) {
      auto [y, present] = decoder->layers[i]->forward(op, h, self_ctx, in.encoder_hidden_states, cross_mask, in.past[i]);
      h = y;
      out.present.push_back(present);
    }
    out.logits = proj_out->forward(op, decoder->norm->forward(op, h));
    return out;
  }

  MoonshineEncoder* encoder;
  Decoder* decoder;
  LMHead* proj_out;

 private:
  MoonshineSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_moonshine(const HfConfig& c, DataType dtype) {
  return std::make_unique<MoonshineForConditionalGeneration>(moonshine_spec(c, dtype));
}

}  // namespace mobius
