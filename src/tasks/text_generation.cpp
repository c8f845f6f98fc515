#include "tasks/text_generation.h"

#include "util/error.h"

namespace mobius {

Model CausalLM::build_model() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const CacheLayout c = cache_layout();
  const DataType dt = dtype();
  const int64_t v_head_dim = c.v_head_dim ? c.v_head_dim : c.head_dim;
  CausalLMInputs in;
  in.input_ids = b.input("input_ids", DataType::INT64, {"batch_size", "sequence_length"});
  in.attention_mask =
      b.input("attention_mask", DataType::INT64, {"batch_size", "total_sequence_length"});
  in.position_ids = b.input("position_ids", DataType::INT64, {"batch_size", "sequence_length"});
  for (int64_t i = 0; i < c.num_layers; ++i) {
    std::string p = "past_key_values." + std::to_string(i);
    in.past.key.push_back(
        b.input(p + ".key", dt, {"batch_size", c.num_key_value_heads, "past_sequence_length", c.head_dim}));
    in.past.value.push_back(
        b.input(p + ".value", dt, {"batch_size", c.num_key_value_heads, "past_sequence_length", v_head_dim}));
  }
  CausalLMOutputs out = forward(op, in);
  MOBIUS_ASSERT(out.present.key.size() == static_cast<size_t>(c.num_layers), "present count");
  b.output(out.logits, "logits", {"batch_size", "sequence_length", vocab_size()});
  for (int64_t i = 0; i < c.num_layers; ++i) {
    std::string p = "present." + std::to_string(i);
    b.output(out.present.key[i], p + ".key",
             {"batch_size", c.num_key_value_heads, "total_sequence_length", c.head_dim});
    b.output(out.present.value[i], p + ".value",
             {"batch_size", c.num_key_value_heads, "total_sequence_length", v_head_dim});
  }
  return model;
}

}  // namespace mobius
