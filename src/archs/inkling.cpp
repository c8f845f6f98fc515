// Inkling's text decoder (transformers/models/inkling/modeling_inkling.py, 5.23: InklingForCausalLM,
// InklingTextConfig). Each layer, "hybrid_sliding" (windowed) or "hybrid" (full), n1 / n2 its
// input_layernorm / post_attention_layernorm:
//   h = x + attn_sconv(self_attn(n1(x)));   out = h + mlp_sconv(mlp(n2(h)))
// sconv (InklingShortConvolution): y = conv(x * token_mask) + x, a depthwise causal conv of
// conv_kernel_size taps, no bias, in float32, over its window of the last kernel - 1 (masked)
// inputs: four such states per layer (k_sconv, v_sconv, attn_sconv, mlp_sconv).
// Attention (InklingAttention), no RoPE: q = q_norm(q_proj(x)) per head, k = k_norm(k_sconv(k_proj(x))),
// v = v_sconv(v_proj(x)); softmax(q.k / head_dim + bias + mask) v -> o_proj, where the relative bias
// (InklingRelativeLogits) of query i and key j at cache distance d = i - j is
// rel[b, h, i, d] = (r_proj(x) per head @ proj)[d] for 0 <= d < extent, else 0 (extent: the sliding
// layers' sliding_window_size, the full layers' rel_extent). Full layers with log_scaling_n_floor
// scale q and the bias by tau = 1 + log_scaling_alpha * ln(max((i + 1) / n_floor, 1)), i the cache
// index. Sliding layers have swa_num_attention_heads / swa_num_key_value_heads / swa_head_dim.
// MLP: dense (InklingMLP: gated, times global_scale) or, on the mlp_layer_types "sparse" layers,
// InklingMoE: router logits l = gate.weight x over n_routed_experts + n_shared_experts (float32);
// the top-k of sigmoid(l_routed) + e_score_correction_bias pick the experts; the picked and the
// shared experts' weights are sigmoid(l) / (sum of the picked and shared sigmoids) * route_scale *
// gate.global_scale (a softmax over their logsigmoids); out = sum of the picked experts' outputs and
// the shared experts' (stacked [n_shared, ...]) each times its weight.
// Embeddings: embed_norm(embed_tokens(ids)); logits = lm_head(norm(h) / logits_mup_width_multiplier),
// the first unpadded_vocab_size of them when set.
// States per layer (tasks/layer_state.h): key / value (sliding_kv on the sliding layers: the cache
// keeps every position, the mask applies the window) and k_conv_state, v_conv_state
// [batch, kv heads * head_dim, kernel - 1], attn_conv_state, mlp_conv_state [batch, hidden, kernel - 1]
// in float32.
#include <cmath>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "blocks/activation.h"
#include "blocks/mamba.h"  // causal_conv1d, step_token_mask, to_float
#include "blocks/spec_check.h"
#include "registry/config_defaults.h"

namespace mobius {
namespace {

struct InklingLayerPlan {
  bool sliding;
  bool sparse;
  int64_t heads, kv_heads, head_dim, extent;
};

struct InklingSpec {
  DecoderSpec base;  // sizes, norms (rms_norm_eps), the dense MLP, sliding_window
  std::vector<InklingLayerPlan> layers;
  int64_t kernel;
  int64_t d_rel;
  std::optional<int64_t> log_scaling_n_floor;
  float log_scaling_alpha;
  int64_t moe_intermediate_size, experts, top_k, shared_experts;
  float route_scale;
  float logits_mup_width_multiplier;
  int64_t logits;  // unpadded_vocab_size, else vocab_size
};

// InklingShortConvolution: conv.weight [channels, 1, kernel] in float32.
class InklingShortConv : public Module {
 public:
  InklingShortConv(int64_t channels, int64_t kernel) : channels_(channels), kernel_(kernel) {
    weight = param("conv1d.weight", {channels, 1, kernel}, DataType::FLOAT);
  }
  // x [batch, seq, channels]; mask [batch, seq, 1] float32; past [batch, channels, kernel - 1]
  // float32. Returns y (x's dtype) and the new window.
  std::pair<Value*, Value*> forward(Ops& op, Value* x, Value* mask, Value* past) const {
    auto s = enter(op);
    Value* xf = to_float(op, x);
    auto [conv, state] = causal_conv1d(op, op.Mul(xf, mask), past, weight->value(op), nullptr, channels_, kernel_, "");
    Value* y = op.Add(conv, xf);
    return {x->dtype == DataType::FLOAT ? y : op.Cast(y, {.to = x->dtype}), state};
  }
  Parameter* weight;

