#include "blocks/local_attention_mask.h"

#include <string>

#include "blocks/attention.h"

namespace mobius {

Value* local_padding_mask(Ops& op, Value* attention_mask, int64_t one_sided, DataType dtype, Value* global_keys) {
  auto sc = op.builder().scope("local_mask");
  Value* seq = op.Squeeze(op.Shape(attention_mask, {.start = 1, .end = 2}), {0});
  Value* pos = op.Range(op.builder().scalar_i64(0), seq, op.builder().scalar_i64(1));
  Value* distance = op.Abs(op.Sub(op.Unsqueeze(pos, {1}), op.Unsqueeze(pos, {0})));  // [seq, seq]
  Value* band = op.LessOrEqual(distance, static_cast<double>(one_sided));
  Value* token = op.Cast(op.Unsqueeze(attention_mask, {1, 2}), {.to = DataType::BOOL});  // [batch, 1, 1, seq]
  Value* allowed = op.And(token, band);
  if (global_keys) allowed = op.Or(allowed, op.Unsqueeze(global_keys, {1, 2}));
  return additive_mask(op, allowed, dtype);
}

std::vector<int64_t> longformer_attention_windows(const HfConfig& c, int64_t layers) {
  const nlohmann::json& j = c.json();
  const auto it = j.find("attention_window");
  std::vector<int64_t> w;
  if (it == j.end() || it->is_null()) {
    w.assign(static_cast<size_t>(layers), 512);  // the class default
  } else if (it->is_array()) {
    if (static_cast<int64_t>(it->size()) != layers)
      c.fail("attention_window", "must have one window per layer (" + std::to_string(layers) + ")");
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_number_integer()) c.fail("attention_window", "must hold integers");
      w.push_back((*it)[i].get<int64_t>());
    }
  } else {
    w.assign(static_cast<size_t>(layers), c.get_int("attention_window"));
  }
  for (int64_t v : w)
    if (v <= 0 || v % 2 != 0 || v > (int64_t{1} << 30))
      c.fail("attention_window", "must be even and positive (LongformerSelfAttention), got " + std::to_string(v));
  return w;
}

}  // namespace mobius
