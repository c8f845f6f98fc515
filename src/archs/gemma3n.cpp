// Gemma 3n text decoder, model type gemma3n_text (transformers/models/gemma3n/modeling_gemma3n.py
// Gemma3nForCausalLM, configuration_gemma3n.py Gemma3nTextConfig). Every norm is Gemma3nRMSNorm:
// x * (mean(x^2) + eps)**-0.5 * weight (no 1 + weight). H = hidden_size, N = altup_num_inputs,
// L = num_hidden_layers, P = hidden_size_per_layer_input, a = altup_active_idx.
//   e = embed_tokens(ids) * H**0.5
//   per-layer inputs (archs/gemma4.h gemma_per_layer_inputs), looked up with the ids outside
//     [0, vocab_size_per_layer_input) as 0 -> [batch, seq, L, P]; layer i reads [:, :, i]
//   AltUp streams (Gemma3nTextModel.forward): s_0 = e, s_j = rescale(altup_projections[j-1](e), e)
//     for j = 1 .. N-1, where rescale(y, r) = y * rms(r) / sqrt(max(mean(y^2), 1e-5)); kept here
//     as one tensor [batch, seq, N, H]
//   layer i (Gemma3nTextDecoderLayer):
//     p = altup.predict(s): m = tanh(modality_router(router_norm(s_a) / H)) [.., N];
//         p_c = s_c + sum_b prediction_coefs(m)[c * N + b] * s_b
//     x = input_layernorm(p_a)
//     h = (p_a + post_attention_layernorm(attn(x)) + laurel(x)) / sqrt(2)
//         laurel(x) = x + post_laurel_norm(linear_right(linear_left(x)))
//     h = h + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(h)))
//     c = altup.correct(p, h): m = tanh(modality_router(router_norm(h) / H));
//         c_j = p_j + (h - p_a) * (correction_coefs(m)[j] + 1)
//     g = c_a * correct_output_scale (altup_correct_scale) ; g = act(per_layer_input_gate(g)) * pli_i
//     c_j += post_per_layer_input_norm(per_layer_projection(g)) for j >= 1 (not a: transformers'
//     corrected_predictions[1:])
//   out = norm(mean_j(s_0, rescale(altup_unembed_projections[j-1](s_j), s_0))) -> lm_head (tied by
//   default) -> final_logit_softcapping (30 by default; always applied)
// MLP (Gemma3nTextMLP): down_proj(act(gate) * up_proj(x)), gate = gate_proj(x), with
// activation_sparsity_pattern[i] = p > 0 replaced by relu(gate - (mean + std * icdf(p))) (mean and
// population std over the channels; icdf of the standard normal); intermediate_size one for all
// layers or a list of L.
// Attention: Gemma 4's (archs/gemma4.h Gemma4SelfAttention: scale 1, q/k norms, v_norm without
// weight, RoPE per layer type with head_dim: rope_parameters as Gemma3TextConfig, defaults 1e6 full,
// 1e4 sliding, archs/gemma.h read_gemma3_rope) and its KV sharing: the last num_kv_shared_layers
// (15 by default) layers attend to the keys and values of the last earlier layer of their type and
// carry no cache (past_key_values.{i}.* / present.{i}.* only for the other layers). layer_types
// default every 5th layer full. altup_coef_clip clamps the coefficients in training only (not read).
// onnxruntime-genai 0.18 has no gemma3n type and its decoder cannot skip the KV-shared layers'
// absent caches: the package is built with --runtime none.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gemma.h"
#include "archs/gemma4.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "blocks/activation.h"
#include "blocks/decoder.h"
#include "blocks/rope.h"
#include "blocks/spec_check.h"
#include "util/error.h"

