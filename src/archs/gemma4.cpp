// Gemma 4 text decoder, model type gemma4_text (transformers/models/gemma4/modeling_gemma4.py
// Gemma4ForCausalLM, configuration_gemma4.py Gemma4TextConfig):
//   e = embed_tokens(ids) * hidden_size**0.5
//   per-layer inputs (PLE, when hidden_size_per_layer_input P > 0; L = num_hidden_layers):
//     t = embed_tokens_per_layer(ids) * P**0.5                         -> [batch, seq, L, P]
//     c = per_layer_projection_norm(per_layer_model_projection(e) * hidden_size**-0.5) -> [.., L, P]
//     pli = (c + t) * 2**-0.5; layer i reads pli[:, :, i]
//   layer i (Gemma4TextDecoderLayer; every norm Gemma4RMSNorm: x * rsqrt(mean(x^2) + eps) * weight,
//   no (1 + weight)):
//     h = x + post_attention_layernorm(self_attn(input_layernorm(x)))
//     h = h + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(h)))     (gated, gelu tanh)
//     h = h + post_per_layer_input_norm(per_layer_projection(act(per_layer_input_gate(h)) * pli_i))
//     out = h * layer_scalar
//   -> norm -> lm_head (tied by default) -> final_logit_softcapping (none by default)
// Attention (Gemma4TextAttention): scale 1; q_norm, k_norm over head_dim, RoPE on q and k; values
// through v_norm (no weight). Two layer types (layer_types, default every 6th full, the last layer
// forced full): sliding_attention (window sliding_window, head_dim, num_key_value_heads) and
// full_attention (head size global_head_dim, default 512; with attention_k_eq_v the kv heads
// num_global_key_value_heads and no v_proj: the values are k_proj's output before k_norm), or as
// saved by transformers 5.23, per_layer_config {"<layer>": {"head_dim", "num_key_value_heads"}}.
// RoPE per layer type (rope_parameters {"sliding_attention": default 1e4, "full_attention":
// proportional, partial_rotary_factor 0.25, 1e6}), each with its type's head size.
// KV sharing (num_kv_shared_layers, Gemma4TextConfig.kv_sharing_modes): the last
// num_kv_shared_layers layers have no k_proj / v_proj / k_norm / v_norm and attend to the keys and
// values (past and new) of the last earlier layer of their type. In the package those layers carry
// no state: past_key_values.{i}.* / present.{i}.* exist only for the layers that own a cache (the
// indices keep the layer numbers, so the shared layers' numbers are absent). With
// use_double_wide_mlp the shared layers' MLP is 2 * intermediate_size wide.
// The attention, the KV sources and the per-layer inputs are archs/gemma4.h's (Gemma 3n reuses them).
// Not supported (refused naming the field): enable_moe_block (the MoE block beside the MLP),
// use_bidirectional_attention "all" (not a causal LM).
// gemma4_unified_text (modular_gemma4_unified.py Gemma4UnifiedForCausalLM, Gemma4UnifiedTextConfig):
// the same layers (Gemma4UnifiedTextDecoderLayer: Gemma 2's sandwich layer times layer_scalar)
// without per-layer inputs, whatever config.json says (its config class has no such fields), and
// sliding_window 1024 by default; use_bidirectional_attention "vision" (its default) is causal for text.
// onnxruntime-genai 0.18 names gemma4 / gemma4_text model types and a per_layer_inputs tensor (its
// multimodal pipeline's I/O, not this single graph's), and its "decoder" type cannot skip the
// KV-shared layers' absent caches: the package is built with --runtime none.
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
#include "blocks/attention.h"
#include "blocks/decoder.h"
#include "blocks/rope.h"
#include "blocks/spec_check.h"
#include "util/error.h"

