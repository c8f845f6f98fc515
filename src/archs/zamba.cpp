// Zamba (transformers/models/zamba/modeling_zamba.py ZambaForCausalLM; configuration_zamba.py)
// and the model class it shares with Zamba2 (archs/zamba.h, archs/zamba2.cpp).
// Zamba: the multi-head Mamba mixer (blocks/multi_head_mamba.h: n_mamba_heads, mamba_d_state,
// mamba_d_conv, mamba_expand, mamba_dt_rank ("auto": ceil(hidden_size / 16)), mamba_conv_bias,
// mamba_proj_bias, hidden_mamba_act) and one shared block, model.layers.{i}.shared_transf of the
// first hybrid layer: attention over attention_hidden_size (null: 2 * hidden_size; the block reads
// concat(hidden, embeddings), so it must be that) with heads of attention_head_dim (null: 2 *
// hidden_size // num_attention_heads), no position encoding; ZambaMLP (gate_proj, up_proj,
// down_proj without bias, hidden_act). layers_block_type (alias layer_types) or, without it,
// ZambaConfig's pattern: layers 0 and 1 Mamba, 2 hybrid, then layer 3 + k hybrid where
// k % attn_layer_period == attn_layer_offset.
#include "archs/zamba.h"

#include <algorithm>
#include <cmath>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/mamba.h"
#include "blocks/multi_head_mamba.h"
#include "blocks/rope.h"
#include "util/error.h"

namespace mobius {

// self_attn: q/k/v 2 H -> heads * head_dim (no bias), each plus the application's adapter, RoPE
// where ctx has tables, o_proj heads * head_dim -> H.
class ZambaSharedBlock::SelfAttn : public Module {
 public:
  explicit SelfAttn(const ZambaSharedOptions& o) : o_(o) {
    const int64_t in = 2 * o.hidden_size, q_dim = o.num_attention_heads * o.head_dim,
                  kv_dim = o.num_key_value_heads * o.head_dim;
    q_proj = child<Linear>("q_proj", LinearOptions{in, q_dim, false, o.dtype});
    k_proj = child<Linear>("k_proj", LinearOptions{in, kv_dim, false, o.dtype});
    v_proj = child<Linear>("v_proj", LinearOptions{in, kv_dim, false, o.dtype});
    o_proj = child<Linear>("o_proj", LinearOptions{q_dim, o.hidden_size, false, o.dtype});
    if (!o.attention_adapters) return;
    const LowRankOptions lr{.in_features = in, .rank = o.adapter_rank, .out_features = in, .dtype = o.dtype};
    for (int64_t a : o.adapted_applications) {
      const std::string i = "." + std::to_string(a);
      adapters[a] = {child<LowRankPath>("linear_q_adapter_list" + i, lr), child<LowRankPath>("linear_k_adapter_list" + i, lr),
                     child<LowRankPath>("linear_v_adapter_list" + i, lr)};
    }
  }

  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key, Value* past_value,
                          int64_t application) const {
    auto s = enter(op);
    const auto found = adapters.find(application);
    const Adapters none{};
    const Adapters& a = found == adapters.end() ? none : found->second;
    auto heads = [&](const AdaptedLinear& proj, int64_t n, bool rotate) {
      Value* y = op.Transpose(op.Reshape(proj.forward(op, x), {0, 0, n, o_.head_dim}), {.perm = {0, 2, 1, 3}});
      return rotate && ctx.rope.cos ? apply_rope(op, y, ctx.rope) : y;
    };
    Value* q = heads({q_proj, a.q}, o_.num_attention_heads, true);
    Value* k = heads({k_proj, a.k}, o_.num_key_value_heads, true);
    Value* v = heads({v_proj, a.v}, o_.num_key_value_heads, false);
    // ZambaAttention.scaling: (head_dim / 2)^-0.5
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(o_.head_dim) / 2.0));
    AttentionOutputs r = op.Attention(q, k, v, ctx.mask, past_key, past_value, {.scale = scale});
    op.builder().producer(r.y).tags = {.num_heads = o_.num_attention_heads, .kv_num_heads = o_.num_key_value_heads,
                                       .head_size = o_.head_dim};
    Value* y = op.Reshape(op.Transpose(r.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
    return {o_proj->forward(op, y), r.present_key, r.present_value};
  }

  Linear *q_proj, *k_proj, *v_proj, *o_proj;
  struct Adapters {
    const LowRankPath *q = nullptr, *k = nullptr, *v = nullptr;
  };
  std::map<int64_t, Adapters> adapters;  // by application

 private:
  ZambaSharedOptions o_;
};