namespace mobius {
namespace {

struct Gemma3nSpec {
  DecoderSpec base;  // sizes, norms, layer types, window, RoPE per type, LM head (checked by check_spec)
  std::vector<Gemma4LayerPlan> layers;  // attention, KV source and MLP width of each layer
  std::vector<double> sparsity;         // activation_sparsity_pattern
  int64_t per_layer_dim;                // hidden_size_per_layer_input P
  int64_t per_layer_vocab_size;         // vocab_size_per_layer_input
  int64_t altup_inputs;                 // altup_num_inputs N
  int64_t altup_active;                 // altup_active_idx
  bool altup_correct_scale;
  int64_t laurel_rank;
};

// Gemma3nTextMLP._gaussian_topk: relu(x - (mean + std * icdf(sparsity))) over the last axis,
// std the population one (unbiased=False); icdf of the standard normal, rounded to float32 as torch
// does. x [..., d] -> [..., d].
Value* gemma3n_gaussian_topk(Ops& op, Value* x, double sparsity) {
  // Normal(0, 1).icdf(p) = sqrt(2) * erfinv(2p - 1): found by bisection on erf, in double
  double lo = -10.0, hi = 10.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < sparsity ? lo : hi) = mid;
  }
  const auto multiplier = static_cast<float>(0.5 * (lo + hi));
  Value* mean = op.ReduceMean(x, {-1});
  Value* centered = op.Sub(x, mean);
  Value* std = op.Sqrt(op.ReduceMean(op.Mul(centered, centered), {-1}));
  return op.Relu(op.Sub(x, op.Add(mean, op.Mul(std, multiplier))));
}

// Gemma3nTextMLP: gate_proj / up_proj / down_proj, gated; the gate sparsified first when `sparsity` > 0.
class Gemma3nMLP : public Module {
 public:
  Gemma3nMLP(const MLPOptions& m, double sparsity) : act_(m.hidden_act), sparsity_(sparsity) {
    gate_proj = child<Linear>("gate_proj", LinearOptions{m.hidden_size, m.intermediate_size, false, m.dtype});
    up_proj = child<Linear>("up_proj", LinearOptions{m.hidden_size, m.intermediate_size, false, m.dtype});
    down_proj = child<Linear>("down_proj", LinearOptions{m.intermediate_size, m.hidden_size, false, m.dtype});
  }
  // x [batch, seq, hidden] -> [batch, seq, hidden]
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    Value* gate = gate_proj->forward(op, x);
    if (sparsity_ > 0.0) gate = gemma3n_gaussian_topk(op, gate, sparsity_);
    return down_proj->forward(op, op.Mul(activation(op, act_, gate), up_proj->forward(op, x)));
  }
  Linear *gate_proj, *up_proj, *down_proj;

 private:
  std::string act_;
  double sparsity_;
};

// Gemma3nTextLaurelBlock: x + post_laurel_norm(linear_right(linear_left(x))), rank laurel_rank.
class Gemma3nLaurel : public Module {
 public:
  Gemma3nLaurel(int64_t hidden, int64_t rank, const NormOptions& norm) {
    const DataType dt = norm.dtype;
    linear_left = child<Linear>("linear_left", LinearOptions{hidden, rank, false, dt});
    linear_right = child<Linear>("linear_right", LinearOptions{rank, hidden, false, dt});
    post_laurel_norm = child<RMSNorm>("post_laurel_norm", norm);
  }
  // x [batch, seq, hidden] -> [batch, seq, hidden]
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    return op.Add(x, post_laurel_norm->forward(op, linear_right->forward(op, linear_left->forward(op, x))));
  }
  Linear *linear_left, *linear_right;
  RMSNorm* post_laurel_norm;
};