 private:
  int64_t channels_, kernel_;
};

// What every attention layer shares in one step.
struct InklingStep {
  Value* token_mask;  // [batch, seq, 1] float32
  Value* distance;    // int64 [seq, total]: cache index of the query - that of the key
  Value* q_index;     // float32 [seq]: the queries' cache indices
};

class InklingAttention : public Module {
 public:
  InklingAttention(const InklingSpec& s, const InklingLayerPlan& p) : p_(p), s_(s) {
    const DataType dt = s.base.dtype;
    const int64_t hidden = s.base.hidden_size, q = p.heads * p.head_dim, kv = p.kv_heads * p.head_dim;
    q_proj = child<Linear>("q_proj", LinearOptions{hidden, q, false, dt});
    k_proj = child<Linear>("k_proj", LinearOptions{hidden, kv, false, dt});
    v_proj = child<Linear>("v_proj", LinearOptions{hidden, kv, false, dt});
    r_proj = child<Linear>("r_proj", LinearOptions{hidden, p.heads * s.d_rel, false, dt});
    o_proj = child<Linear>("o_proj", LinearOptions{q, hidden, false, dt});
    k_sconv = child<InklingShortConv>("k_sconv", kv, s.kernel);
    v_sconv = child<InklingShortConv>("v_sconv", kv, s.kernel);
    const NormOptions norm{.dim = p.head_dim, .eps = s.base.norm_eps, .dtype = dt};
    q_norm = child<RMSNorm>("q_norm", norm);
    k_norm = child<RMSNorm>("k_norm", norm);
    rel_proj = param("rel_logits_proj.proj", {s.d_rel, p.extent}, dt);
  }