// feed_forward: down_proj(act(gate) * up), gate and up from gate_proj / up_proj (ZambaMLP) or the
// halves of gate_up_proj plus the application's adapter (Zamba2MLP).
class ZambaSharedBlock::FeedForward : public Module {
 public:
  explicit FeedForward(const ZambaSharedOptions& o) : o_(o) {
    const int64_t h = o.hidden_size, n = o.intermediate_size;
    if (o.fused_gate_up) {
      gate_up_proj = child<Linear>("gate_up_proj", LinearOptions{h, 2 * n, o.mlp_bias, o.dtype});
      const LowRankOptions lr{.in_features = h, .rank = o.adapter_rank, .out_features = 2 * n, .dtype = o.dtype};
      for (int64_t a : o.adapted_applications)
        adapters[a] = child<LowRankPath>("gate_up_proj_adapter_list." + std::to_string(a), lr);
    } else {
      gate_proj = child<Linear>("gate_proj", LinearOptions{h, n, o.mlp_bias, o.dtype});
      up_proj = child<Linear>("up_proj", LinearOptions{h, n, o.mlp_bias, o.dtype});
    }
    down_proj = child<Linear>("down_proj", LinearOptions{n, h, o.mlp_bias, o.dtype});
  }

  Value* forward(Ops& op, Value* x, int64_t application) const {
    auto s = enter(op);
    Value *gate, *up;
    if (gate_up_proj) {
      const auto found = adapters.find(application);
      const AdaptedLinear proj{gate_up_proj, found == adapters.end() ? nullptr : found->second};
      std::vector<Value*> halves = op.Split(proj.forward(op, x), {o_.intermediate_size, o_.intermediate_size}, {.axis = -1});
      gate = halves[0];
      up = halves[1];
    } else {
      gate = gate_proj->forward(op, x);
      up = up_proj->forward(op, x);
    }
    return down_proj->forward(op, op.Mul(activation(op, o_.hidden_act, gate), up));
  }

  Linear *gate_proj = nullptr, *up_proj = nullptr, *gate_up_proj = nullptr, *down_proj;
  std::map<int64_t, const LowRankPath*> adapters;  // by application

 private:
  ZambaSharedOptions o_;
};

ZambaSharedBlock::ZambaSharedBlock(const ZambaSharedOptions& o) : o_(o) {
  auto check = [](const char* field, int64_t v, int64_t max) {
    if (v < 1 || v > max) throw FieldError(std::string("field '") + field + "': expected 1 to " + std::to_string(max));
  };
  check("hidden_size", o.hidden_size, kMaxHiddenSize);
  check("num_attention_heads", o.num_attention_heads, kMaxHeads);
  check("num_key_value_heads", o.num_key_value_heads, o.num_attention_heads);
  if (o.num_attention_heads % o.num_key_value_heads != 0)
    throw FieldError("field 'num_key_value_heads': must divide num_attention_heads");
  check("attention_head_dim", o.head_dim, kMaxHeadDim);
  check("intermediate_size", o.intermediate_size, kMaxFfnSize);
  if (!o.adapted_applications.empty()) check("adapter_rank", o.adapter_rank, kMaxHiddenSize);
  input_layernorm = child<RMSNorm>("input_layernorm", NormOptions{.dim = 2 * o.hidden_size, .eps = o.rms_norm_eps,
                                                                  .dtype = o.dtype});
  self_attn = child<SelfAttn>("self_attn", o);
  pre_ff_layernorm = child<RMSNorm>("pre_ff_layernorm", NormOptions{.dim = o.hidden_size, .eps = o.rms_norm_eps,
                                                                    .dtype = o.dtype});
  feed_forward = child<FeedForward>("feed_forward", o);
}

