// ZAYA1 (transformers/models/zaya/modeling_zaya.py ZayaForCausalLM, configuration_zaya.py; the
// modular file is the source): a decoder whose attention projects q / k / v with compressed
// convolutional attention (CCA) and whose feed-forward is a mixture of experts behind an MLP router
// that hands its hidden state from layer to layer:
//   model.embed_tokens -> h = (x + model.input_hidden_states_bias) * model.input_hidden_states_scale,
//   kept in float32 (the residual stream, as transformers' residual_in_fp32) -> model.layers.{i}:
//     a = self_attn(input_layernorm(h));  h = post_attention_residual_scale(a, h)
//     m = mlp(post_attention_layernorm(h));  h = post_mlp_residual_scale(m, h)
//   -> model.norm -> lm_head (tied unless tie_word_embeddings is false; lm_head_bias)
// ZayaResidualScaling(y, r) = (y + hidden_states_bias) * hidden_states_scale + (r + residual_bias) *
// residual_scale, the first term in the model dtype, the second in float32.
// self_attn (ZayaAttention, ZayaCCAProjection under qkv_proj, ZayaQKNorm under qk_norm), x the
// normed input zeroed at padded positions (the step's columns of attention_mask):
//   q, k = q_proj(x), k_proj(x) [heads * d], [kv_heads * d];  q_res = (q + k of the head's group) / 2
//   per head, k_res = mean of q_res over each group's heads;
//   [q | k] over the window of the previous K = (cca_time0 - 1) + (cca_time1 - 1) inputs ->
//   conv_qk_depthwise (kernel cca_time0, groups = channels) -> conv_qk_grouped (kernel cca_time1,
//   groups = heads + kv_heads), no padding: query = conv[:q] + q_res, key = conv[q:] + k_res;
//   value = [v_proj_current(x) | v_proj_delayed of the previous token] per position (kv_heads * d / 2
//   each; before the first token v_proj_delayed(0)), viewed as kv_heads heads of d;
//   q, k L2-normalized to sqrt(d) (norm clamped to the dtype's eps), k * qk_norm.temp per kv head;
//   RoPE (rotate-half on the first partial_rotary_factor of d) -> attention (scale d^-0.5, GQA,
//   sliding_window on "hybrid_sliding" layers) -> o_proj.
// mlp (ZayaSparseMoeBlock): the router gate (ZayaRouter) r = down_proj(x) [router_hidden_size],
//   plus r_prev * router_states_scale on every layer but the first (r_prev: the previous layer's r);
//   logits = router_mlp.out_proj(gelu(fc2(gelu(fc1(norm(r)))))) over num_experts + 1 classes, the
//   last a skip expert; p = softmax(logits); the class of max p + balancing_biases (float32; the
//   skip expert's entry -1, which transformers' _init_weights writes over the checkpoint's on every
//   load) is picked (num_experts_per_tok 1); out = p[pick] * expert_pick(x) (0 for the skip expert), the
//   experts gate_up_proj [E, 2 * I, H] (gate | up), down_proj [E, H, I], act hidden_act.
// RoPE per layer type from rope_parameters nested by layer type ("hybrid", "hybrid_sliding";
// ZayaConfig.__post_init__'s default: theta 5e6 and 1e4, partial_rotary_factor 0.5 each).
// States per layer (tasks/layer_state.h): the attention's key / value, and beside them
// (attention_side) conv_state [batch_size, (heads + kv_heads) * d, K], the window of the last K
// [q | k] inputs, and recurrent_state [batch_size, kv_heads * d / 2], the last token's
// v_proj_delayed (transformers' conv_states / recurrent_states of the layer). genai 0.18 reads no
// such state beside a KV cache: build with --runtime none.
#include <cmath>
#include <limits>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/layer_types.h"
#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/linear.h"
#include "blocks/mamba.h"
#include "blocks/norms.h"
#include "blocks/rope.h"
#include "tasks/text_generation.h"
#include "util/error.h"