namespace mobius {

Gemma4SelfAttention::Gemma4SelfAttention(const Gemma4LayerPlan& p, bool owns_cache) : o_(p.attention) {
  const AttentionOptions& o = p.attention;
  const int64_t q_dim = o.num_attention_heads * o.head_dim, kv_dim = o.num_key_value_heads * o.head_dim;
  const NormOptions head_norm{.dim = o.head_dim, .eps = o.norm_eps, .dtype = o.dtype};
  q_proj = child<Linear>("q_proj", LinearOptions{o.hidden_size, q_dim, o.qkv_bias, o.dtype});
  q_norm = child<RMSNorm>("q_norm", head_norm);
  if (owns_cache) {
    k_proj = child<Linear>("k_proj", LinearOptions{o.hidden_size, kv_dim, o.qkv_bias, o.dtype});
    if (!p.k_eq_v) v_proj = child<Linear>("v_proj", LinearOptions{o.hidden_size, kv_dim, o.qkv_bias, o.dtype});
    k_norm = child<RMSNorm>("k_norm", head_norm);
    NormOptions unscaled = head_norm;
    unscaled.elementwise_affine = false;
    v_norm = child<RMSNorm>("v_norm", unscaled);
  }
  o_proj = child<Linear>("o_proj", LinearOptions{q_dim, o.hidden_size, o.o_bias, o.dtype});
}

LayerState Gemma4SelfAttention::state() const {
  if (o_.sliding_window > 0)
    return {StateKind::sliding_kv, o_.num_key_value_heads, o_.head_dim, 0, o_.sliding_window};
  return {StateKind::self_kv, o_.num_key_value_heads, o_.head_dim};
}

AttentionResult Gemma4SelfAttention::forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                                             Value* past_value, const KVPair& shared) const {
  auto s = enter(op);
  const int64_t d = o_.head_dim;
  // [batch, seq, heads, d] -> normalized -> [batch, heads, seq, d] (rotated when `rope`)
  auto heads = [&](Value* y, int64_t n, const Norm* norm, bool rope) {
    y = norm->forward(op, op.Reshape(y, {0, 0, n, d}));
    y = op.Transpose(y, {.perm = {0, 2, 1, 3}});
    return rope ? apply_rope(op, y, ctx.rope) : y;
  };
  Value* q = heads(q_proj->forward(op, x), o_.num_attention_heads, q_norm, true);
  AttentionOutputs a;
  if (k_proj) {
    Value* k_raw = k_proj->forward(op, x);
    Value* k = heads(k_raw, o_.num_key_value_heads, k_norm, true);
    Value* v = heads(v_proj ? v_proj->forward(op, x) : k_raw, o_.num_key_value_heads, v_norm, false);
    a = op.Attention(q, k, v, ctx.mask, past_key, past_value, {.scale = 1.0f});
    op.builder().producer(a.y).tags = {.num_heads = o_.num_attention_heads,
                                       .kv_num_heads = o_.num_key_value_heads, .head_size = d};
  } else {
    a = op.Attention(q, shared.key, shared.value, ctx.mask, nullptr, nullptr, {.scale = 1.0f});
  }
  Value* y = op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
  return {o_proj->forward(op, y), a.present_key, a.present_value};
}

std::vector<int64_t> gemma4_kv_sources(const HfConfig& c, const std::vector<std::string>& types,
                                       int64_t default_shared) {
  const auto layers = static_cast<int64_t>(types.size());
  const int64_t shared = c.int_or("num_kv_shared_layers", default_shared);
  if (shared < 0 || shared >= layers)
    c.fail("num_kv_shared_layers", "expected 0 to num_hidden_layers - 1 (" + std::to_string(layers - 1) + ")");
  const int64_t first_shared = layers - shared;
  std::vector<int64_t> sources;
  std::map<std::string, int64_t> last_owner;  // the last layer of each type before first_shared
  for (int64_t i = 0; i < layers; ++i) {
    const std::string& type = types[static_cast<size_t>(i)];
    if (i < first_shared) {
      last_owner[type] = i;
      sources.push_back(i);
      continue;
    }
    if (!last_owner.count(type))
      c.fail("num_kv_shared_layers", "the KV-shared layers include " + type + ", which no earlier layer computes "
                                     "(transformers: the set of layer types producing a cache is different)");
    sources.push_back(last_owner.at(type));
  }
  return sources;
}