LayerState ZambaSharedBlock::state() const { return {StateKind::self_kv, o_.num_key_value_heads, o_.head_dim}; }

AttentionResult ZambaSharedBlock::forward(Ops& op, Value* h, Value* e, const AttentionContext& ctx, Value* past_key,
                                          Value* past_value, int64_t application) const {
  auto s = enter(op);
  Value* x = input_layernorm->forward(op, op.Concat({h, e}, {.axis = -1}));
  AttentionResult a = self_attn->forward(op, x, ctx, past_key, past_value, application);
  a.hidden = feed_forward->forward(op, pre_ff_layernorm->forward(op, a.hidden), application);
  return a;
}

// input_layernorm + mamba with the residual around them (ZambaMambaDecoderLayer); on a hybrid
// layer the norm reads h + the shared block's projected output.
class ZambaCausalLM::MambaLayer : public Module {
 public:
  MambaLayer(const ZambaSpec& s, int64_t i) {
    input_layernorm = child<RMSNorm>("input_layernorm", NormOptions{.dim = s.hidden_size, .eps = s.rms_norm_eps,
                                                                    .dtype = s.dtype});
    mamba = adopt("mamba", s.make_mixer(i));
  }
  // h [batch, seq, H]; t: the shared block's contribution or null. Returns h + mamba(...) and the presents.
  MixerResult forward(Ops& op, Value* h, Value* t, const AttentionContext& ctx, std::span<Value* const> past) const {
    auto s = enter(op);
    MixerResult r = mamba->mix(op, input_layernorm->forward(op, t ? op.Add(h, t) : h), ctx, past);
    r.hidden = op.Add(h, r.hidden);
    return r;
  }
  RMSNorm* input_layernorm;
  TokenMixer* mamba;
};

// ZambaHybridLayer: the shared block (owned by the first layer that applies it), linear, mamba_decoder.
class ZambaCausalLM::HybridLayer : public Module {
 public:
  HybridLayer(const ZambaSpec& s, int64_t i, int64_t application, const ZambaSharedBlock* shared_block)
      : application(application), shared(shared_block) {
    if (!shared) shared = adopt(s.shared_name, s.make_shared_block(application % s.num_mem_blocks));
    linear = child<Linear>("linear", LinearOptions{s.hidden_size, s.hidden_size, false, s.dtype});
    mamba_decoder = child<MambaLayer>("mamba_decoder", s, i);
  }
  int64_t application;
  const ZambaSharedBlock* shared;
  Linear* linear;
  MambaLayer* mamba_decoder;
};

class ZambaCausalLM::Backbone : public Module {
 public:
  explicit Backbone(const ZambaSpec& s) {
    embed_tokens = child<Embedding>("embed_tokens", s.vocab_size, s.hidden_size, s.dtype);
    std::vector<const ZambaSharedBlock*> blocks;
    int64_t applications = 0;
    for (size_t i = 0; i < s.layer_types.size(); ++i) {
      const std::string name = "layers." + std::to_string(i);
      const auto layer = static_cast<int64_t>(i);
      if (s.layer_types[i] != "hybrid") {
        mamba_layers.push_back(child<MambaLayer>(name, s, layer));
        hybrid_layers.push_back(nullptr);
        continue;
      }
      const int64_t a = applications++;
      const bool owner = a < s.num_mem_blocks || !s.share_blocks;
      hybrid_layers.push_back(child<HybridLayer>(name, s, layer, a, owner ? nullptr : blocks[a % s.num_mem_blocks]));
      if (a < s.num_mem_blocks) blocks.push_back(hybrid_layers.back()->shared);
      mamba_layers.push_back(nullptr);
    }
    final_layernorm = child<RMSNorm>("final_layernorm", NormOptions{.dim = s.hidden_size, .eps = s.rms_norm_eps,
                                                                    .dtype = s.dtype});
  }
  Embedding* embed_tokens;
  std::vector<MambaLayer*> mamba_layers;    // per layer; null on a hybrid layer
  std::vector<HybridLayer*> hybrid_layers;  // per layer; null on a Mamba layer
  RMSNorm* final_layernorm;
};