// Gemma3nTextAltUp over the streams [batch, seq, N, hidden].
class Gemma3nAltUp : public Module {
 public:
  Gemma3nAltUp(int64_t hidden, int64_t inputs, int64_t active, const NormOptions& norm)
      : hidden_(hidden), inputs_(inputs), active_(active) {
    const DataType dt = norm.dtype;
    correct_output_scale = param("correct_output_scale", {hidden}, dt);
    correction_coefs = child<Linear>("correction_coefs", LinearOptions{inputs, inputs, false, dt});
    prediction_coefs = child<Linear>("prediction_coefs", LinearOptions{inputs, inputs * inputs, false, dt});
    modality_router = child<Linear>("modality_router", LinearOptions{hidden, inputs, false, dt});
    router_norm = child<RMSNorm>("router_norm", norm);
  }

  // The active stream s[:, :, a]: [batch, seq, N, hidden] -> [batch, seq, hidden].
  Value* active(Ops& op, Value* streams) const {
    return op.Gather(streams, op.builder().scalar_i64(active_), {.axis = 2});
  }

  // predict: s [batch, seq, N, hidden] -> s + coefs @ s, coefs [batch, seq, N, N] from the
  // active stream's router modalities (row c: the weights of stream c's prediction).
  Value* predict(Ops& op, Value* streams) const {
    auto s = enter(op);
    Value* coefs = op.Reshape(prediction_coefs->forward(op, modalities(op, active(op, streams))), {0, 0, inputs_, inputs_});
    return op.Add(op.MatMul(coefs, streams), streams);
  }

  // correct: predictions [batch, seq, N, hidden], activated [batch, seq, hidden] -> p_j +
  // (activated - p_a) * (correction_coefs(modalities(activated))[j] + 1).
  Value* correct(Ops& op, Value* predictions, Value* activated) const {
    auto s = enter(op);
    Value* coefs = op.Add(correction_coefs->forward(op, modalities(op, activated)), 1.0f);
    Value* innovation = op.Sub(activated, active(op, predictions));
    return op.Add(op.Mul(op.Unsqueeze(innovation, {2}), op.Unsqueeze(coefs, {-1})), predictions);
  }

  Parameter* correct_output_scale;
  Linear *correction_coefs, *prediction_coefs, *modality_router;
  RMSNorm* router_norm;

 private:
  // tanh(modality_router(router_norm(x) * hidden**-1)): [batch, seq, hidden] -> [batch, seq, N]
  Value* modalities(Ops& op, Value* x) const {
    Value* scaled = op.Mul(router_norm->forward(op, x), static_cast<float>(1.0 / static_cast<double>(hidden_)));
    return op.Tanh(modality_router->forward(op, scaled));
  }
  int64_t hidden_, inputs_, active_;
};

class Gemma3nDecoderLayer : public Module {
 public:
  Gemma3nDecoderLayer(const Gemma3nSpec& s, int64_t i) : act_(s.base.mlp.hidden_act), correct_scale_(s.altup_correct_scale) {
    const Gemma4LayerPlan& p = s.layers.at(static_cast<size_t>(i));
    const NormOptions norm = s.base.norm();
    const int64_t hidden = s.base.hidden_size;
    const DataType dt = s.base.dtype;
    self_attn = child<Gemma4SelfAttention>("self_attn", p, p.kv_source == i);
    MLPOptions m = s.base.mlp;
    m.intermediate_size = p.intermediate_size;
    mlp = child<Gemma3nMLP>("mlp", m, s.sparsity.at(static_cast<size_t>(i)));
    input_layernorm = child<RMSNorm>("input_layernorm", norm);
    post_attention_layernorm = child<RMSNorm>("post_attention_layernorm", norm);
    pre_feedforward_layernorm = child<RMSNorm>("pre_feedforward_layernorm", norm);
    post_feedforward_layernorm = child<RMSNorm>("post_feedforward_layernorm", norm);
    altup = child<Gemma3nAltUp>("altup", hidden, s.altup_inputs, s.altup_active, norm);
    laurel = child<Gemma3nLaurel>("laurel", hidden, s.laurel_rank, norm);
    per_layer_input_gate = child<Linear>("per_layer_input_gate", LinearOptions{hidden, s.per_layer_dim, false, dt});
    per_layer_projection = child<Linear>("per_layer_projection", LinearOptions{s.per_layer_dim, hidden, false, dt});
    post_per_layer_input_norm = child<RMSNorm>("post_per_layer_input_norm", norm);
    inputs_ = s.altup_inputs;
  }