namespace mobius {

namespace {

struct ZayaSizes {
  int64_t vocab_size, hidden_size, num_hidden_layers;
  int64_t heads, kv_heads, head_dim;
  int64_t num_experts, moe_intermediate_size, router_hidden_size;
  int64_t cca_time0, cca_time1;
  int64_t sliding_window;  // of the "hybrid_sliding" layers; 0 where none
  float rms_norm_eps;
  bool attention_bias, lm_head_bias, tie_word_embeddings;
  std::string hidden_act;
  std::vector<std::string> layer_types;
  std::map<std::string, RopeConfig> rope;  // per layer type in use
  DataType dtype;

  int64_t conv_channels() const { return (heads + kv_heads) * head_dim; }
  int64_t conv_window() const { return (cca_time0 - 1) + (cca_time1 - 1); }
  int64_t value_half() const { return kv_heads * head_dim / 2; }
};

// x in `to` (a Cast unless `from` is `to`).
Value* zaya_cast(Ops& op, Value* x, DataType from, DataType to) {
  return from == to ? x : op.Cast(x, {.to = to});
}

// torch.finfo(dtype).eps, ZayaQKNorm's clamp.
double zaya_dtype_eps(DataType dtype) {
  if (dtype == DataType::FLOAT16) return 0.0009765625;
  if (dtype == DataType::BFLOAT16) return 0.0078125;
  return static_cast<double>(std::numeric_limits<float>::epsilon());
}

// model.layers.{i}.self_attn: ZayaAttention with its ZayaCCAProjection (qkv_proj) and ZayaQKNorm.
class ZayaAttention : public Module {
 public:
  explicit ZayaAttention(const ZayaSizes& s) : s_(s) {
    const int64_t h = s.hidden_size, d = s.head_dim, c = s.conv_channels();
    auto linear = [&](const std::string& name, int64_t out) {
      return child<Linear>(name, LinearOptions{.in_features = h, .out_features = out, .bias = s.attention_bias,
                                               .dtype = s.dtype});
    };
    q_proj = linear("qkv_proj.q_proj", s.heads * d);
    k_proj = linear("qkv_proj.k_proj", s.kv_heads * d);
    v_proj_current = linear("qkv_proj.v_proj_current", s.value_half());
    v_proj_delayed = linear("qkv_proj.v_proj_delayed", s.value_half());
    depthwise_weight = param("qkv_proj.conv_qk_depthwise.weight", {c, 1, s.cca_time0}, s.dtype);
    depthwise_bias = param("qkv_proj.conv_qk_depthwise.bias", {c}, s.dtype);
    grouped_weight = param("qkv_proj.conv_qk_grouped.weight", {c, d, s.cca_time1}, s.dtype);
    grouped_bias = param("qkv_proj.conv_qk_grouped.bias", {c}, s.dtype);
    temp = param("qk_norm.temp", {s.kv_heads}, s.dtype);
    o_proj = child<Linear>("o_proj", LinearOptions{.in_features = s.heads * d, .out_features = h,
                                                   .bias = s.attention_bias, .dtype = s.dtype});
  }