  // x [batch, seq, hidden]; mask [batch, 1, seq, total]; past: key, value, k_conv_state,
  // v_conv_state. Returns the output and those four after the step.
  MixerResult forward(Ops& op, Value* x, Value* mask, const InklingStep& step, std::span<Value* const> past) const {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    auto heads = [&](Value* t, int64_t n, int64_t d) { return op.Reshape(t, {0, 0, n, d}); };
    auto [k_in, k_state] = k_sconv->forward(op, k_proj->forward(op, x), step.token_mask, past[2]);
    auto [v_in, v_state] = v_sconv->forward(op, v_proj->forward(op, x), step.token_mask, past[3]);
    const std::vector<int64_t> perm = {0, 2, 1, 3};
    Value* q = op.Transpose(q_norm->forward(op, heads(q_proj->forward(op, x), p_.heads, p_.head_dim)), {.perm = perm});
    Value* k = op.Transpose(k_norm->forward(op, heads(k_in, p_.kv_heads, p_.head_dim)), {.perm = perm});
    Value* v = op.Transpose(heads(v_in, p_.kv_heads, p_.head_dim), {.perm = perm});
    // rel [batch, heads, seq, extent] -> the bias at each (query, key) distance
    Value* rel = op.MatMul(heads(r_proj->forward(op, x), p_.heads, s_.d_rel), rel_proj->value(op));
    rel = op.Transpose(rel, {.perm = perm});
    Value* index = op.Min(op.Max(step.distance, b.scalar_i64(0)), b.scalar_i64(p_.extent - 1));
    Value* shape = op.Concat({op.Shape(rel, {.start = 0, .end = 3}), op.Shape(step.distance, {.start = 1, .end = 2})},
                             {.axis = 0});
    Value* bias = op.GatherElements(rel, op.Expand(index, shape), {.axis = 3});
    Value* inside = op.And(op.GreaterOrEqual(step.distance, b.scalar_i64(0)), op.Less(step.distance, b.scalar_i64(p_.extent)));
    bias = op.Where(inside, bias, 0.0f);
    if (!p_.sliding && s_.log_scaling_n_floor) {
      // tau in float32 over the queries: [1, 1, seq, 1]
      Value* n = op.Div(op.Add(step.q_index, 1.0), static_cast<double>(*s_.log_scaling_n_floor));
      Value* tau = op.Add(op.Mul(op.Log(op.Max(n, 1.0)), s_.log_scaling_alpha), 1.0);
      tau = op.Unsqueeze(tau, {0, 1, 3});
      if (q->dtype != DataType::FLOAT) tau = op.Cast(tau, {.to = q->dtype});
      q = op.Mul(q, tau);
      bias = op.Mul(bias, tau);
    }
    AttentionOutputs a = op.Attention(q, k, v, op.Add(mask, bias), past[0], past[1],
                                      {.scale = 1.0f / static_cast<float>(p_.head_dim)});
    Value* y = op.Reshape(op.Transpose(a.y, {.perm = perm}), {0, 0, -1});
    return {o_proj->forward(op, y), {a.present_key, a.present_value, k_state, v_state}};
  }

  Linear *q_proj, *k_proj, *v_proj, *r_proj, *o_proj;
  InklingShortConv *k_sconv, *v_sconv;
  RMSNorm *q_norm, *k_norm;
  Parameter* rel_proj;

 private:
  InklingLayerPlan p_;
  const InklingSpec& s_;
};

// InklingMLP: the gated MLP times global_scale [1].
class InklingMLP : public FeedForward {
 public:
  explicit InklingMLP(const MLPOptions& o) {
    mlp = adopt("", make_mlp(o));
    global_scale = param("global_scale", {1}, o.dtype);
  }
  Value* forward(Ops& op, Value* x) const override {
    auto s = enter(op);
    return op.Mul(mlp->forward(op, x), global_scale->value(op));
  }
  FeedForward* mlp;
  Parameter* global_scale;
};

// InklingMoE (see the top of this file), evaluated densely as blocks/moe.h SparseMoE: every routed
// expert on every token, weighted by its routing weight (0 where not picked).
class InklingMoE : public FeedForward {
 public:
  explicit InklingMoE(const InklingSpec& s) : s_(s) {
    const DataType dt = s.base.dtype;
    const int64_t E = s.experts, S = s.shared_experts, H = s.base.hidden_size, I = s.moe_intermediate_size;
    router_weight = param("gate.weight", {H, E + S}, dt, /*transpose=*/true);
    router_scale = param("gate.global_scale", {1}, DataType::FLOAT);
    score_bias = param("gate.e_score_correction_bias", {E}, DataType::FLOAT);
    gate_up = param("experts.gate_up_proj", {E, H, 2 * I}, dt, /*transpose=*/true);
    down = param("experts.down_proj", {E, I, H}, dt, /*transpose=*/true);
    shared_gate = param("shared_experts.gate_proj", {S, H, I}, dt, /*transpose=*/true);
    shared_up = param("shared_experts.up_proj", {S, H, I}, dt, /*transpose=*/true);
    shared_down = param("shared_experts.down_proj", {S, I, H}, dt, /*transpose=*/true);
  }

