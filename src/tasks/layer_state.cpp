#include "tasks/layer_state.h"

#include "util/error.h"

namespace mobius {

std::vector<StateTensor> state_tensors(const LayerState& s) {
  if (s.kind == StateKind::recurrent || s.kind == StateKind::attention_side) return s.tensors;
  MOBIUS_ASSERT(is_self_attention_cache(s), "state_tensors: a self-attention cache, a recurrent or side state");
  const int64_t value_dim = s.value_head_dim ? s.value_head_dim : s.head_dim;
  auto kv = [&](const char* name, int64_t dim) {
    return StateTensor{.name = name, .shape = {"batch_size", s.num_heads, "past_sequence_length", dim},
                       .update = StateUpdate::append, .axis = 2};
  };
  return {kv("key", s.head_dim), kv("value", value_dim)};
}

}  // namespace mobius