  // x [batch, seq, hidden] (normed); token_mask [batch, seq] in the model dtype; mask the layer's
  // additive mask; past {key, value, conv_state, recurrent_state}. Returns [batch, seq, hidden] and
  // the four presents.
  std::pair<Value*, std::vector<Value*>> forward(Ops& op, Value* x, Value* token_mask, Value* mask,
                                                 const RopeTables& rope, std::span<Value* const> past) const {
    auto sc = enter(op);
    constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
    const int64_t d = s_.head_dim, hq = s_.heads, hkv = s_.kv_heads, groups = hq / hkv;
    x = op.Mul(x, op.Unsqueeze(token_mask, {2}));
    Value* q = q_proj->forward(op, x);  // [b, s, hq * d]
    Value* k = k_proj->forward(op, x);  // [b, s, hkv * d]

    // the residual paths: each query head averaged with its group's key head; each key head the
    // mean of its group's averaged query heads
    Value* q_res = op.Mul(op.Add(op.Reshape(q, {0, 0, hkv, groups, d}), op.Reshape(k, {0, 0, hkv, 1, d})), 0.5);
    Value* k_res = op.ReduceMean(q_res, {3}, {.keepdims = 0});  // [b, s, hkv, d]
    q_res = op.Reshape(q_res, {0, 0, hq, d});

    // the two convolutions over the window of the last K inputs and the step's
    Value* window = op.Concat({past[2], op.Transpose(op.Concat({q, k}, {.axis = 2}), {.perm = {0, 2, 1}})}, {.axis = 2});
    Value* conv_state = op.Slice(window, {-s_.conv_window()}, {kEnd}, {2});
    Value* conv = op.Conv(window, depthwise_weight->value(op), depthwise_bias->value(op),
                          {.kernel_shape = {s_.cca_time0}, .strides = {1}, .pads = {0, 0}, .group = s_.conv_channels()});
    conv = op.Conv(conv, grouped_weight->value(op), grouped_bias->value(op),
                   {.kernel_shape = {s_.cca_time1}, .strides = {1}, .pads = {0, 0}, .group = hq + hkv});
    conv = op.Transpose(conv, {.perm = {0, 2, 1}});  // [b, s, channels]
    Value* query = op.Add(op.Reshape(op.Slice(conv, {0}, {hq * d}, {2}), {0, 0, hq, d}), q_res);
    Value* key = op.Add(op.Reshape(op.Slice(conv, {hq * d}, {kEnd}, {2}), {0, 0, hkv, d}), k_res);

    // values: the current token's half, then the previous token's delayed half
    Value* delayed = v_proj_delayed->forward(op, x);  // [b, s, value_half]
    Value* previous = past[3];                         // [b, value_half]
    if (v_proj_delayed->bias) {  // before the first token: v_proj_delayed(0), its bias
      Value* fresh = op.Equal(op.Shape(past[0], {.start = 2, .end = 3}), op.builder().ints({0}));
      previous = op.Where(fresh, v_proj_delayed->bias->value(op), previous);
    }
    Value* shifted = op.Concat({op.Unsqueeze(previous, {1}), op.Slice(delayed, {0}, {-1}, {1})}, {.axis = 1});
    Value* recurrent_state = op.Squeeze(op.Slice(delayed, {-1}, {kEnd}, {1}), {1});
    Value* value = op.Reshape(op.Concat({v_proj_current->forward(op, x), shifted}, {.axis = 2}), {0, 0, hkv, d});

    // ZayaQKNorm: x * sqrt(d) / max(|x|, eps) over each head, keys times temp per kv head
    auto l2 = [&](Value* t) {
      Value* n = op.Max(op.Sqrt(op.ReduceSum(op.Mul(t, t), {-1})), zaya_dtype_eps(s_.dtype));
      return op.Mul(t, op.Div(std::sqrt(static_cast<double>(d)), n));
    };
    query = l2(query);
    key = op.Mul(l2(key), op.Unsqueeze(temp->value(op), {-1}));
    auto heads = [&](Value* t) { return op.Transpose(t, {.perm = {0, 2, 1, 3}}); };
    Value* qh = apply_rope(op, heads(query), rope);
    Value* kh = apply_rope(op, heads(key), rope);
    AttentionOutputs a = op.Attention(qh, kh, heads(value), mask, past[0], past[1],
                                      {.scale = 1.0f / std::sqrt(static_cast<float>(d))});
    op.builder().producer(a.y).tags = {.num_heads = hq, .kv_num_heads = hkv, .head_size = d};
    Value* y = op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
    return {o_proj->forward(op, y), {a.present_key, a.present_value, conv_state, recurrent_state}};
  }

  Linear *q_proj, *k_proj, *v_proj_current, *v_proj_delayed, *o_proj;
  Parameter *depthwise_weight, *depthwise_bias, *grouped_weight, *grouped_bias, *temp;

