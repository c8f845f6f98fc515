#include "blocks/decoder.h"

#include "blocks/mamba.h"
#include "blocks/spec_check.h"

#include <algorithm>
#include <map>

#include "util/error.h"

namespace mobius {

NormOptions DecoderSpec::norm() const {
  return {.dim = hidden_size, .eps = norm_eps, .dtype = dtype,
          .weight_offset_one = norm_weight_offset_one, .bias = norm_bias, .kind = norm_kind,
          .elementwise_affine = norm_elementwise_affine};
}

const RopeConfig& DecoderSpec::rope_for(const std::string& layer_type) const {
  auto it = layer_type_rope.find(layer_type);
  return it == layer_type_rope.end() ? rope : it->second;
}

LayerLayout DecoderSpec::layout(int64_t layer) const {
  const auto i = static_cast<size_t>(layer);
  LayerLayout l{topology, names};
  if (i < layer_types.size())
    if (auto it = layer_type_layout.find(layer_types[i]); it != layer_type_layout.end()) l = it->second;
  if (i < layer_scales.size()) l.scales = layer_scales[i];
  return l;
}

namespace {

// The attention options of layer i: a "sliding_attention" layer has the spec's window (none when
// it is 0: Cohere2's sliding_window null).
AttentionOptions attention_of_layer(const DecoderSpec& s, int64_t i) {
  AttentionOptions a = s.attention;
  const auto layer = static_cast<size_t>(i);
  if (layer < s.layer_types.size() && s.layer_types[layer] == "sliding_attention")
    a.sliding_window = s.sliding_window;
  return a;
}

}  // namespace

AttentionFactory latent_attention(const MLAOptions& o) {
  return [o](int64_t) { return std::make_unique<MultiHeadLatentAttention>(o); };
}

AttentionFactory sparse_latent_attention(const MLAOptions& m, const IndexerOptions& i, std::vector<bool> shared) {
  return [m, i, shared = std::move(shared)](int64_t layer) {
    const bool reuse = !shared.empty() && shared.at(static_cast<size_t>(layer));
    return std::make_unique<SparseLatentAttention>(m, reuse ? std::nullopt : std::optional<IndexerOptions>(i));
  };
}

AttentionFactory block_sparse_attention(const AttentionOptions& a, const BlockIndexerOptions& i, std::vector<bool> sparse) {
  return [a, i, sparse = std::move(sparse)](int64_t layer) -> std::unique_ptr<SelfAttention> {
    if (sparse.at(static_cast<size_t>(layer))) return std::make_unique<BlockSparseAttention>(a, i);
    return std::make_unique<Attention>(a);
  };
}

AttentionFactory mixture_of_attention_heads(const MoAOptions& o) {
  return [o](int64_t) { return std::make_unique<MixtureOfAttentionHeads>(o); };
}

FeedForwardFactory sparse_moe(const MoEOptions& m, const MLPOptions& dense, std::vector<bool> sparse) {
  check_moe(m, dense, std::count(sparse.begin(), sparse.end(), false) > 0);
  return [m, dense, sparse = std::move(sparse)](int64_t layer) -> std::unique_ptr<FeedForward> {
    if (sparse.empty() || sparse.at(static_cast<size_t>(layer))) return std::make_unique<SparseMoE>(m);
    return make_mlp(dense);
  };
}

DecoderLayer::DecoderLayer(const DecoderSpec& s, int64_t layer_index)
    : residual_multiplier_(s.residual_multiplier) {
  const LayerLayout layout = s.layout(layer_index);
  const DecoderNames& n = layout.names;
  topology_ = layout.topology;
  scales_ = layout.scales;
  MOBIUS_ASSERT(topology_ != LayerTopology::norm_after_residual || scales_.unit(),
                "residual weights are not applied on the norm_after_residual topology");
  NormOptions options = s.norm();
  if (s.layer_norm_eps) options.eps = *s.layer_norm_eps;
  auto norm = [&](const std::string& name) -> Norm* {  // none for an empty name
    if (name.empty()) return nullptr;
    std::unique_ptr<Norm> own = s.make_layer_norm ? s.make_layer_norm(layer_index, name) : nullptr;
    return adopt(name, own ? std::move(own) : make_norm(options));
  };
  const auto i = static_cast<size_t>(layer_index);
  if (s.layer_input_norm.empty() || s.layer_input_norm.at(i)) input_layernorm = norm(n.input_layernorm);
  LayerMixer state_mixer = s.make_mixer ? s.make_mixer(layer_index) : LayerMixer{};
  if (state_mixer.mixer)
    mixer = adopt(state_mixer.name, std::move(state_mixer.mixer));
  else
    mixer = s.make_attention ? adopt(n.self_attn, s.make_attention(layer_index))
                             : child<Attention>(n.self_attn, attention_of_layer(s, layer_index));
  if (topology_ != LayerTopology::parallel_shared_norm) post_attention_layernorm = norm(n.post_attention_layernorm);
  if (topology_ == LayerTopology::sandwich) {
    attn_output_norm = norm(n.attn_output_norm);
    mlp_output_norm = norm(n.mlp_output_norm);
  }
  MOBIUS_ASSERT(n.input_residual.empty() == n.post_attention_residual.empty() &&
                    (n.input_residual.empty() || topology_ == LayerTopology::sequential),
                "residual weights come in pairs, on the sequential topology");
  if (!n.input_residual.empty()) {
    input_residual = param(n.input_residual, {s.hidden_size}, s.dtype);
    post_attention_residual = param(n.post_attention_residual, {s.hidden_size}, s.dtype);
  }
  mlp = adopt(n.mlp, s.make_feed_forward ? s.make_feed_forward(layer_index) : make_mlp(s.mlp));
}

MixerResult DecoderLayer::forward(Ops& op, Value* x, const AttentionContext& ctx,
                                  std::span<Value* const> past) const {
  auto s = enter(op);
  auto scaled = [&](Value* y) { return residual_multiplier_ == 1.0f ? y : op.Mul(y, residual_multiplier_); };
  auto apply = [&](const Norm* n, Value* y) { return n ? n->forward(op, y) : y; };
  using T = LayerTopology;
  if (topology_ == T::norm_after_residual) {
    MixerResult a = mixer->mix(op, x, ctx, past);
    Value* h = apply(input_layernorm, op.Add(x, scaled(a.hidden)));
    a.hidden = apply(post_attention_layernorm, op.Add(h, scaled(mlp->forward(op, h))));
    return a;
  }
  const bool from_norm = topology_ == T::residual_from_norm;
  auto weighted = [&](const Parameter* w, Value* y) { return w ? op.Mul(w->value(op), y) : y; };
  auto times = [&](Value* y, float f) { return f == 1.0f ? y : op.Mul(y, f); };
  Value* attn_in = apply(input_layernorm, x);
  MixerResult a = mixer->mix(op, attn_in, ctx, past);
  Value* h = op.Add(times(from_norm ? attn_in : weighted(input_residual, x), scales_.attn_residual),
                    times(scaled(apply(attn_output_norm, a.hidden)), scales_.attn_output));
  // the MLP reads the layer input (parallel) or the attention block's output (sequential)
  Value* mlp_in = topology_ == T::parallel_shared_norm
                      ? attn_in
                      : apply(post_attention_layernorm, topology_ == T::parallel ? x : h);
  Value* m = mlp->forward(op, mlp_in);
  a.hidden = op.Add(times(from_norm ? mlp_in : weighted(post_attention_residual, h), scales_.mlp_residual),
                    times(scaled(apply(mlp_output_norm, m)), scales_.mlp_output));
  return a;
}

TextDecoder::TextDecoder(const DecoderSpec& s) {
  const int64_t embed_dim = s.embedding_dim ? s.embedding_dim : s.hidden_size;
  embed_tokens = child<Embedding>(s.names.embed_tokens, s.embedding_rows ? s.embedding_rows : s.vocab_size,
                                  embed_dim, s.dtype);
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    layers.push_back(child<DecoderLayer>(s.names.layers + "." + std::to_string(i), s, i));
  if (!s.names.norm.empty()) norm = adopt(s.names.norm, make_norm(s.norm()));
}

DecoderCausalLM::DecoderCausalLM(const DecoderSpec& s) : spec_(s) {
  check_spec(s);
  MOBIUS_ASSERT(s.layer_uses_rope.empty() || s.layer_uses_rope.size() == s.layer_types.size(),
                "layer_uses_rope has one entry per layer");
  MOBIUS_ASSERT(s.layer_input_norm.empty() || static_cast<int64_t>(s.layer_input_norm.size()) == s.num_hidden_layers,
                "layer_input_norm has one entry per layer");
  model = child<TextDecoder>(s.names.model, s);
  lm_head = child<LMHead>(s.names.lm_head,
                          LMHeadOptions{model->embed_tokens->embedding_dim, s.vocab_size, s.lm_head_bias,
                                        s.dtype},
                          s.tie_word_embeddings ? model->embed_tokens : nullptr);
}

std::vector<LayerStates> DecoderCausalLM::layer_states() const {
  std::vector<LayerStates> states;
  for (const DecoderLayer* layer : model->layers) states.push_back(layer->mixer->states());
  return states;
}

Value* DecoderCausalLM::embed(Ops& op, Value* input_ids) const {
  auto s = op.builder().scope(spec_.names.model);
  Value* h = model->embed_tokens->forward(op, input_ids);
  return spec_.embed_scale != 1.0f ? op.Mul(h, spec_.embed_scale) : h;
}

Value* DecoderCausalLM::stem(Ops&, Value* h, const CausalLMInputs&) const { return h; }

Value* DecoderCausalLM::attention_bias(Ops&, const CausalLMInputs&) const { return nullptr; }

Value* DecoderCausalLM::layer_output(Ops&, size_t, Value* h, const CausalLMInputs&) const { return h; }

Value* DecoderCausalLM::head_input(Ops& op, Value* h) const {
  return model->norm ? model->norm->forward(op, h) : h;
}

RopeTables DecoderCausalLM::position_tables(Ops& op, const RopeConfig& rope, Value* position_ids) const {
  return rope_tables(op, rope, position_ids, spec_.dtype);
}

CausalLMOutputs DecoderCausalLM::forward(Ops& op, const CausalLMInputs& in) const {
  CausalLMOutputs out;
  Value* h = stem(op, in.inputs_embeds ? in.inputs_embeds : embed(op, in.input_ids), in);
  Value* tokens = in.inputs_embeds ? in.inputs_embeds : in.input_ids;  // [batch, seq, ...]
  Value* bias = attention_bias(op, in);
  {
    auto s = op.builder().scope(spec_.names.model);
    if (spec_.embed_norm) h = model->norm->forward(op, h);
    Value* query_scale = nullptr;
    if (spec_.llama_4_scaling_beta != 0.0f) {
      // 1 + beta * log(1 + floor(position / original_max)) in float32, as [batch, 1, seq, 1]
      Value* pos = op.Cast(in.position_ids, {.to = DataType::FLOAT});
      Value* n = op.Floor(op.Div(pos, static_cast<double>(spec_.llama_4_original_max_position_embeddings)));
      Value* scale = op.Add(op.Mul(op.Log(op.Add(n, 1.0)), spec_.llama_4_scaling_beta), 1.0);
      if (spec_.dtype != DataType::FLOAT) scale = op.Cast(scale, {.to = spec_.dtype});
      query_scale = op.Unsqueeze(scale, {1, 3});
    }
    Value* nope_query_scale = nullptr;
    if (spec_.nope_attn_scale != 0.0f) {
      // 1 + attn_scale * log(1 + floor((t + 1) / floor_scale)) at the step's cache indices t, in
      // float32, as [1, 1, seq, 1]
      Value* total = op.Squeeze(op.Shape(in.attention_mask, {.start = 1, .end = 2}), {0});
      Value* seq = op.Squeeze(op.Shape(tokens, {.start = 1, .end = 2}), {0});
      Value* t = op.Cast(op.Range(op.Sub(total, seq), total, op.builder().scalar_i64(1)), {.to = DataType::FLOAT});
      Value* n = op.Floor(op.Div(op.Add(t, 1.0), static_cast<double>(spec_.nope_floor_scale)));
      Value* scale = op.Add(op.Mul(op.Log(op.Add(n, 1.0)), spec_.nope_attn_scale), 1.0);
      if (spec_.dtype != DataType::FLOAT) scale = op.Cast(scale, {.to = spec_.dtype});
      nope_query_scale = op.Unsqueeze(scale, {0, 1, 3});
    }
    if (spec_.nope_position_scale_exponent != 0.0f) {
      MOBIUS_ASSERT(!nope_query_scale && spec_.nope_position_scale_length > 0, "one query scale on the NoPE layers");
      // exp(exponent * log(1 + (position + 1) / length)) in float32, as [batch, 1, seq, 1]
      Value* pos = op.Cast(in.position_ids, {.to = DataType::FLOAT});
      Value* x = op.Add(op.Div(op.Add(pos, 1.0), spec_.nope_position_scale_length), 1.0);
      Value* scale = op.Exp(op.Mul(op.Log(x), static_cast<double>(spec_.nope_position_scale_exponent)));
      if (spec_.dtype != DataType::FLOAT) scale = op.Cast(scale, {.to = spec_.dtype});
      nope_query_scale = op.Unsqueeze(scale, {1, 3});
    }
    std::map<const RopeConfig*, RopeTables> ropes;  // one table per distinct RoPE config in use
    // one mask per window the layers' states report (0: none) and chunk size (0: none)
    std::map<std::pair<int64_t, int64_t>, Value*> masks;
    Value* token_mask = nullptr;      // the state mixers' (step_token_mask), built once
    Value* carry = nullptr;           // the last MixerResult::carry (AttentionContext::carry)
    // the context of an attention layer: the mask of its window and its RoPE tables
    auto attention_context = [&](size_t i, const LayerState& state) {
      const std::string& type = spec_.layer_types[i];
      const int64_t window = state.kind == StateKind::sliding_kv ? state.window : 0;
      MOBIUS_ASSERT(window == (type == "sliding_attention" ? spec_.sliding_window : 0),
                    "layer " + std::to_string(i) + "'s attention part reports the spec's sliding window");
      const int64_t chunk = type == "chunked_attention" ? spec_.attention_chunk_size : 0;
      const std::pair<int64_t, int64_t> key{window, chunk};
      if (!masks.count(key)) {
        masks[key] = causal_mask(op, in.attention_mask, tokens, spec_.dtype, window, in.attention_overlay, chunk);
        if (bias) masks[key] = op.Add(masks[key], bias);
      }
      const bool uses_rope = spec_.layer_uses_rope.empty() || spec_.layer_uses_rope[i];
      const RopeConfig* rope = &spec_.rope_for(type);
      if (uses_rope && !ropes.count(rope)) {
        RopeTables t = position_tables(op, *rope, in.position_ids);
        if (spec_.rope_negated_sin) t.sin = op.Neg(t.sin);
        ropes[rope] = t;
      }
      return AttentionContext{masks.at(key), uses_rope ? ropes.at(rope) : RopeTables{},
                              !uses_rope && nope_query_scale ? nope_query_scale : query_scale};
    };
    for (size_t i = 0; i < model->layers.size(); ++i) {
      // an attention cache gets the mask and RoPE tables, a state mixer's state (DecoderSpec::make_mixer)
      // the token mask; mixers side by side (blocks/parallel_mixers.h) both
      const LayerStates states = model->layers[i]->mixer->states();
      const auto attention = std::find_if(states.begin(), states.end(), is_self_attention_cache);
      AttentionContext ctx = attention != states.end() ? attention_context(i, *attention) : AttentionContext{nullptr};
      if (std::any_of(states.begin(), states.end(), [](const LayerState& s) { return s.kind == StateKind::recurrent; })) {
        if (!token_mask) token_mask = step_token_mask(op, in.attention_mask, tokens, spec_.dtype);
        ctx.token_mask = token_mask;
      }
      ctx.position_ids = in.position_ids;
      ctx.carry = carry;
      MixerResult r = model->layers[i]->forward(op, h, ctx, in.past.at(i));
      if (r.carry) carry = r.carry;
      h = layer_output(op, i, r.hidden, in);
      out.present.push_back(std::move(r.present));
    }
    h = head_input(op, h);
  }
  out.logits = lm_head->forward(op, h);
  if (spec_.logit_scale != 1.0f) out.logits = op.Mul(out.logits, spec_.logit_scale);
  if (const float c = spec_.final_logit_softcapping; c != 0.0f)
    out.logits = op.Mul(op.Tanh(op.Div(out.logits, c)), c);
  return out;
}

}  // namespace mobius