ZambaCausalLM::ZambaCausalLM(const ZambaSpec& s) : s_(s) {
  if (s.vocab_size < 1 || s.vocab_size > kMaxVocabSize)
    throw FieldError("field 'vocab_size': expected 1 to " + std::to_string(kMaxVocabSize));
  if (s.hidden_size < 1 || s.hidden_size > kMaxHiddenSize)
    throw FieldError("field 'hidden_size': expected 1 to " + std::to_string(kMaxHiddenSize));
  if (s.num_mem_blocks < 1 || s.num_mem_blocks > kMaxLayers)
    throw FieldError("field 'num_mem_blocks': expected 1 to " + std::to_string(kMaxLayers));
  model_ = child<Backbone>("model", s);
  lm_head_ = child<LMHead>("lm_head", LMHeadOptions{s.hidden_size, s.vocab_size, false, s.dtype},
                           s.tie_word_embeddings ? model_->embed_tokens : nullptr);
}

std::vector<LayerStates> ZambaCausalLM::layer_states() const {
  std::vector<LayerStates> states;
  for (size_t i = 0; i < s_.layer_types.size(); ++i) {
    if (const HybridLayer* l = model_->hybrid_layers[i]) {
      LayerStates both = {l->shared->state()};
      for (const LayerState& m : l->mamba_decoder->mamba->states()) both.push_back(m);
      states.push_back(std::move(both));
    } else {
      states.push_back(model_->mamba_layers[i]->mamba->states());
    }
  }
  return states;
}

CausalLMOutputs ZambaCausalLM::forward(Ops& op, const CausalLMInputs& in) const {
  CausalLMOutputs out;
  Value* tokens = in.inputs_embeds ? in.inputs_embeds : in.input_ids;
  Value* h;
  {
    auto s = op.builder().scope("model");
    Value* e = in.inputs_embeds ? in.inputs_embeds : model_->embed_tokens->forward(op, in.input_ids);
    AttentionContext ctx{nullptr};
    if (std::find(s_.layer_types.begin(), s_.layer_types.end(), "hybrid") != s_.layer_types.end())
      ctx.mask = causal_mask(op, in.attention_mask, tokens, s_.dtype, 0, in.attention_overlay);
    ctx.token_mask = step_token_mask(op, in.attention_mask, tokens, s_.dtype);  // 0 at (left) padding
    if (s_.rope) ctx.rope = rope_tables(op, *s_.rope, in.position_ids, s_.dtype);
    h = e;
    for (size_t i = 0; i < s_.layer_types.size(); ++i) {
      std::span<Value* const> past = in.past.at(i);
      const HybridLayer* l = model_->hybrid_layers[i];
      if (!l) {
        MixerResult r = model_->mamba_layers[i]->forward(op, h, nullptr, ctx, past);
        h = r.hidden;
        out.present.push_back(std::move(r.present));
        continue;
      }
      auto ls = op.builder().scope("layers." + std::to_string(i));
      AttentionResult t = l->shared->forward(op, h, e, ctx, past[0], past[1], l->application);
      Value* projected = l->linear->forward(op, t.hidden);
      MixerResult r = l->mamba_decoder->forward(op, h, projected, ctx, past.subspan(2));
      h = r.hidden;
      std::vector<Value*> present = {t.present_key, t.present_value};
      present.insert(present.end(), r.present.begin(), r.present.end());
      out.present.push_back(std::move(present));
    }
    h = model_->final_layernorm->forward(op, h);
  }
  out.logits = lm_head_->forward(op, h);
  return out;
}

std::vector<std::string> zamba_layer_types(const HfConfig& c, std::vector<std::string> fallback) {
  const char* field = c.has("layers_block_type") ? "layers_block_type" : "layer_types";
  if (!c.has(field)) return fallback;
  const nlohmann::json& list = c.json()[field];
  if (!list.is_array() || list.empty() || list.size() > static_cast<size_t>(kMaxLayers))
    c.fail(field, "expected a list of 1 to " + std::to_string(kMaxLayers) + " layer types");
  std::vector<std::string> types;
  for (const nlohmann::json& t : list) {
    std::string type = t.is_string() ? t.get<std::string>() : "";
    if (type == "mamba") type = "linear_attention";  // remap_legacy_layer_types
    if (type != "linear_attention" && type != "hybrid")
      c.fail(field, "unsupported layer type '" + type + "' (linear_attention, hybrid)");
    types.push_back(type);
  }
  return types;
}

