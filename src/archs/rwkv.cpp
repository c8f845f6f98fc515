// RWKV-4 (transformers/models/rwkv/modeling_rwkv.py RwkvForCausalLM, configuration_rwkv.py; the
// torch loop rwkv_linear_attention_cpu is the specification of the time mix):
//   rwkv.embeddings -> rwkv.blocks.{i}: (layer 0: x = pre_ln(x));
//     h = x + attention(ln1(x));  out = h + feed_forward(ln2(h))  -> rwkv.ln_out -> head
// attention (time mix), x' the previous token's x (the state before the first):
//   k, v, r = key / value / receptance(x * time_mix_* + x' * (1 - time_mix_*));  r = sigmoid(r)
//   wkv_t = (sum_{s<t} e^{-(t-1-s) w + k_s} v_s + e^{u + k_t} v_t) / (same without v), w =
//   exp(time_decay), u = time_first, kept as (num, den, max) with max subtracted for range;
//   out = output(r * wkv)
// feed_forward (channel mix): k, r from x and x' likewise (time_mix_key, time_mix_receptance);
//   out = sigmoid(receptance(r)) * value(relu(key(k))^2)
// LayerNorms with bias, epsilon layer_norm_epsilon, except ln_out's (nn.LayerNorm's default 1e-5).
// attention_hidden_size (default hidden_size) is the width of k, v, r; intermediate_size (default
// 4 * hidden_size) the channel mix's. head: untied unless tie_word_embeddings.
// Inference rescaling (RwkvModel._rescale_layers, applied by transformers whenever the model is
// not training): block i's attention.output and feed_forward.value weights are divided by
// 2**(i // rescale_every), and the hidden state is halved after every rescale_every-th block
// (rescale_every <= 0: never). The graph does the same (scaling the two projections' outputs,
// exact in binary arithmetic); it changes the LayerNorms' epsilon weight, so it is not a no-op.
// attention_mask is not read, as in transformers ("unused in this model"): a padded position is a
// token like any other; position_ids is not read either.
// States per layer (tasks/layer_state.h, replaced every step), named past_key_values.{i}.<name> /
// present.{i}.<name>, transformers' state list per layer in its order:
//   feed_forward_shift [batch_size, hidden_size] (state[0]: ln2's output at the last token),
//   attention_shift [batch_size, hidden_size] (state[1]: ln1's output at the last token), both
//   in the model dtype; num_state, den_state, max_state [batch_size, attention_hidden_size]
//   (state[2..4], float32). transformers starts max_state at -1e30; zeros (num and den 0) give the
//   same outputs (num and den only ever scale together).
// The time mix over a prompt is one ONNX Scan node (float32): a prompt of any length is one run.
// onnxruntime-genai 0.18 has no model type that reads these states: build with --runtime none.
#include <cmath>
#include <limits>

#include "archs/archs.h"
#include "blocks/linear.h"
#include "blocks/mamba.h"
#include "blocks/norms.h"
#include "blocks/scan_body.h"
#include "tasks/text_generation.h"
#include "util/error.h"