Value* gemma_per_layer_inputs(Ops& op, const Embedding& table, const Linear& projection, const RMSNorm& norm,
                              Value* ids, Value* embeds, int64_t layers, int64_t dim, int64_t hidden) {
  const auto scale = static_cast<float>(std::sqrt(static_cast<double>(dim)));
  Value* tokens = op.Reshape(op.Mul(table.forward(op, ids), scale), {0, 0, layers, dim});
  Value* context = op.Mul(projection.forward(op, embeds), static_cast<float>(std::pow(static_cast<double>(hidden), -0.5)));
  context = norm.forward(op, op.Reshape(context, {0, 0, layers, dim}));
  return op.Mul(op.Add(context, tokens), static_cast<float>(std::pow(2.0, -0.5)));
}

namespace {

struct Gemma4Spec {
  DecoderSpec base;  // sizes, norms, layer types, window, RoPE per type, LM head (checked by check_spec)
  std::vector<Gemma4LayerPlan> layers;
  int64_t per_layer_dim = 0;         // hidden_size_per_layer_input P; 0: no per-layer inputs
  int64_t per_layer_vocab_size = 0;  // vocab_size_per_layer_input
};

// Gemma4TextDecoderLayer without the MoE block.
class Gemma4DecoderLayer : public Module {
 public:
  Gemma4DecoderLayer(const Gemma4Spec& s, int64_t i) : act_(s.base.mlp.hidden_act) {
    const Gemma4LayerPlan& p = s.layers.at(static_cast<size_t>(i));
    const NormOptions norm = s.base.norm();
    input_layernorm = child<RMSNorm>("input_layernorm", norm);
    self_attn = child<Gemma4SelfAttention>("self_attn", p, p.kv_source == i);
    post_attention_layernorm = child<RMSNorm>("post_attention_layernorm", norm);
    pre_feedforward_layernorm = child<RMSNorm>("pre_feedforward_layernorm", norm);
    MLPOptions m = s.base.mlp;
    m.intermediate_size = p.intermediate_size;
    mlp = adopt("mlp", make_mlp(m));
    post_feedforward_layernorm = child<RMSNorm>("post_feedforward_layernorm", norm);
    if (s.per_layer_dim > 0) {
      const DataType dt = s.base.dtype;
      per_layer_input_gate = child<Linear>("per_layer_input_gate", LinearOptions{s.base.hidden_size, s.per_layer_dim, false, dt});
      per_layer_projection = child<Linear>("per_layer_projection", LinearOptions{s.per_layer_dim, s.base.hidden_size, false, dt});
      post_per_layer_input_norm = child<RMSNorm>("post_per_layer_input_norm", norm);
    }
    layer_scalar = param("layer_scalar", {1}, s.base.dtype);
  }

  // x [batch, seq, hidden]; per_layer_input [batch, seq, P] or null. Returns the layer output and
  // the present {key, value} of an owner (empty for a KV-shared layer).
  AttentionResult forward(Ops& op, Value* x, Value* per_layer_input, const AttentionContext& ctx,
                          std::span<Value* const> past, const KVPair& shared) const {
    auto s = enter(op);
    AttentionResult a = self_attn->forward(op, input_layernorm->forward(op, x), ctx, past.empty() ? nullptr : past[0],
                                           past.empty() ? nullptr : past[1], shared);
    Value* h = op.Add(x, post_attention_layernorm->forward(op, a.hidden));
    h = op.Add(h, post_feedforward_layernorm->forward(op, mlp->forward(op, pre_feedforward_layernorm->forward(op, h))));
    if (per_layer_input_gate) {
      Value* g = op.Mul(activation(op, act_, per_layer_input_gate->forward(op, h)), per_layer_input);
      h = op.Add(h, post_per_layer_input_norm->forward(op, per_layer_projection->forward(op, g)));
    }
    a.hidden = op.Mul(h, layer_scalar->value(op));
    return a;
  }