std::unique_ptr<Architecture> create_zamba(const HfConfig& c, DataType dtype) {
  const int64_t hidden = c.get_int("hidden_size");
  if (hidden < 1 || hidden > kMaxHiddenSize) c.fail("hidden_size", "expected 1 to " + std::to_string(kMaxHiddenSize));
  // ZambaConfig.__post_init__'s default layers_block_type
  const int64_t layers = c.get_int("num_hidden_layers");
  const int64_t period = c.int_or("attn_layer_period", 6), offset = c.int_or("attn_layer_offset", 4);
  if (layers < 3 || layers > kMaxLayers) c.fail("num_hidden_layers", "expected 3 to " + std::to_string(kMaxLayers));
  if (period < 1 || period > kMaxLayers) c.fail("attn_layer_period", "expected 1 to " + std::to_string(kMaxLayers));
  std::vector<std::string> fallback = {"linear_attention", "linear_attention", "hybrid"};
  for (int64_t i = 0; i < layers - 3; ++i) fallback.push_back(i % period == offset ? "hybrid" : "linear_attention");
  ZambaSpec s{.vocab_size = c.get_int("vocab_size"), .hidden_size = hidden,
              .layer_types = zamba_layer_types(c, std::move(fallback)),
              .rms_norm_eps = static_cast<float>(c.float_or("rms_norm_eps", 1e-5)),
              .tie_word_embeddings = c.bool_or("tie_word_embeddings", true), .shared_name = "shared_transf",
              .dtype = dtype};
  s.share_blocks = s.tie_word_embeddings;

  const int64_t expand = c.int_or("mamba_expand", 2);
  if (expand < 1 || expand > kMaxSmallSize) c.fail("mamba_expand", "expected 1 to " + std::to_string(kMaxSmallSize));
  const nlohmann::json* rank = c.json().contains("mamba_dt_rank") ? &c.json()["mamba_dt_rank"] : nullptr;
  const bool auto_rank = !rank || rank->is_null() || (rank->is_string() && rank->get<std::string>() == "auto");
  const MultiHeadMambaOptions m{.hidden_size = hidden, .intermediate_size = expand * hidden,  // both bounded
                                .num_heads = c.int_or("n_mamba_heads", 2), .state_size = c.int_or("mamba_d_state", 16),
                                .conv_kernel = c.int_or("mamba_d_conv", 4),
                                .time_step_rank = auto_rank ? (hidden + 15) / 16 : c.get_int("mamba_dt_rank"),
                                .use_bias = c.bool_or("mamba_proj_bias", false),
                                .use_conv_bias = c.bool_or("mamba_conv_bias", true),
                                .hidden_act = c.string_or("hidden_mamba_act", "silu"), .dtype = dtype};
  s.make_mixer = [m](int64_t) { return std::make_unique<MultiHeadMambaMixer>(m); };

  const int64_t heads = c.get_int("num_attention_heads");
  if (heads < 1 || heads > 2 * hidden) c.fail("num_attention_heads", "expected 1 to 2 * hidden_size");
  if (c.opt_int("attention_hidden_size").value_or(2 * hidden) != 2 * hidden)
    c.fail("attention_hidden_size", "expected 2 * hidden_size (the shared block reads concat(hidden, embeddings))");
  const ZambaSharedOptions shared{.hidden_size = hidden, .num_attention_heads = heads,
                                  .num_key_value_heads = c.int_or("num_key_value_heads", 16),
                                  .head_dim = c.opt_int("attention_head_dim").value_or(2 * hidden / heads),
                                  .intermediate_size = c.int_or("intermediate_size", 14848),
                                  .hidden_act = c.string_or("hidden_act", "gelu"), .rms_norm_eps = s.rms_norm_eps,
                                  .dtype = dtype};
  s.make_shared_block = [shared](int64_t) { return std::make_unique<ZambaSharedBlock>(shared); };
  return std::make_unique<ZambaCausalLM>(s);
}

}  // namespace mobius
