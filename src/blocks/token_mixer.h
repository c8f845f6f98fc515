// The token mixer of a decoder layer: the part that mixes information across positions and carries
// a state from one generation step to the next (tasks/layer_state.h). Self-attention
// (blocks/attention.h SelfAttention: a KV cache), a Mamba mixer (blocks/mamba.h: a conv window
// and a selective-scan state), mixers side by side (blocks/parallel_mixers.h: Falcon-H1's attention
// and Mamba-2, both states) ... all take and return their own states through mix().
#pragma once

#include <span>
#include <vector>

#include "blocks/rope.h"
#include "nn/module.h"
#include "tasks/layer_state.h"

namespace mobius {

// Per-graph inputs shared by all layers (each mixer reads what it needs).
struct AttentionContext {
  // additive float mask [batch, 1 or num_attention_heads, seq, total_seq]: causal, padding and
  // any position bias (ALiBi, blocks/alibi.h)
  Value* mask;
  RopeTables rope = {};  // cos == nullptr: no RoPE (absolute-position models, Cohere2 full layers)
  Value* query_scale = nullptr;  // [batch, 1, seq, 1] multiplying q after RoPE (Ministral 3)
  // [batch, seq] in the model dtype: 1 at the step's tokens, 0 at padding (the last seq columns
  // of attention_mask), for the mixers that zero padded positions (blocks/mamba.h); null where
  // no layer reads it
  Value* token_mask = nullptr;
  // int64 [batch, seq]: the step's position_ids, for the mixers that read them (blocks/rg_lru.h:
  // the recurrence restarts at position 0; blocks/block_sparse_attention.h: the indexer's blocks)
  Value* position_ids = nullptr;
  // what the last earlier layer's mixer handed on (MixerResult::carry), for a mixer that reuses it
  // (blocks/dsa.h: GLM-MoE-DSA's "shared" layers reuse the last indexer's key selection); null
  // before any
  Value* carry = nullptr;
};

// A token mixer's output and its state after the step.
struct MixerResult {
  Value* hidden;               // [batch, seq, hidden_size]
  std::vector<Value*> present;  // one per state tensor: state_tensors of each of states(), in order
  Value* carry = nullptr;       // handed to the later layers' mixers (AttentionContext::carry); null: none
};

class TokenMixer : public Module {
 public:
  // The states the mixer carries (tasks/layer_state.h): one self-attention cache or recurrent
  // state, or several for mixers side by side (blocks/parallel_mixers.h) or an attention with a
  // side state (blocks/dsa.h); at most one self-attention cache (the decoder builds one mask and
  // RoPE table for the layer).
  virtual LayerStates states() const = 0;
  // x: [batch, seq, hidden_size]; past: one value per state tensor, state_tensors of each of
  // states() in order (their past shapes).
  virtual MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const = 0;
};

}  // namespace mobius
