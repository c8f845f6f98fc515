// SmolLM3 (transformers/models/smollm3/modeling_smollm3.py): Llama with NoPE layers.
// no_rope_layers[i] = 1 applies RoPE in layer i, 0 skips it (default: every
// no_rope_layer_interval-th layer skips it); layer_types (default: sliding where
// use_sliding_window and sliding_window are set and the layer has no RoPE) selects the mask.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_smollm3(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  const size_t n = static_cast<size_t>(s.num_hidden_layers);
  if (c.has("no_rope_layers")) {
    const auto& list = c.json()["no_rope_layers"];
    if (!list.is_array() || list.size() != n)
      c.fail("no_rope_layers", "expected a list of num_hidden_layers integers (1 = RoPE, 0 = none)");
    for (const auto& v : list) {
      if (!v.is_number_integer()) c.fail("no_rope_layers", "expected integers (1 = RoPE, 0 = none)");
      s.layer_uses_rope.push_back(v.get<int64_t>() != 0);
    }
  } else {
    const int64_t interval = c.int_or("no_rope_layer_interval", 4);
    if (interval <= 0) c.fail("no_rope_layer_interval", "must be positive");
    for (size_t i = 0; i < n; ++i) s.layer_uses_rope.push_back((static_cast<int64_t>(i) + 1) % interval != 0);
  }
  if (c.bool_or("use_sliding_window", false) && c.has("sliding_window"))
    for (size_t i = 0; i < n; ++i)
      if (!s.layer_uses_rope[i]) s.layer_types[i] = "sliding_attention";
  read_layer_types(c, s);
  for (const auto& t : s.layer_types)
    if (t == "sliding_attention") s.sliding_window = c.get_int("sliding_window");
  return make_decoder(s);
}

}  // namespace mobius