 private:
  ZayaSizes s_;
};

// model.layers.{i}.mlp: ZayaSparseMoeBlock (gate: ZayaRouter, experts: ZayaExperts).
class ZayaMoE : public Module {
 public:
  ZayaMoE(const ZayaSizes& s, int64_t layer) : s_(s) {
    const int64_t h = s.hidden_size, r = s.router_hidden_size, e = s.num_experts, i = s.moe_intermediate_size;
    auto linear = [&](const std::string& name, int64_t in, int64_t out, bool bias) {
      return child<Linear>(name, LinearOptions{.in_features = in, .out_features = out, .bias = bias, .dtype = s.dtype});
    };
    down_proj = linear("gate.down_proj", h, r, true);
    if (layer != 0) router_states_scale = param("gate.router_states_scale", {r}, s.dtype);
    router_norm = child<RMSNorm>("gate.router_mlp.norm", NormOptions{.dim = r, .eps = s.rms_norm_eps, .dtype = s.dtype});
    fc1 = linear("gate.router_mlp.fc1", r, r, true);
    fc2 = linear("gate.router_mlp.fc2", r, r, true);
    out_proj = linear("gate.router_mlp.out_proj", r, e + 1, false);
    balancing_biases = param("gate.balancing_biases", {e + 1}, DataType::FLOAT);
    gate_up_proj = param("experts.gate_up_proj", {e, h, 2 * i}, s.dtype, /*transpose=*/true);
    experts_down_proj = param("experts.down_proj", {e, i, h}, s.dtype, /*transpose=*/true);
  }

  // x [batch, seq, hidden] (normed); previous the earlier layer's router state [batch, seq,
  // router_hidden_size] (null on the first layer). Returns the output and this layer's router state.
  std::pair<Value*, Value*> forward(Ops& op, Value* x, Value* previous) const {
    auto sc = enter(op);
    const int64_t e = s_.num_experts, i = s_.moe_intermediate_size;
    Value* r = down_proj->forward(op, x);
    if (router_states_scale && previous) r = op.Add(r, op.Mul(previous, router_states_scale->value(op)));
    Value* logits = out_proj->forward(op, op.Gelu(fc2->forward(op, op.Gelu(fc1->forward(op, router_norm->forward(op, r))))));
    Value* probs = op.Softmax(logits, {.axis = -1});  // [b, s, E + 1]
    // ZayaPreTrainedModel._init_weights sets balancing_biases[-1] = -1 after loading (a plain
    // assignment, not a skipped init): the skip expert's bias is -1 whatever the checkpoint holds
    Value* biases = op.Concat({op.Slice(balancing_biases->value(op), {0}, {e}, {0}),
                               op.builder().constant_float({-1.0f}, {1}, DataType::FLOAT)}, {.axis = 0});
    Value* biased = op.Add(zaya_cast(op, probs, s_.dtype, DataType::FLOAT), biases);
    Value* pick = op.TopK(biased, 1).indices;  // [b, s, 1]
    Value* classes = op.Range(op.builder().scalar_i64(0), op.builder().scalar_i64(e + 1), op.builder().scalar_i64(1));
    Value* zero = op.builder().constant_float({0.0f}, {}, s_.dtype);
    Value* routing = op.Slice(op.Where(op.Equal(classes, pick), probs, zero), {0}, {e}, {2});  // skip expert dropped
    routing = op.Transpose(op.Reshape(routing, {-1, e}), {.perm = {1, 0}});                   // [E, tokens]

    Value* flat = op.Reshape(x, {-1, s_.hidden_size});
    std::vector<Value*> gate_up = op.Split(op.MatMul(flat, gate_up_proj->value(op)), {i, i}, {.axis = -1});
    Value* y = op.MatMul(op.Mul(activation(op, s_.hidden_act, gate_up[0]), gate_up[1]), experts_down_proj->value(op));
    Value* out = op.ReduceSum(op.Mul(y, op.Unsqueeze(routing, {-1})), {0}, {.keepdims = 0});
    return {op.Reshape(out, op.Shape(x)), r};
  }

