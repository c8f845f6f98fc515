// The parts of Gemma 4's text decoder (archs/gemma4.cpp) that Gemma 3n's (archs/gemma3n.cpp)
// reuses: the attention with q/k/v norms and KV sharing, the owners of the shared caches, and the
// per-layer inputs. Both follow transformers' Gemma4TextAttention / Gemma3nTextAttention and
// Gemma{4,3n}TextConfig.kv_sharing_modes (transformers/models/gemma4/modeling_gemma4.py,
// transformers/models/gemma3n/modeling_gemma3n.py).
#pragma once

#include <string>
#include <vector>

#include "blocks/attention.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/spec_check.h"
#include "config/hf_config.h"
#include "tasks/text_generation.h"

namespace mobius {

// What differs between layers: the attention geometry and where the keys and values come from.
struct Gemma4LayerPlan {
  AttentionOptions attention;   // heads, kv heads, head_dim of the layer's type; sliding window
  bool k_eq_v = false;          // no v_proj: values from k_proj (attention_k_eq_v, full layers)
  int64_t kv_source;            // the layer whose cache it attends to: itself, or the layer it reuses
  int64_t intermediate_size;    // of its MLP
};

// Gemma4TextAttention / Gemma3nTextAttention: scale 1; q_norm and k_norm (RMSNorm x * weight over
// head_dim), RoPE on q and k; v_norm without weight. The layer's own q/k/v (the owner of a cache,
// `owns_cache`) or q only (a KV-shared layer: no k_proj / v_proj / k_norm / v_norm).
class Gemma4SelfAttention : public Module {
 public:
  Gemma4SelfAttention(const Gemma4LayerPlan& p, bool owns_cache);

  // The owner's cache: sliding_kv (window o.sliding_window) or self_kv.
  LayerState state() const;

  // x [batch, seq, hidden]. An owner takes its past {key, value} [batch, kv_heads, past, head_dim]
  // and returns the present (past and new); a KV-shared layer attends to `shared`, the owner's
  // present [batch, kv_heads, total, head_dim], and returns no present.
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key, Value* past_value,
                          const KVPair& shared) const;

  Linear *q_proj, *k_proj = nullptr, *v_proj = nullptr, *o_proj;
  RMSNorm *q_norm, *k_norm = nullptr, *v_norm = nullptr;

 private:
  AttentionOptions o_;
};

// Gemma{4,3n}TextConfig.kv_sharing_modes: the source layer of each layer's keys and values (itself,
// or for the last num_kv_shared_layers layers the last earlier layer of its type). types: the
// layer_types; `default_shared`: the config class's num_kv_shared_layers default. Throws
// mobius::FieldError naming num_kv_shared_layers outside 0 .. layers - 1 or when a shared layer's
// type has no earlier layer.
std::vector<int64_t> gemma4_kv_sources(const HfConfig& c, const std::vector<std::string>& types,
                                       int64_t default_shared);

// The per-layer inputs (Gemma{4,3n}TextModel get_per_layer_inputs + project_per_layer_inputs):
//   t = table(ids) * P**0.5 -> [batch, seq, L, P]
//   c = norm(projection(embeds) * hidden**-0.5) -> [batch, seq, L, P]
//   (c + t) * 2**-0.5
// ids int64 [batch, seq]; embeds [batch, seq, hidden] (the scaled token embeddings); table
// [vocab, L * P]; projection hidden -> L * P; norm over P.
Value* gemma_per_layer_inputs(Ops& op, const Embedding& table, const Linear& projection, const RMSNorm& norm,
                              Value* ids, Value* embeds, int64_t layers, int64_t dim, int64_t hidden);

// The causal LM around a Gemma 4-style text model (Gemma4TextModel, Gemma3nTextModel: `embed_tokens`
// and `layers[i]->self_attn`, a Gemma4SelfAttention), built from a Spec with `base` (the DecoderSpec)
// and `layers` (one Gemma4LayerPlan each): the sizes checked, `model` and `lm_head` (tied to
// embed_tokens by tie_word_embeddings), and each layer's state: its attention's cache where the
// layer owns one (its kv_source is itself), none on a KV-shared layer. The subclass writes forward.
template <typename Spec, typename Model>
class KvSharingCausalLM : public CausalLM {
 public:
  explicit KvSharingCausalLM(Spec s) : s_(std::move(s)) {
    check_spec(s_.base);
    for (const Gemma4LayerPlan& p : s_.layers) check_attention(p.attention);
    model_ = this->template child<Model>("model", s_);
    lm_head_ = this->template child<LMHead>(
        "lm_head", LMHeadOptions{s_.base.hidden_size, s_.base.vocab_size, false, s_.base.dtype},
        s_.base.tie_word_embeddings ? model_->embed_tokens : nullptr);
  }
  DataType dtype() const override { return s_.base.dtype; }
  int64_t vocab_size() const override { return s_.base.vocab_size; }
  std::vector<LayerStates> layer_states() const override {
    std::vector<LayerStates> states;
    for (size_t i = 0; i < s_.layers.size(); ++i)
      states.push_back(s_.layers[i].kv_source == static_cast<int64_t>(i)
                           ? LayerStates{model_->layers[i]->self_attn->state()}
                           : LayerStates{});
    return states;
  }

 protected:
  Spec s_;
  Model* model_;
  LMHead* lm_head_;
};

}  // namespace mobius