  // streams [batch, seq, N, hidden]; per_layer_input [batch, seq, P]. Returns the corrected streams
  // (as `hidden`) and the present {key, value} of an owner (empty for a KV-shared layer).
  AttentionResult forward(Ops& op, Value* streams, Value* per_layer_input, const AttentionContext& ctx,
                          std::span<Value* const> past, const KVPair& shared) const {
    auto s = enter(op);
    Value* predictions = altup->predict(op, streams);
    Value* active = altup->active(op, predictions);
    Value* x = input_layernorm->forward(op, active);
    Value* laurel_out = laurel->forward(op, x);
    AttentionResult a = self_attn->forward(op, x, ctx, past.empty() ? nullptr : past[0],
                                           past.empty() ? nullptr : past[1], shared);
    Value* h = op.Add(active, post_attention_layernorm->forward(op, a.hidden));
    h = op.Div(op.Add(h, laurel_out), static_cast<float>(std::sqrt(2.0)));
    h = op.Add(h, post_feedforward_layernorm->forward(op, mlp->forward(op, pre_feedforward_layernorm->forward(op, h))));
    Value* corrected = altup->correct(op, predictions, h);
    Value* g = altup->active(op, corrected);
    if (correct_scale_) g = op.Mul(g, altup->correct_output_scale->value(op));
    g = op.Mul(activation(op, act_, per_layer_input_gate->forward(op, g)), per_layer_input);
    g = post_per_layer_input_norm->forward(op, per_layer_projection->forward(op, g));
    if (inputs_ > 1) {  // corrected_predictions[1:] += g
      Value* rest = op.Slice(corrected, {1}, {inputs_}, {2});
      corrected = op.Concat({op.Slice(corrected, {0}, {1}, {2}), op.Add(rest, op.Unsqueeze(g, {2}))}, {.axis = 2});
    }
    a.hidden = corrected;
    return a;
  }

  Gemma4SelfAttention* self_attn;
  Gemma3nMLP* mlp;
  RMSNorm *input_layernorm, *post_attention_layernorm, *pre_feedforward_layernorm, *post_feedforward_layernorm;
  Gemma3nAltUp* altup;
  Gemma3nLaurel* laurel;
  Linear *per_layer_input_gate, *per_layer_projection;
  RMSNorm* post_per_layer_input_norm;

 private:
  std::string act_;
  bool correct_scale_;
  int64_t inputs_;
};

class Gemma3nTextModel : public Module {
 public:
  explicit Gemma3nTextModel(const Gemma3nSpec& s) {
    const DecoderSpec& b = s.base;
    embed_tokens = child<Embedding>("embed_tokens", b.vocab_size, b.hidden_size, b.dtype);
    for (int64_t i = 0; i < b.num_hidden_layers; ++i)
      layers.push_back(child<Gemma3nDecoderLayer>("layers." + std::to_string(i), s, i));
    norm = child<RMSNorm>("norm", b.norm());
    const int64_t width = b.num_hidden_layers * s.per_layer_dim;
    embed_tokens_per_layer = child<Embedding>("embed_tokens_per_layer", s.per_layer_vocab_size, width, b.dtype);
    per_layer_model_projection = child<Linear>("per_layer_model_projection",
                                               LinearOptions{b.hidden_size, width, false, b.dtype});
    per_layer_projection_norm = child<RMSNorm>("per_layer_projection_norm",
                                               NormOptions{.dim = s.per_layer_dim, .eps = b.norm_eps, .dtype = b.dtype});
    const LinearOptions square{b.hidden_size, b.hidden_size, false, b.dtype};
    for (int64_t j = 1; j < s.altup_inputs; ++j) {
      altup_projections.push_back(child<Linear>("altup_projections." + std::to_string(j - 1), square));
      altup_unembed_projections.push_back(child<Linear>("altup_unembed_projections." + std::to_string(j - 1), square));
    }
  }
  Embedding* embed_tokens;
  std::vector<Gemma3nDecoderLayer*> layers;
  RMSNorm* norm;
  Embedding* embed_tokens_per_layer;
  Linear* per_layer_model_projection;
  RMSNorm* per_layer_projection_norm;
  std::vector<Linear*> altup_projections, altup_unembed_projections;
};

