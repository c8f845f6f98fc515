// What state a layer carries from one generation step to the next: a list of named tensors of any
// shape and dtype, each with its update rule. A task derives its graphs' state inputs and outputs
// (names, shapes) from the list of its layers' states, instead of one cache layout for every layer
// (docs/design.md "The state model").
//   - a causal self-attention's keys and values (self_kv, sliding_kv): two tensors, "key"
//     [batch_size, heads, past_sequence_length, head_dim] and "value", appended along axis 2;
//   - an encoder-decoder's cross-attention keys and values (cross_kv), computed once;
//   - any other state (recurrent): the tensors the token mixer declares, e.g. a causal
//     convolution's window "conv_state" [batch_size, channels, kernel - 1] and a selective scan's
//     "recurrent_state" [batch_size, channels, d_state] (blocks/mamba.h), each replaced every step
//     (or appended along a sequence axis);
//   - an attention's side state (attention_side): tensors beside its cache, e.g. DeepSeek sparse
//     attention's "indexer_keys" [batch_size, past_sequence_length, index_head_dim] (blocks/dsa.h).
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
  recurrent,   // the tensors of LayerState::tensors (a state-space or convolutional token mixer)
  attention_side,  // the tensors of LayerState::tensors beside a self-attention's cache, of the same
                   // mixer (DeepSeek sparse attention's indexer keys, blocks/dsa.h): the layer's
                   // context is the attention's (no token mask, AttentionContext::token_mask)
};

// How a state tensor goes from its past to its present.
enum class StateUpdate {
  append,   // present = Concat(past, new, axis): the axis is past_sequence_length in the past,
            // total_sequence_length in the present (a KV cache)
  replace,  // the present replaces the past, of the same shape (a conv window, an SSM state)
};

// One tensor of a layer's state.
struct StateTensor {
  // Its part of the graph names: text-generation's past_key_values.{layer}.{name} and
  // present.{layer}.{name} (tasks/text_generation.h); unique within a layer.
  std::string name;
  Shape shape;  // of the past: "batch_size" first; an append state has "past_sequence_length" at `axis`
  DataType dtype = DataType::UNDEFINED;  // UNDEFINED: the model dtype
  StateUpdate update = StateUpdate::replace;
  int64_t axis = 2;  // StateUpdate::append: the sequence axis
};

struct LayerState {
  StateKind kind;
  int64_t num_heads = 0;       // *_kv: of the keys and values
  int64_t head_dim = 0;        // *_kv: of the keys
  int64_t value_head_dim = 0;  // *_kv: of the values, where it differs (DeepSeek MLA); 0 = head_dim
  int64_t window = 0;          // sliding_kv: the positions a query sees (transformers' sliding_window)
  std::vector<StateTensor> tensors = {};  // recurrent: the tensors, in the order the mixer takes them
};

// True for the states of a causal self-attention (self_kv, sliding_kv): a growing cache.
inline bool is_self_attention_cache(const LayerState& s) {
  return s.kind == StateKind::self_kv || s.kind == StateKind::sliding_kv;
}

// The tensors of a state, in the order its token mixer takes and returns them: "key" then "value"
// for a self-attention cache (appended along axis 2, past_sequence_length), `s.tensors` for a
// recurrent state. Not for cross_kv (its tasks name the pair themselves, tasks/text2text_generation.h).
std::vector<StateTensor> state_tensors(const LayerState& s);

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