  Linear *down_proj, *fc1, *fc2, *out_proj;
  Parameter* router_states_scale = nullptr;  // every layer but the first
  RMSNorm* router_norm;
  Parameter *balancing_biases, *gate_up_proj, *experts_down_proj;

 private:
  ZayaSizes s_;
};

// ZayaResidualScaling (post_attention_residual_scale, post_mlp_residual_scale).
class ZayaResidualScaling : public Module {
 public:
  explicit ZayaResidualScaling(const ZayaSizes& s) : dtype_(s.dtype) {
    hidden_states_scale = param("hidden_states_scale", {s.hidden_size}, s.dtype);
    hidden_states_bias = param("hidden_states_bias", {s.hidden_size}, s.dtype);
    residual_scale = param("residual_scale", {s.hidden_size}, s.dtype);
    residual_bias = param("residual_bias", {s.hidden_size}, s.dtype);
  }
  // y [batch, seq, hidden] in the model dtype, r the float32 residual: float32 [batch, seq, hidden].
  Value* forward(Ops& op, Value* y, Value* r) const {
    auto to_float32 = [&](Value* t) { return zaya_cast(op, t, dtype_, DataType::FLOAT); };
    Value* scaled = to_float32(op.Mul(op.Add(y, hidden_states_bias->value(op)), hidden_states_scale->value(op)));
    Value* kept = op.Mul(op.Add(r, to_float32(residual_bias->value(op))), to_float32(residual_scale->value(op)));
    return op.Add(scaled, kept);
  }
  Parameter *hidden_states_scale, *hidden_states_bias, *residual_scale, *residual_bias;