// y * rms(reference) / sqrt(max(mean(y^2), 1e-5)), over the last axis (Gemma3nTextModel.forward's
// stream magnitudes). y, reference [batch, seq, hidden].
Value* gemma3n_rescale(Ops& op, Value* y, Value* reference) {
  Value* target = op.Sqrt(op.ReduceMean(op.Mul(reference, reference), {-1}));
  Value* magnitude = op.Sqrt(op.Max(op.ReduceMean(op.Mul(y, y), {-1}), 1e-5f));
  return op.Div(op.Mul(y, target), magnitude);
}

class Gemma3nCausalLM final : public KvSharingCausalLM<Gemma3nSpec, Gemma3nTextModel> {
 public:
  using KvSharingCausalLM::KvSharingCausalLM;

  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    MOBIUS_ASSERT(!in.inputs_embeds, "gemma3n_text's per-layer inputs are looked up from input_ids");
    const DecoderSpec& b = s_.base;
    CausalLMOutputs out;
    Value* h;
    {
      auto scope = op.builder().scope("model");
      Value* e = op.Mul(model_->embed_tokens->forward(op, in.input_ids), b.embed_scale);
      // get_per_layer_inputs: ids outside the per-layer table are looked up as 0
      Value* ids = in.input_ids;
      Value* in_table = op.And(op.GreaterOrEqual(ids, 0.0), op.Less(ids, static_cast<double>(s_.per_layer_vocab_size)));
      ids = op.Where(in_table, ids, op.builder().scalar_i64(0));
      Value* per_layer = gemma_per_layer_inputs(op, *model_->embed_tokens_per_layer, *model_->per_layer_model_projection,
                                                *model_->per_layer_projection_norm, ids, e, b.num_hidden_layers,
                                                s_.per_layer_dim, b.hidden_size);
      std::vector<Value*> streams{op.Unsqueeze(e, {2})};
      for (const Linear* p : model_->altup_projections)
        streams.push_back(op.Unsqueeze(gemma3n_rescale(op, p->forward(op, e), e), {2}));
      h = streams.size() > 1 ? op.Concat(streams, {.axis = 2}) : streams[0];  // [batch, seq, N, hidden]

      std::map<std::string, AttentionContext> contexts;  // per layer type: its mask and RoPE tables
      for (const std::string& type : std::set<std::string>(b.layer_types.begin(), b.layer_types.end())) {
        const int64_t window = type == "sliding_attention" ? b.sliding_window : 0;
        contexts.emplace(type, AttentionContext{causal_mask(op, in.attention_mask, in.input_ids, b.dtype, window),
                                                rope_tables(op, b.rope_for(type), in.position_ids, b.dtype)});
      }
      std::map<int64_t, KVPair> caches;  // the owners' presents, by layer
      for (size_t i = 0; i < model_->layers.size(); ++i) {
        const int64_t source = s_.layers[i].kv_source;
        Value* pli = op.Gather(per_layer, op.builder().scalar_i64(static_cast<int64_t>(i)), {.axis = 2});
        const KVPair shared = source == static_cast<int64_t>(i) ? KVPair{} : caches.at(source);
        AttentionResult r = model_->layers[i]->forward(op, h, pli, contexts.at(b.layer_types[i]), in.past.at(i), shared);
        h = r.hidden;
        if (source == static_cast<int64_t>(i)) {
          caches[source] = {r.present_key, r.present_value};
          out.present.push_back({r.present_key, r.present_value});
        } else {
          out.present.push_back({});
        }
      }
      // the streams back to one: s_0 and the unembedded others rescaled to s_0, averaged
      Value* first = op.Gather(h, op.builder().scalar_i64(0), {.axis = 2});
      std::vector<Value*> outs{op.Unsqueeze(first, {2})};
      for (size_t j = 0; j < model_->altup_unembed_projections.size(); ++j) {
        Value* stream = op.Gather(h, op.builder().scalar_i64(static_cast<int64_t>(j + 1)), {.axis = 2});
        Value* y = model_->altup_unembed_projections[j]->forward(op, stream);
        outs.push_back(op.Unsqueeze(gemma3n_rescale(op, y, first), {2}));
      }
      h = op.ReduceMean(outs.size() > 1 ? op.Concat(outs, {.axis = 2}) : outs[0], {2}, {.keepdims = 0});
      h = model_->norm->forward(op, h);
    }
    out.logits = lm_head_->forward(op, h);
    if (const float c = b.final_logit_softcapping; c != 0.0f) out.logits = op.Mul(op.Tanh(op.Div(out.logits, c)), c);
    return out;
  }

};