namespace mobius {

namespace {

struct RwkvSizes {
  int64_t vocab_size, hidden_size, attention_hidden_size, intermediate_size, num_hidden_layers;
  float layer_norm_epsilon;
  int64_t rescale_every;
  bool tie_word_embeddings;
  DataType dtype;
};

// The previous token's x for every position, x [batch, seq, H] after past [batch, H]:
// concat(past, x[:, :-1]) (transformers' time_shift with shifted[:, 0] = state), and x[:, -1].
std::pair<Value*, Value*> rwkv_time_shift(Ops& op, Value* x, Value* past) {
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
  Value* shifted = op.Concat({op.Unsqueeze(past, {1}), op.Slice(x, {0}, {-1}, {1})}, {.axis = 1});
  return {shifted, op.Squeeze(op.Slice(x, {-1}, {kEnd}, {1}), {1})};
}

// x * mix + shifted * (1 - mix), mix [1, 1, H]
Value* rwkv_mix(Ops& op, Value* x, Value* shifted, const Parameter* mix) {
  Value* m = mix->value(op);
  return op.Add(op.Mul(x, m), op.Mul(shifted, op.Sub(1.0, m)));
}

// rwkv.blocks.{i}.attention: RwkvSelfAttention.
class RwkvTimeMix : public Module {
 public:
  explicit RwkvTimeMix(const RwkvSizes& s) : s_(s) {
    const int64_t h = s.hidden_size, a = s.attention_hidden_size;
    time_decay = param("time_decay", {a}, s.dtype);
    time_first = param("time_first", {a}, s.dtype);
    time_mix_key = param("time_mix_key", {1, 1, h}, s.dtype);
    time_mix_value = param("time_mix_value", {1, 1, h}, s.dtype);
    time_mix_receptance = param("time_mix_receptance", {1, 1, h}, s.dtype);
    key = child<Linear>("key", LinearOptions{.in_features = h, .out_features = a, .dtype = s.dtype});
    value = child<Linear>("value", LinearOptions{.in_features = h, .out_features = a, .dtype = s.dtype});
    receptance = child<Linear>("receptance", LinearOptions{.in_features = h, .out_features = a, .dtype = s.dtype});
    output = child<Linear>("output", LinearOptions{.in_features = a, .out_features = h, .dtype = s.dtype});
  }

  // x [batch, seq, H]; past {attention_shift, num_state, den_state, max_state}. Returns the
  // output [batch, seq, H] (before rescaling) and the four states after the step.
  std::pair<Value*, std::vector<Value*>> forward(Ops& op, Value* x, std::span<Value* const> past) const {
    auto s = enter(op);
    auto [shifted, shift] = rwkv_time_shift(op, x, past[0]);
    Value* k = to_float(op, key->forward(op, rwkv_mix(op, x, shifted, time_mix_key)));
    Value* v = to_float(op, value->forward(op, rwkv_mix(op, x, shifted, time_mix_value)));
    Value* r = op.Sigmoid(receptance->forward(op, rwkv_mix(op, x, shifted, time_mix_receptance)));
    Value* w = op.Neg(op.Exp(to_float(op, time_decay->value(op))));   // [A]
    Value* ku = op.Add(k, to_float(op, time_first->value(op)));       // current_key + time_first

    // body: (num, den, max [batch, A], w [A]; k_t, ku_t, v_t [batch, A]) -> (num, den, max, w, wkv_t)
    const int64_t a = s_.attention_hidden_size;
    ScanBody body(op);
    Ops& bo = body.op();
    const Shape state{"batch_size", a};
    Value* num = body.input("num", state);
    Value* den = body.input("den", state);
    Value* mx = body.input("max", state);
    Value* decay = body.input("w", {a});
    Value* k_t = body.input("k", state);
    Value* ku_t = body.input("ku", state);
    Value* v_t = body.input("v", state);
    // the output at t
    Value* out_max = bo.Max(mx, ku_t);
    Value* e1 = bo.Exp(bo.Sub(mx, out_max));
    Value* e2 = bo.Exp(bo.Sub(ku_t, out_max));
    Value* wkv = bo.Div(bo.Add(bo.Mul(e1, num), bo.Mul(e2, v_t)), bo.Add(bo.Mul(e1, den), e2));
    // the state after t
    Value* decayed = bo.Add(mx, decay);
    Value* state_max = bo.Max(decayed, k_t);
    Value* f1 = bo.Exp(bo.Sub(decayed, state_max));
    Value* f2 = bo.Exp(bo.Sub(k_t, state_max));
    body.output(bo.Add(bo.Mul(f1, num), bo.Mul(f2, v_t)), "num_out", state);
    body.output(bo.Add(bo.Mul(f1, den), f2), "den_out", state);
    body.output(state_max, "max_out", state);
    body.output(bo.Identity(decay), "w_out", {a});
    body.output(wkv, "wkv", state);
    std::vector<Value*> o = op.Scan({to_float(op, past[1]), to_float(op, past[2]), to_float(op, past[3]), w, k, ku, v},
                                    body.graph(),
                                    {.num_scan_inputs = 3, .scan_input_axes = {1, 1, 1}, .scan_output_axes = {1}});
    Value* mixed = s_.dtype == DataType::FLOAT ? o[4] : op.Cast(o[4], {.to = s_.dtype});
    return {output->forward(op, op.Mul(r, mixed)), {shift, o[0], o[1], o[2]}};
  }