 private:
  DataType dtype_;
};

class ZayaLayer : public Module {
 public:
  ZayaLayer(const ZayaSizes& s, int64_t layer) {
    const NormOptions norm{.dim = s.hidden_size, .eps = s.rms_norm_eps, .dtype = s.dtype};
    input_layernorm = child<RMSNorm>("input_layernorm", norm);
    post_attention_layernorm = child<RMSNorm>("post_attention_layernorm", norm);
    self_attn = child<ZayaAttention>("self_attn", s);
    mlp = child<ZayaMoE>("mlp", s, layer);
    post_attention_residual_scale = child<ZayaResidualScaling>("post_attention_residual_scale", s);
    post_mlp_residual_scale = child<ZayaResidualScaling>("post_mlp_residual_scale", s);
  }
  RMSNorm *input_layernorm, *post_attention_layernorm;
  ZayaAttention* self_attn;
  ZayaMoE* mlp;
  ZayaResidualScaling *post_attention_residual_scale, *post_mlp_residual_scale;
};

class ZayaBackbone : public Module {
 public:
  explicit ZayaBackbone(const ZayaSizes& s) {
    embed_tokens = child<Embedding>("embed_tokens", s.vocab_size, s.hidden_size, s.dtype);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i) layers.push_back(child<ZayaLayer>("layers." + std::to_string(i), s, i));
    norm = child<RMSNorm>("norm", NormOptions{.dim = s.hidden_size, .eps = s.rms_norm_eps, .dtype = s.dtype});
    input_hidden_states_scale = param("input_hidden_states_scale", {s.hidden_size}, s.dtype);
    input_hidden_states_bias = param("input_hidden_states_bias", {s.hidden_size}, s.dtype);
  }
  Embedding* embed_tokens;
  std::vector<ZayaLayer*> layers;
  RMSNorm* norm;
  Parameter *input_hidden_states_scale, *input_hidden_states_bias;
};

class ZayaCausalLM : public CausalLM {
 public:
  explicit ZayaCausalLM(const ZayaSizes& s) : s_(s) {
    model_ = child<ZayaBackbone>("model", s);
    lm_head_ = child<LMHead>("lm_head", LMHeadOptions{s.hidden_size, s.vocab_size, s.lm_head_bias, s.dtype},
                             s.tie_word_embeddings ? model_->embed_tokens : nullptr);
  }
  DataType dtype() const override { return s_.dtype; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> layer_states() const override {
    std::vector<LayerStates> states;
    for (const std::string& type : s_.layer_types) {
      LayerState kv{StateKind::self_kv, s_.kv_heads, s_.head_dim};
      if (type == "hybrid_sliding") kv = {StateKind::sliding_kv, s_.kv_heads, s_.head_dim, 0, s_.sliding_window};
      const LayerState cca{
          .kind = StateKind::attention_side,
          .tensors = {{.name = "conv_state", .shape = {"batch_size", s_.conv_channels(), s_.conv_window()}},
                      {.name = "recurrent_state", .shape = {"batch_size", s_.value_half()}}}};
      states.push_back({kv, cca});
    }
    return states;
  }

  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    CausalLMOutputs out;
    Value* h;
    {
      auto sc = op.builder().scope("model");
      Value* embeds = in.inputs_embeds ? in.inputs_embeds : model_->embed_tokens->forward(op, in.input_ids);
      Value* tokens = in.inputs_embeds ? in.inputs_embeds : in.input_ids;
      h = op.Mul(op.Add(embeds, model_->input_hidden_states_bias->value(op)), model_->input_hidden_states_scale->value(op));
      h = zaya_cast(op, h, s_.dtype, DataType::FLOAT);  // the float32 residual stream
      Value* token_mask = step_token_mask(op, in.attention_mask, tokens, s_.dtype);
      std::map<std::string, std::pair<Value*, RopeTables>> per_type;  // mask and RoPE per layer type
      for (const auto& [type, rope] : s_.rope) {
        const int64_t window = type == "hybrid_sliding" ? s_.sliding_window : 0;
        per_type[type] = {causal_mask(op, in.attention_mask, tokens, s_.dtype, window, in.attention_overlay),
                          rope_tables(op, rope, in.position_ids, s_.dtype)};
      }
      Value* router_state = nullptr;
      for (size_t i = 0; i < model_->layers.size(); ++i) {
        const ZayaLayer* layer = model_->layers[i];
        auto ls = op.builder().scope("layers." + std::to_string(i));
        const auto& [mask, rope] = per_type.at(s_.layer_types[i]);
        auto [attn, present] = layer->self_attn->forward(
            op, layer->input_layernorm->forward(op, zaya_cast(op, h, DataType::FLOAT, s_.dtype)), token_mask, mask, rope,
            in.past.at(i));
        h = layer->post_attention_residual_scale->forward(op, attn, h);
        auto [moe, state] = layer->mlp->forward(
            op, layer->post_attention_layernorm->forward(op, zaya_cast(op, h, DataType::FLOAT, s_.dtype)), router_state);
        router_state = state;
        h = layer->post_mlp_residual_scale->forward(op, moe, h);
        out.present.push_back(std::move(present));
      }
      h = model_->norm->forward(op, zaya_cast(op, h, DataType::FLOAT, s_.dtype));
    }
    out.logits = lm_head_->forward(op, h);
    return out;
  }

 private:
  ZayaSizes s_;
  ZayaBackbone* model_;
  LMHead* lm_head_;
};

}  // namespace

