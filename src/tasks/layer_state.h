// What state a layer carries from one generation step to the next. A task derives its graphs'
// cache inputs and outputs (names, shapes) from the list of its layers' states, instead of one
// cache layout for every layer (docs/design.md "Tasks and packages").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace mobius {

enum class StateKind {
  self_kv,     // the keys and values of the layer's causal self-attention, growing by the new tokens
  sliding_kv,  // ... of a sliding-window causal self-attention: a query sees the last `window`
               // positions (itself included); the cache still holds every position (the mask applies
               // the window), so its inputs and outputs are those of self_kv
  cross_kv,    // the keys and values of the encoder's output for cross-attention, computed once
};

struct LayerState {
  StateKind kind;
  int64_t num_heads;  // of the keys and values
  int64_t head_dim;   // of the keys
  int64_t value_head_dim = 0;  // of the values, where it differs (DeepSeek MLA); 0 = head_dim
  int64_t window = 0;          // sliding_kv: the positions a query sees (transformers' sliding_window)
};

// True for the states of a causal self-attention (self_kv, sliding_kv): a growing cache.
inline bool is_self_attention_cache(const LayerState& s) {
  return s.kind == StateKind::self_kv || s.kind == StateKind::sliding_kv;
}

// One layer's states (empty: the layer carries none).
using LayerStates = std::vector<LayerState>;

// The states of an encoder-decoder's decoder (seq2seq, speech-to-text): `layers` layers, each with a
// self-attention cache then a cross-attention cache, both of `heads` heads of `head_dim`.
inline std::vector<LayerStates> self_and_cross_states(int64_t layers, int64_t heads, int64_t head_dim) {
  const LayerStates one = {{StateKind::self_kv, heads, head_dim}, {StateKind::cross_kv, heads, head_dim}};
  return std::vector<LayerStates>(static_cast<size_t>(layers), one);
}

// The key and value tensors of one state.
struct KVPair {
  Value* key = nullptr;
  Value* value = nullptr;
};

}  // namespace mobius