  Parameter *time_decay, *time_first, *time_mix_key, *time_mix_value, *time_mix_receptance;
  Linear *key, *value, *receptance, *output;

 private:
  RwkvSizes s_;
};

// rwkv.blocks.{i}.feed_forward: RwkvFeedForward.
class RwkvChannelMix : public Module {
 public:
  explicit RwkvChannelMix(const RwkvSizes& s) {
    const int64_t h = s.hidden_size, i = s.intermediate_size;
    time_mix_key = param("time_mix_key", {1, 1, h}, s.dtype);
    time_mix_receptance = param("time_mix_receptance", {1, 1, h}, s.dtype);
    key = child<Linear>("key", LinearOptions{.in_features = h, .out_features = i, .dtype = s.dtype});
    receptance = child<Linear>("receptance", LinearOptions{.in_features = h, .out_features = h, .dtype = s.dtype});
    value = child<Linear>("value", LinearOptions{.in_features = i, .out_features = h, .dtype = s.dtype});
  }

  // x [batch, seq, H]; past feed_forward_shift [batch, H]. Returns the output (value's before
  // rescaling, times the receptance gate) and the shift after the step.
  std::pair<Value*, Value*> forward(Ops& op, Value* x, Value* past, double rescale) const {
    auto s = enter(op);
    auto [shifted, shift] = rwkv_time_shift(op, x, past);
    Value* k = op.Relu(key->forward(op, rwkv_mix(op, x, shifted, time_mix_key)));
    Value* v = value->forward(op, op.Mul(k, k));  // torch.square
    if (rescale != 1.0) v = op.Mul(v, rescale);
    Value* r = op.Sigmoid(receptance->forward(op, rwkv_mix(op, x, shifted, time_mix_receptance)));
    return {op.Mul(r, v), shift};
  }

  Parameter *time_mix_key, *time_mix_receptance;
  Linear *key, *receptance, *value;
};

// rwkv.blocks.{i}: RwkvBlock.
class RwkvLayer : public Module {
 public:
  RwkvLayer(const RwkvSizes& s, int64_t i) {
    const NormOptions norm{.dim = s.hidden_size, .eps = s.layer_norm_epsilon, .dtype = s.dtype,
                           .kind = NormKind::LayerNorm};
    if (i == 0) pre_ln = child<LayerNorm>("pre_ln", norm);
    ln1 = child<LayerNorm>("ln1", norm);
    ln2 = child<LayerNorm>("ln2", norm);
    attention = child<RwkvTimeMix>("attention", s);
    feed_forward = child<RwkvChannelMix>("feed_forward", s);
  }
  LayerNorm *pre_ln = nullptr, *ln1, *ln2;
  RwkvTimeMix* attention;
  RwkvChannelMix* feed_forward;
};

// rwkv: RwkvModel's modules.
class RwkvBackbone : public Module {
 public:
  explicit RwkvBackbone(const RwkvSizes& s) {
    embeddings = child<Embedding>("embeddings", s.vocab_size, s.hidden_size, s.dtype);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i) blocks.push_back(child<RwkvLayer>("blocks." + std::to_string(i), s, i));
    ln_out = child<LayerNorm>("ln_out", NormOptions{.dim = s.hidden_size, .eps = 1e-5f, .dtype = s.dtype,
                                                    .kind = NormKind::LayerNorm});
  }
  Embedding* embeddings;
  std::vector<RwkvLayer*> blocks;
  LayerNorm* ln_out;
};

class RwkvCausalLM : public CausalLM {
 public:
  explicit RwkvCausalLM(const RwkvSizes& s) : s_(s) {
    rwkv_ = child<RwkvBackbone>("rwkv", s);
    head_ = child<LMHead>("head", LMHeadOptions{s.hidden_size, s.vocab_size, false, s.dtype},
                          s.tie_word_embeddings ? rwkv_->embeddings : nullptr);
  }
  DataType dtype() const override { return s_.dtype; }
  int64_t vocab_size() const override { return s_.vocab_size; }