  Value* forward(Ops& op, Value* x) const override {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    const int64_t E = s_.experts, S = s_.shared_experts, I = s_.moe_intermediate_size;
    const std::string& act = s_.base.mlp.hidden_act;
    Value* flat = op.Reshape(x, {-1, s_.base.hidden_size});  // [tokens, H]
    Value* scores = op.Sigmoid(to_float(op, op.MatMul(flat, router_weight->value(op))));  // [tokens, E + S]
    Value* routed = op.Slice(scores, {0}, {E}, {1});
    Value* shared = op.Slice(scores, {E}, {E + S}, {1});
    Value* picks = op.TopK(op.Add(routed, score_bias->value(op)), s_.top_k).indices;
    Value* zeros = op.Expand(b.constant_f32({0.0f}, {}), op.Shape(routed));
    Value* ones = op.Expand(b.constant_f32({1.0f}, {}), op.Shape(picks));
    Value* picked = op.Cast(op.ScatterElements(zeros, picks, ones, {.axis = 1}), {.to = DataType::BOOL});
    routed = op.Where(picked, routed, 0.0f);
    Value* total = op.Add(op.ReduceSum(routed, {-1}), op.ReduceSum(shared, {-1}));  // [tokens, 1]
    Value* scale = op.Mul(router_scale->value(op), s_.route_scale);
    auto weights = [&](Value* w) {  // [tokens, n] -> [n, tokens, 1] in the model dtype
      Value* r = op.Mul(op.Div(w, total), scale);
      if (flat->dtype != DataType::FLOAT) r = op.Cast(r, {.to = flat->dtype});
      return op.Unsqueeze(op.Transpose(r, {.perm = {1, 0}}), {-1});
    };
    Value* gu = op.MatMul(flat, gate_up->value(op));  // [E, tokens, 2I]
    Value* h = op.Mul(activation(op, act, op.Slice(gu, {0}, {I}, {-1})), op.Slice(gu, {I}, {2 * I}, {-1}));
    Value* out = op.ReduceSum(op.Mul(op.MatMul(h, down->value(op)), weights(routed)), {0}, {.keepdims = 0});
    Value* sh = op.Mul(activation(op, act, op.MatMul(flat, shared_gate->value(op))), op.MatMul(flat, shared_up->value(op)));
    sh = op.MatMul(op.Mul(sh, weights(shared)), shared_down->value(op));  // [S, tokens, H]
    out = op.Add(out, op.ReduceSum(sh, {0}, {.keepdims = 0}));
    return op.Reshape(out, op.Shape(x));
  }

  Parameter *router_weight, *router_scale, *score_bias, *gate_up, *down, *shared_gate, *shared_up, *shared_down;

 private:
  const InklingSpec& s_;
};

class InklingDecoderLayer : public Module {
 public:
  InklingDecoderLayer(const InklingSpec& s, const InklingLayerPlan& p) : p_(p) {
    const NormOptions norm = s.base.norm();
    self_attn = child<InklingAttention>("self_attn", s, p);
    if (p.sparse)
      mlp = child<InklingMoE>("mlp", s);
    else
      mlp = child<InklingMLP>("mlp", s.base.mlp);
    input_layernorm = child<RMSNorm>("input_layernorm", norm);
    post_attention_layernorm = child<RMSNorm>("post_attention_layernorm", norm);
    attn_sconv = child<InklingShortConv>("attn_sconv", s.base.hidden_size, s.kernel);
    mlp_sconv = child<InklingShortConv>("mlp_sconv", s.base.hidden_size, s.kernel);
  }

  LayerStates states(const InklingSpec& s) const {
    const int64_t kv = p_.kv_heads * p_.head_dim, window = s.kernel - 1;
    auto conv = [&](const char* name, int64_t channels) {
      return StateTensor{.name = name, .shape = {"batch_size", channels, window}, .dtype = DataType::FLOAT};
    };
    LayerState cache{p_.sliding ? StateKind::sliding_kv : StateKind::self_kv, p_.kv_heads, p_.head_dim};
    if (p_.sliding) cache.window = s.base.sliding_window;
    return {cache, {.kind = StateKind::recurrent,
                    .tensors = {conv("k_conv_state", kv), conv("v_conv_state", kv),
                                conv("attn_conv_state", s.base.hidden_size), conv("mlp_conv_state", s.base.hidden_size)}}};
  }