// Gemma3nTextConfig.intermediate_size: one width for every layer or a list of num_hidden_layers.
std::vector<int64_t> gemma3n_intermediate_sizes(const HfConfig& c, int64_t layers) {
  const nlohmann::json* v = c.json().contains("intermediate_size") ? &c.json()["intermediate_size"] : nullptr;
  if (!v || !v->is_array()) return std::vector<int64_t>(static_cast<size_t>(layers), c.get_int("intermediate_size"));
  if (static_cast<int64_t>(v->size()) != layers)
    c.fail("intermediate_size", "a list must have one width per layer (" + std::to_string(layers) + ")");
  std::vector<int64_t> sizes;
  for (const nlohmann::json& w : *v) {
    if (!w.is_number_integer() || w.get<int64_t>() < 1 || w.get<int64_t>() > kMaxFfnSize)
      c.fail("intermediate_size", "expected widths from 1 to " + std::to_string(kMaxFfnSize));
    sizes.push_back(w.get<int64_t>());
  }
  return sizes;
}

// Gemma3nTextConfig.activation_sparsity_pattern: one value in [0, 1) per layer; absent or null:
// 0.95 on the first 10 layers when there are more than 10, else none.
std::vector<double> gemma3n_sparsity(const HfConfig& c, int64_t layers) {
  if (!c.has("activation_sparsity_pattern")) {
    const int64_t sparse = layers > 10 ? 10 : 0;
    std::vector<double> v(static_cast<size_t>(layers), 0.0);
    std::fill(v.begin(), v.begin() + sparse, 0.95);
    return v;
  }
  if (!c.json()["activation_sparsity_pattern"].is_array()) c.fail("activation_sparsity_pattern", "expected a list of one value per layer");
  const std::vector<double> pattern = c.float_list("activation_sparsity_pattern");
  if (static_cast<int64_t>(pattern.size()) != layers)
    c.fail("activation_sparsity_pattern", "expected one value per layer (" + std::to_string(layers) + ")");
  for (double p : pattern)
    if (!(p >= 0.0 && p < 1.0)) c.fail("activation_sparsity_pattern", "values must be in [0, 1)");
  return pattern;
}