  std::vector<LayerStates> layer_states() const override {
    const LayerState layer{
        .kind = StateKind::recurrent,
        .tensors = {{.name = "feed_forward_shift", .shape = {"batch_size", s_.hidden_size}},
                    {.name = "attention_shift", .shape = {"batch_size", s_.hidden_size}},
                    {.name = "num_state", .shape = {"batch_size", s_.attention_hidden_size}, .dtype = DataType::FLOAT},
                    {.name = "den_state", .shape = {"batch_size", s_.attention_hidden_size}, .dtype = DataType::FLOAT},
                    {.name = "max_state", .shape = {"batch_size", s_.attention_hidden_size}, .dtype = DataType::FLOAT}}};
    return std::vector<LayerStates>(static_cast<size_t>(s_.num_hidden_layers), LayerStates{layer});
  }

  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    CausalLMOutputs out;
    Value* h;
    {
      auto s = op.builder().scope("rwkv");
      h = in.inputs_embeds ? in.inputs_embeds : rwkv_->embeddings->forward(op, in.input_ids);
      for (size_t i = 0; i < rwkv_->blocks.size(); ++i) {
        const RwkvLayer* b = rwkv_->blocks[i];
        auto ls = op.builder().scope("blocks." + std::to_string(i));
        const std::vector<Value*>& past = in.past.at(i);  // ffn shift, attention shift, num, den, max
        // 2**-(i // rescale_every): the rescaled attention.output and feed_forward.value weights
        const int64_t halvings = s_.rescale_every > 0 ? static_cast<int64_t>(i) / s_.rescale_every : 0;
        const double rescale = std::ldexp(1.0, static_cast<int>(-halvings));
        if (b->pre_ln) h = b->pre_ln->forward(op, h);
        auto [attn, attn_states] = b->attention->forward(op, b->ln1->forward(op, h), {past.begin() + 1, past.end()});
        h = op.Add(h, rescale != 1.0 ? op.Mul(attn, rescale) : attn);
        auto [ff, ff_shift] = b->feed_forward->forward(op, b->ln2->forward(op, h), past[0], rescale);
        h = op.Add(h, ff);
        if (s_.rescale_every > 0 && (static_cast<int64_t>(i) + 1) % s_.rescale_every == 0) h = op.Div(h, 2.0);
        out.present.push_back({ff_shift, attn_states[0], attn_states[1], attn_states[2], attn_states[3]});
      }
      h = rwkv_->ln_out->forward(op, h);
    }
    out.logits = head_->forward(op, h);
    return out;
  }

 private:
  RwkvSizes s_;
  RwkvBackbone* rwkv_;
  LMHead* head_;
};

}  // namespace

std::unique_ptr<Architecture> create_rwkv(const HfConfig& c, DataType dtype) {
  RwkvSizes s{.vocab_size = c.get_int("vocab_size"), .hidden_size = c.get_int("hidden_size"), .attention_hidden_size = 0,
              .intermediate_size = 0, .num_hidden_layers = c.get_int("num_hidden_layers"),
              .layer_norm_epsilon = static_cast<float>(c.float_or("layer_norm_epsilon", 1e-5)),
              .rescale_every = c.int_or("rescale_every", 6),
              .tie_word_embeddings = c.bool_or("tie_word_embeddings", false), .dtype = dtype};
  auto check = [&](const char* field, int64_t v, int64_t max) {
    if (v < 1 || v > max) c.fail(field, "expected 1 to " + std::to_string(max) + ", got " + std::to_string(v));
  };
  check("vocab_size", s.vocab_size, kMaxVocabSize);
  check("hidden_size", s.hidden_size, kMaxHiddenSize);
  check("num_hidden_layers", s.num_hidden_layers, kMaxLayers);
  // RwkvConfig.__post_init__: None -> hidden_size, 4 * hidden_size
  s.attention_hidden_size = c.opt_int("attention_hidden_size").value_or(s.hidden_size);
  s.intermediate_size = c.opt_int("intermediate_size").value_or(4 * s.hidden_size);
  check("attention_hidden_size", s.attention_hidden_size, kMaxHiddenSize);
  check("intermediate_size", s.intermediate_size, kMaxFfnSize);
  return std::make_unique<RwkvCausalLM>(s);
}

}  // namespace mobius