  // past: key, value, k_conv_state, v_conv_state, attn_conv_state, mlp_conv_state (states()).
  MixerResult forward(Ops& op, Value* x, Value* mask, const InklingStep& step, std::span<Value* const> past) const {
    auto s = enter(op);
    MixerResult a = self_attn->forward(op, input_layernorm->forward(op, x), mask, step, past.subspan(0, 4));
    auto [attn, attn_state] = attn_sconv->forward(op, a.hidden, step.token_mask, past[4]);
    Value* h = op.Add(x, attn);
    auto [ff, mlp_state] = mlp_sconv->forward(op, mlp->forward(op, post_attention_layernorm->forward(op, h)),
                                              step.token_mask, past[5]);
    a.hidden = op.Add(h, ff);
    a.present.push_back(attn_state);
    a.present.push_back(mlp_state);
    return a;
  }

  InklingAttention* self_attn;
  FeedForward* mlp;
  RMSNorm *input_layernorm, *post_attention_layernorm;
  InklingShortConv *attn_sconv, *mlp_sconv;

 private:
  InklingLayerPlan p_;
};

class InklingTextModel : public Module {
 public:
  explicit InklingTextModel(const InklingSpec& s) {
    embed_tokens = child<Embedding>("embed_tokens", s.base.vocab_size, s.base.hidden_size, s.base.dtype);
    embed_norm = child<RMSNorm>("embed_tokens.embed_norm", s.base.norm());
    for (size_t i = 0; i < s.layers.size(); ++i)
      layers.push_back(child<InklingDecoderLayer>("layers." + std::to_string(i), s, s.layers[i]));
    norm = child<RMSNorm>("norm", s.base.norm());
  }
  Embedding* embed_tokens;
  RMSNorm* embed_norm;
  std::vector<InklingDecoderLayer*> layers;
  RMSNorm* norm;
};

class InklingCausalLM : public CausalLM {
 public:
  explicit InklingCausalLM(InklingSpec s) : s_(std::move(s)) {
    check_spec(s_.base);
    model_ = child<InklingTextModel>("model", s_);
    lm_head_ = child<LMHead>("lm_head", LMHeadOptions{s_.base.hidden_size, s_.base.vocab_size, false, s_.base.dtype},
                             nullptr);
  }
  DataType dtype() const override { return s_.base.dtype; }
  int64_t vocab_size() const override { return s_.logits; }
  std::vector<LayerStates> layer_states() const override {
    std::vector<LayerStates> states;
    for (const InklingDecoderLayer* layer : model_->layers) states.push_back(layer->states(s_));
    return states;
  }

  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    const DecoderSpec& b = s_.base;
    GraphBuilder& g = op.builder();
    CausalLMOutputs out;
    Value* h;
    {
      auto scope = g.scope("model");
      h = in.inputs_embeds ? in.inputs_embeds : model_->embed_norm->forward(op, model_->embed_tokens->forward(op, in.input_ids));
      Value* tokens = in.inputs_embeds ? in.inputs_embeds : in.input_ids;
      InklingStep step;
      step.token_mask = op.Unsqueeze(step_token_mask(op, in.attention_mask, tokens, DataType::FLOAT), {2});
      Value* total = op.Squeeze(op.Shape(in.attention_mask, {.start = 1, .end = 2}), {0});
      Value* seq = op.Squeeze(op.Shape(tokens, {.start = 1, .end = 2}), {0});
      Value* q_index = op.Range(op.Sub(total, seq), total, g.scalar_i64(1));  // [seq]
      Value* k_index = op.Range(g.scalar_i64(0), total, g.scalar_i64(1));     // [total]
      step.distance = op.Sub(op.Unsqueeze(q_index, {1}), op.Unsqueeze(k_index, {0}));
      step.q_index = op.Cast(q_index, {.to = DataType::FLOAT});
      Value* full = causal_mask(op, in.attention_mask, tokens, b.dtype, 0, in.attention_overlay);
      Value* sliding = nullptr;
      for (size_t i = 0; i < model_->layers.size(); ++i) {
        Value* mask = full;
        if (s_.layers[i].sliding) {
          if (!sliding) sliding = causal_mask(op, in.attention_mask, tokens, b.dtype, b.sliding_window, in.attention_overlay);
          mask = sliding;
        }
        MixerResult r = model_->layers[i]->forward(op, h, mask, step, in.past.at(i));
        h = r.hidden;
        out.present.push_back(std::move(r.present));
      }
      h = model_->norm->forward(op, h);
    }
    out.logits = lm_head_->forward(op, op.Div(h, s_.logits_mup_width_multiplier));
    if (s_.logits < b.vocab_size) out.logits = op.Slice(out.logits, {0}, {s_.logits}, {-1});
    return out;
  }