Gemma3nSpec gemma3n_spec(const HfConfig& c, DataType dtype) {
  Gemma3nSpec s;
  DecoderSpec& b = s.base = decoder_sizes(c, dtype);
  b.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  // Gemma3nTextScaledWordEmbedding: torch.tensor(hidden_size**0.5), a float32 scalar
  b.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(b.hidden_size)));
  // a float (null is refused by the registry's class defaults), always applied: 0 would divide by zero
  b.final_logit_softcapping = static_cast<float>(c.float_or("final_logit_softcapping", 30.0));
  if (!(b.final_logit_softcapping > 0.0f)) c.fail("final_logit_softcapping", "must be positive");
  const std::string act = read_activation(c, "hidden_activation", "gelu_pytorch_tanh");
  const std::vector<int64_t> widths = gemma3n_intermediate_sizes(c, b.num_hidden_layers);
  b.mlp = {b.hidden_size, widths.front(), act, false, dtype};
  AttentionOptions a = read_attention(c, b.hidden_size, dtype, {.default_num_key_value_heads = 2, .default_head_dim = 256});
  if (b.hidden_size % a.num_attention_heads != 0)
    c.fail("num_attention_heads", "must divide hidden_size (Gemma3nTextConfig.validate_architecture)");
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", false);
  a.norm_eps = b.norm_eps;
  a.scale = 1.0f;
  b.attention = a;
  std::vector<std::string> fallback;  // the class default: every 5th layer full
  for (int64_t i = 0; i < b.num_hidden_layers; ++i) fallback.push_back((i + 1) % 5 ? "sliding_attention" : "full_attention");
  b.layer_types = read_layer_types(c, b.num_hidden_layers, fallback);
  b.sliding_window = c.int_or("sliding_window", 512);
  if (b.sliding_window <= 0) c.fail("sliding_window", "must be positive");
  read_gemma3_rope(c, b);

  const std::vector<int64_t> sources = gemma4_kv_sources(c, b.layer_types, 15);
  for (int64_t i = 0; i < b.num_hidden_layers; ++i) {
    AttentionOptions la = a;
    if (b.layer_types[static_cast<size_t>(i)] == "sliding_attention") la.sliding_window = b.sliding_window;
    s.layers.push_back({.attention = la, .kv_source = sources[static_cast<size_t>(i)],
                        .intermediate_size = widths[static_cast<size_t>(i)]});
  }
  s.sparsity = gemma3n_sparsity(c, b.num_hidden_layers);

  s.per_layer_dim = c.int_or("hidden_size_per_layer_input", 256);
  if (s.per_layer_dim < 1 || s.per_layer_dim > kMaxHiddenSize || b.num_hidden_layers * s.per_layer_dim > kMaxFfnSize)
    c.fail("hidden_size_per_layer_input", "expected 1 to " + std::to_string(kMaxHiddenSize) +
                                              ", num_hidden_layers times it at most " + std::to_string(kMaxFfnSize));
  s.per_layer_vocab_size = c.int_or("vocab_size_per_layer_input", 262144);
  if (s.per_layer_vocab_size < 1 || s.per_layer_vocab_size > kMaxVocabSize)
    c.fail("vocab_size_per_layer_input", "expected 1 to " + std::to_string(kMaxVocabSize));
  s.altup_inputs = c.int_or("altup_num_inputs", 4);
  if (s.altup_inputs < 1 || s.altup_inputs > 64) c.fail("altup_num_inputs", "expected 1 to 64");
  s.altup_active = c.int_or("altup_active_idx", 0);
  if (s.altup_active < 0 || s.altup_active >= s.altup_inputs)
    c.fail("altup_active_idx", "expected 0 to altup_num_inputs - 1 (" + std::to_string(s.altup_inputs - 1) + ")");
  s.altup_correct_scale = c.bool_or("altup_correct_scale", true);
  s.laurel_rank = c.int_or("laurel_rank", 64);
  if (s.laurel_rank < 1 || s.laurel_rank > kMaxHiddenSize) c.fail("laurel_rank", "expected 1 to " + std::to_string(kMaxHiddenSize));
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_gemma3n_text(const HfConfig& c, DataType dtype) {
  return std::make_unique<Gemma3nCausalLM>(gemma3n_spec(c, dtype));
}

}  // namespace mobius