std::unique_ptr<Architecture> create_zaya(const HfConfig& c, DataType dtype) {
  ZayaSizes s{.vocab_size = c.get_int("vocab_size"), .hidden_size = c.get_int("hidden_size"),
              .num_hidden_layers = c.get_int("num_hidden_layers"), .heads = c.int_or("num_attention_heads", 8),
              .kv_heads = c.int_or("num_key_value_heads", 2), .head_dim = c.int_or("head_dim", 128),
              .num_experts = c.int_or("num_experts", 16), .moe_intermediate_size = c.int_or("moe_intermediate_size", 2048),
              .router_hidden_size = c.int_or("router_hidden_size", 256), .cca_time0 = c.int_or("cca_time0", 2),
              .cca_time1 = c.int_or("cca_time1", 2), .sliding_window = 0,
              .rms_norm_eps = static_cast<float>(c.float_or("rms_norm_eps", 1e-5)),
              .attention_bias = c.bool_or("attention_bias", false), .lm_head_bias = c.bool_or("lm_head_bias", false),
              .tie_word_embeddings = c.bool_or("tie_word_embeddings", true),
              .hidden_act = read_activation(c, "hidden_act", "silu"), .layer_types = {}, .rope = {},
              .dtype = dtype};
  auto check = [&](const char* field, int64_t v, int64_t max) {
    if (v < 1 || v > max) c.fail(field, "expected 1 to " + std::to_string(max) + ", got " + std::to_string(v));
  };
  check("vocab_size", s.vocab_size, kMaxVocabSize);
  check("hidden_size", s.hidden_size, kMaxHiddenSize);
  check("num_hidden_layers", s.num_hidden_layers, kMaxLayers);
  check("num_attention_heads", s.heads, kMaxHeads);
  check("num_key_value_heads", s.kv_heads, kMaxHeads);
  check("head_dim", s.head_dim, kMaxHeadDim);
  check("num_experts", s.num_experts, kMaxSmallSize);
  check("moe_intermediate_size", s.moe_intermediate_size, kMaxFfnSize);
  check("router_hidden_size", s.router_hidden_size, kMaxHiddenSize);
  check("cca_time0", s.cca_time0, kMaxSmallSize);
  check("cca_time1", s.cca_time1, kMaxSmallSize);
  if (s.heads % s.kv_heads != 0)
    c.fail("num_key_value_heads", "must divide num_attention_heads " + std::to_string(s.heads));
  if (s.kv_heads * s.head_dim % 2 != 0)
    c.fail("head_dim", "num_key_value_heads * head_dim must be even (the values' current and delayed halves)");
  if (s.conv_window() < 1)
    c.fail("cca_time0", "cca_time0 + cca_time1 must be at least 3 (a convolution window of at least one input)");
  if (c.int_or("num_experts_per_tok", 1) != 1) c.fail("num_experts_per_tok", "ZAYA supports 1 only (ZayaConfig)");
  s.layer_types = read_layer_list(c, "layer_types", s.num_hidden_layers, {"hybrid", "hybrid_sliding"},
                                  std::vector<std::string>(static_cast<size_t>(s.num_hidden_layers), "hybrid"));
  const bool slides = std::find(s.layer_types.begin(), s.layer_types.end(), "hybrid_sliding") != s.layer_types.end();
  if (slides) {
    if (!c.has("sliding_window")) c.fail("sliding_window", "must be set when layer_types contains hybrid_sliding");
    s.sliding_window = c.get_int("sliding_window");
    check("sliding_window", s.sliding_window, kMaxPositions);
  }
  // ZayaConfig.__post_init__'s rope_parameters when config.json has none; ZayaRotaryEmbedding reads
  // rope_parameters[layer_type] (partial_rotary_factor default 1.0)
  const std::optional<HfConfig> rope = c.sub("rope_parameters");
  for (const std::string& type : s.layer_types) {
    if (s.rope.count(type)) continue;
    std::optional<HfConfig> params;
    if (rope) {
      params = rope->sub(type);
      if (!params) c.fail("rope_parameters", "expected a dict per layer type (\"" + type + "\")");
    } else {
      const double theta = type == "hybrid" ? 5000000.0 : 10000.0;
      params = HfConfig(nlohmann::json{{"rope_type", "default"}, {"rope_theta", theta}, {"partial_rotary_factor", 0.5}},
                        c.file(), "default rope_parameters." + type + ".");
    }
    s.rope[type] = RopeConfig::from_params(c, params, s.head_dim, {.rope_theta = 10000.0, .partial_rotary_factor = 1.0});
  }
  return std::make_unique<ZayaCausalLM>(s);
}

}  // namespace mobius