 private:
  InklingSpec s_;
  InklingTextModel* model_;
  LMHead* lm_head_;
};

}  // namespace

std::unique_ptr<Architecture> create_inkling_text(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  nlohmann::json j = with_attribute_map(config, {{"embedding_multiplier", "logits_mup_width_multiplier"},
                                                 {"sliding_window", "sliding_window_size"},
                                                 {"num_local_experts", "n_routed_experts"},
                                                 {"sconv_kernel_size", "conv_kernel_size"},
                                                 {"model_max_length", "max_position_embeddings"}})
                         .json();
  // InklingTextConfig.__post_init__: with dense_intermediate_size, intermediate_size is the experts' width
  if (j.contains("dense_intermediate_size") && !j["dense_intermediate_size"].is_null()) {
    j["moe_intermediate_size"] = j.value("intermediate_size", nlohmann::json(24576));
    j["intermediate_size"] = j["dense_intermediate_size"];
  }
  const HfConfig c(std::move(j), config.file(), config.prefix());
  InklingSpec s{llama_spec(c, dtype), {}, 0, 0, std::nullopt, 0.0f, 0, 0, 0, 0, 0.0f, 0.0f, 0};
  DecoderSpec& b = s.base;
  b.mlp.bias = false;  // InklingMLP: no bias
  b.tie_word_embeddings = false;  // embed and unembed are separate tensors, never tied
  const int64_t n = b.num_hidden_layers;
  // layer_types: the field, else local_layer_ids, else every layer whose (index + 1) % 6 != 0 sliding
  std::vector<std::string> fallback;
  std::vector<bool> local(static_cast<size_t>(n), false);
  if (c.has("local_layer_ids")) {
    const nlohmann::json& ids = c.json()["local_layer_ids"];
    if (!ids.is_array()) c.fail("local_layer_ids", "expected a list of layer indices");
    for (const auto& i : ids)
      if (i.is_number_integer() && i.get<int64_t>() >= 0 && i.get<int64_t>() < n) local[static_cast<size_t>(i.get<int64_t>())] = true;
  } else {
    for (int64_t i = 0; i < n; ++i) local[static_cast<size_t>(i)] = (i + 1) % 6 != 0;
  }
  for (int64_t i = 0; i < n; ++i) fallback.push_back(local[static_cast<size_t>(i)] ? "hybrid_sliding" : "hybrid");
  const std::vector<std::string> types = read_layer_list(c, "layer_types", n, {"hybrid", "hybrid_sliding"}, fallback);
  std::vector<std::string> mlp_fallback(static_cast<size_t>(n), "sparse");
  const int64_t dense_idx = c.int_or("dense_mlp_idx", 0);  // a legacy kwarg of __post_init__
  for (int64_t i = 0; i < std::min(dense_idx, n); ++i) mlp_fallback[static_cast<size_t>(i)] = "dense";
  const std::vector<std::string> mlp_types = read_layer_list(c, "mlp_layer_types", n, {"dense", "sparse"}, mlp_fallback);

  b.sliding_window = c.int_or("sliding_window_size", 512);
  check_size("sliding_window_size", b.sliding_window, kMaxPositions);
  s.kernel = c.int_or("conv_kernel_size", 4);
  check_size("conv_kernel_size", s.kernel, kMaxSmallSize, 2);
  s.d_rel = c.int_or("d_rel", 16);
  check_size("d_rel", s.d_rel, kMaxHeadDim);
  const int64_t rel_extent = c.int_or("rel_extent", 1024);
  check_size("rel_extent", rel_extent, kMaxPositions);
  s.log_scaling_n_floor = c.opt_int("log_scaling_n_floor");
  if (s.log_scaling_n_floor && *s.log_scaling_n_floor <= 0) c.fail("log_scaling_n_floor", "must be positive or null");
  s.log_scaling_alpha = static_cast<float>(c.float_or("log_scaling_alpha", 0.1));
  const int64_t swa_heads = c.int_or("swa_num_attention_heads", 64), swa_kv = c.int_or("swa_num_key_value_heads", 16);
  const int64_t swa_dim = c.int_or("swa_head_dim", 128);
  check_size("swa_num_attention_heads", swa_heads, kMaxHeads);
  check_size("swa_head_dim", swa_dim, kMaxHeadDim);
  if (swa_kv < 1 || swa_heads % swa_kv != 0) c.fail("swa_num_key_value_heads", "must divide swa_num_attention_heads");
  bool any_sparse = false;
  for (int64_t i = 0; i < n; ++i) {
    const bool sliding = types[static_cast<size_t>(i)] == "hybrid_sliding";
    const bool sparse = mlp_types[static_cast<size_t>(i)] == "sparse";
    any_sparse = any_sparse || sparse;
    const AttentionOptions& a = b.attention;
    s.layers.push_back({sliding, sparse, sliding ? swa_heads : a.num_attention_heads,
                        sliding ? swa_kv : a.num_key_value_heads, sliding ? swa_dim : a.head_dim,
                        sliding ? b.sliding_window : rel_extent});
  }
  s.moe_intermediate_size = c.int_or("moe_intermediate_size", 3072);
  s.experts = c.int_or("n_routed_experts", 256);
  s.top_k = c.int_or("num_experts_per_tok", 6);
  s.shared_experts = c.int_or("n_shared_experts", 2);
  s.route_scale = static_cast<float>(c.float_or("route_scale", 8.0));
  if (any_sparse) {
    check_size("moe_intermediate_size", s.moe_intermediate_size, kMaxFfnSize);
    check_size("n_routed_experts", s.experts, kMaxFfnSize);
    check_size("n_shared_experts", s.shared_experts, kMaxFfnSize);
    if (s.top_k < 1 || s.top_k > s.experts) c.fail("num_experts_per_tok", "must be between 1 and n_routed_experts");
  }
  s.logits_mup_width_multiplier = static_cast<float>(c.float_or("logits_mup_width_multiplier", 24.0));
  if (!(s.logits_mup_width_multiplier != 0.0f && std::isfinite(s.logits_mup_width_multiplier)))
    c.fail("logits_mup_width_multiplier", "must be finite and not 0");
  s.logits = b.vocab_size;
  if (std::optional<int64_t> u = c.opt_int("unpadded_vocab_size"); u && *u < b.vocab_size) {
    if (*u < 1) c.fail("unpadded_vocab_size", "must be positive");
    s.logits = *u;
  }
  return std::make_unique<InklingCausalLM>(std::move(s));
}

}  // namespace mobius
