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
  self_kv,   // the keys and values of the layer's causal self-attention, growing by the new tokens
  cross_kv,  // the keys and values of the encoder's output for cross-attention, computed once
};

struct LayerState {
  StateKind kind;
  int64_t num_heads;  // of the keys and values
  int64_t head_dim;   // of the keys
  int64_t value_head_dim = 0;  // of the values, where it differs (DeepSeek MLA); 0 = head_dim
};

// One layer's states (empty: the layer carries none).
using LayerStates = std::vector<LayerState>;

// The key and value tensors of one state.
struct KVPair {
  Value* key = nullptr;
  Value* value = nullptr;
};

}  // namespace mobius