  RMSNorm *input_layernorm, *post_attention_layernorm, *pre_feedforward_layernorm, *post_feedforward_layernorm;
  Gemma4SelfAttention* self_attn;
  FeedForward* mlp;
  Linear *per_layer_input_gate = nullptr, *per_layer_projection = nullptr;
  RMSNorm* post_per_layer_input_norm = nullptr;
  Parameter* layer_scalar;

 private:
  std::string act_;
};

class Gemma4TextModel : public Module {
 public:
  explicit Gemma4TextModel(const Gemma4Spec& s) {
    const DecoderSpec& b = s.base;
    embed_tokens = child<Embedding>("embed_tokens", b.vocab_size, b.hidden_size, b.dtype);
    for (int64_t i = 0; i < b.num_hidden_layers; ++i)
      layers.push_back(child<Gemma4DecoderLayer>("layers." + std::to_string(i), s, i));
    norm = child<RMSNorm>("norm", b.norm());
    if (s.per_layer_dim > 0) {
      const int64_t width = b.num_hidden_layers * s.per_layer_dim;
      embed_tokens_per_layer = child<Embedding>("embed_tokens_per_layer", s.per_layer_vocab_size, width, b.dtype);
      per_layer_model_projection = child<Linear>("per_layer_model_projection",
                                                 LinearOptions{b.hidden_size, width, false, b.dtype});
      per_layer_projection_norm = child<RMSNorm>("per_layer_projection_norm",
                                                 NormOptions{.dim = s.per_layer_dim, .eps = b.norm_eps, .dtype = b.dtype});
    }
  }
  Embedding* embed_tokens;
  std::vector<Gemma4DecoderLayer*> layers;
  RMSNorm* norm;
  Embedding* embed_tokens_per_layer = nullptr;
  Linear* per_layer_model_projection = nullptr;
  RMSNorm* per_layer_projection_norm = nullptr;
};

class Gemma4CausalLM final : public KvSharingCausalLM<Gemma4Spec, Gemma4TextModel> {
 public:
  using KvSharingCausalLM::KvSharingCausalLM;

  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    MOBIUS_ASSERT(!in.inputs_embeds, "gemma4_text's per-layer inputs are looked up from input_ids");
    const DecoderSpec& b = s_.base;
    CausalLMOutputs out;
    Value* h;
    {
      auto scope = op.builder().scope("model");
      // Gemma4TextScaledWordEmbedding: embed_scale, a float32 scalar
      h = op.Mul(model_->embed_tokens->forward(op, in.input_ids), b.embed_scale);
      Value* per_layer = nullptr;  // [batch, seq, L, P]
      if (const Embedding* table = model_->embed_tokens_per_layer)
        per_layer = gemma_per_layer_inputs(op, *table, *model_->per_layer_model_projection,
                                           *model_->per_layer_projection_norm, in.input_ids, h, b.num_hidden_layers,
                                           s_.per_layer_dim, b.hidden_size);
      std::map<std::string, AttentionContext> contexts;  // per layer type: its mask and RoPE tables
      for (const std::string& type : std::set<std::string>(b.layer_types.begin(), b.layer_types.end())) {
        const int64_t window = type == "sliding_attention" ? b.sliding_window : 0;
        contexts.emplace(type, AttentionContext{causal_mask(op, in.attention_mask, in.input_ids, b.dtype, window),
                                                rope_tables(op, b.rope_for(type), in.position_ids, b.dtype)});
      }
      std::map<int64_t, KVPair> caches;  // the owners' presents, by layer
      for (size_t i = 0; i < model_->layers.size(); ++i) {
        const int64_t source = s_.layers[i].kv_source;
        Value* pli = per_layer ? op.Gather(per_layer, op.builder().scalar_i64(static_cast<int64_t>(i)), {.axis = 2})
                               : nullptr;
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
      h = model_->norm->forward(op, h);
    }
    out.logits = lm_head_->forward(op, h);
    if (const float c = b.final_logit_softcapping; c != 0.0f) out.logits = op.Mul(op.Tanh(op.Div(out.logits, c)), c);
    return out;
  }

};

// The full layers' head_dim and num_key_value_heads: per_layer_config as transformers saves it,
// else Gemma4TextConfig.__post_init__'s global_head_dim (512) and, with attention_k_eq_v,
// num_global_key_value_heads. Sliding layers keep the top-level head_dim / num_key_value_heads.
void read_gemma4_geometry(const HfConfig& c, Gemma4Spec& s, bool k_eq_v) {
  const DecoderSpec& b = s.base;
  std::map<std::string, std::pair<int64_t, int64_t>> by_type;  // head_dim, kv heads of each layer type
  for (size_t i = 0; i < s.layers.size(); ++i) {
    AttentionOptions& a = s.layers[i].attention;
    if (c.has("per_layer_config")) {
      if (std::optional<HfConfig> o = c.sub("per_layer_config")->sub(std::to_string(i))) {
        for (const auto& [key, value] : o->json().items())
          if (key != "head_dim" && key != "num_key_value_heads")
            o->fail(key, "per-layer overrides other than head_dim and num_key_value_heads are not supported");
        a.head_dim = o->int_or("head_dim", a.head_dim);
        a.num_key_value_heads = o->int_or("num_key_value_heads", a.num_key_value_heads);
      }
    } else if (b.layer_types[i] == "full_attention") {
      a.head_dim = c.int_or("global_head_dim", 512);
      if (k_eq_v && c.has("num_global_key_value_heads")) a.num_key_value_heads = c.get_int("num_global_key_value_heads");
    }
    const std::pair<int64_t, int64_t> geometry{a.head_dim, a.num_key_value_heads};
    auto [it, added] = by_type.emplace(b.layer_types[i], geometry);
    if (!added && it->second != geometry)
      c.fail("per_layer_config", "layers of one type (" + b.layer_types[i] + ") must have the same head_dim and "
                                 "num_key_value_heads (transformers' per-layer-type view requires it)");
  }
  if (c.has("per_layer_config"))
    for (const auto& [key, value] : c.json()["per_layer_config"].items()) {
      const bool layer = !key.empty() && key.size() < 5 && key.find_first_not_of("0123456789") == std::string::npos &&
                         std::stoll(key) < b.num_hidden_layers;
      if (!layer) c.fail("per_layer_config", "key '" + key + "' is not a layer index below num_hidden_layers");
    }
}

// What differs between the two text config classes: Gemma4UnifiedTextConfig (Gemma4TextConfig's
// subclass) removes the per-layer-input and MoE fields (AttributeError: never read) and defaults
// sliding_window to 1024.
struct Gemma4TextClass {
  int64_t sliding_window;
  bool per_layer_and_moe_fields;  // hidden_size_per_layer_input, vocab_size_per_layer_input, enable_moe_block
};

Gemma4Spec gemma4_spec(const HfConfig& c, DataType dtype, const Gemma4TextClass& cls) {
  if (cls.per_layer_and_moe_fields && c.bool_or("enable_moe_block", false))
    c.fail("enable_moe_block", "Gemma 4's mixture-of-experts block (router and experts beside the MLP) is not "
                               "supported yet");
  if (c.string_or("use_bidirectional_attention", "") == "all")
    c.fail("use_bidirectional_attention", "\"all\": bidirectional attention is not a causal LM");
  Gemma4Spec s;
  DecoderSpec& b = s.base = decoder_sizes(c, dtype);
  b.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  b.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(b.hidden_size)));
  b.final_logit_softcapping = read_softcap(c, "final_logit_softcapping", 0.0);
  const std::string act = read_activation(c, "hidden_activation", "gelu_pytorch_tanh");
  b.mlp = {b.hidden_size, c.get_int("intermediate_size"), act, false, dtype};
  AttentionOptions a = read_attention(c, b.hidden_size, dtype, {.default_num_key_value_heads = 4, .default_head_dim = 256});
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", false);
  a.norm_eps = b.norm_eps;
  a.scale = 1.0f;
  b.attention = a;
  // the class default: every 6th layer full; the last layer is forced to full attention
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < b.num_hidden_layers; ++i) fallback.push_back((i + 1) % 6 ? "sliding_attention" : "full_attention");
  b.layer_types = read_layer_types(c, b.num_hidden_layers, fallback);
  b.layer_types.back() = "full_attention";
  b.sliding_window = c.int_or("sliding_window", cls.sliding_window);
  if (b.sliding_window <= 0) c.fail("sliding_window", "must be positive");

  const bool k_eq_v = c.bool_or("attention_k_eq_v", false);
  const bool double_wide = c.bool_or("use_double_wide_mlp", false);
  const std::vector<int64_t> sources = gemma4_kv_sources(c, b.layer_types, 0);
  for (int64_t i = 0; i < b.num_hidden_layers; ++i) {
    const bool sliding = b.layer_types[static_cast<size_t>(i)] == "sliding_attention";
    const int64_t source = sources[static_cast<size_t>(i)];
    AttentionOptions la = a;
    if (sliding) la.sliding_window = b.sliding_window;
    s.layers.push_back({.attention = la, .k_eq_v = k_eq_v && !sliding, .kv_source = source,
                        .intermediate_size = b.mlp.intermediate_size * (double_wide && source != i ? 2 : 1)});
  }
  read_gemma4_geometry(c, s, k_eq_v);

  // RoPE per layer type, with that type's head size
  for (const std::string& type : {std::string("sliding_attention"), std::string("full_attention")}) {
    const auto layer = std::find(b.layer_types.begin(), b.layer_types.end(), type);
    if (layer == b.layer_types.end()) continue;
    const int64_t head_dim = s.layers[static_cast<size_t>(layer - b.layer_types.begin())].attention.head_dim;
    RopeConfig r = layer_type_rope_or_default(
        c, type, head_dim,
        type == "sliding_attention" ? R"({"rope_type": "default", "rope_theta": 10000.0})"
                                    : R"({"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0})");
    if (type == "full_attention") b.rope = r;
    else b.layer_type_rope[type] = r;
  }
  if (!cls.per_layer_and_moe_fields) return s;
  // 0 (or null): no per-layer inputs
  s.per_layer_dim = c.int_or("hidden_size_per_layer_input", 256);
  if (s.per_layer_dim < 0 || s.per_layer_dim > kMaxHiddenSize || b.num_hidden_layers * s.per_layer_dim > kMaxFfnSize)
    c.fail("hidden_size_per_layer_input", "expected 0 to " + std::to_string(kMaxHiddenSize) +
                                              ", num_hidden_layers times it at most " + std::to_string(kMaxFfnSize));
  if (s.per_layer_dim > 0) {
    s.per_layer_vocab_size = c.int_or("vocab_size_per_layer_input", 262144);
    if (s.per_layer_vocab_size < 1 || s.per_layer_vocab_size > kMaxVocabSize)
      c.fail("vocab_size_per_layer_input", "expected 1 to " + std::to_string(kMaxVocabSize));
  }
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_gemma4_text(const HfConfig& c, DataType dtype) {
  return std::make_unique<Gemma4CausalLM>(gemma4_spec(c, dtype, {.sliding_window = 512, .per_layer_and_moe_fields = true}));
}

std::unique_ptr<Architecture> create_gemma4_unified_text(const HfConfig& c, DataType dtype) {
  return std::make_unique<Gemma4CausalLM>(gemma4_spec(c, dtype, {.sliding_window = 1024, .per_layer_and_moe_fields = false}));
}

}  // namespace mobius
