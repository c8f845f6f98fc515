// GPT-Neo (transformers/models/gpt_neo/modeling_gpt_neo.py): the GPT-2 layout with separate
// attn.attention.{q,k,v}_proj (no bias) and out_proj (bias), attention scores NOT scaled by
// 1/sqrt(head_dim), and per-layer "global" (causal) or "local" attention (causal within the
// last window_size keys) from attention_types, e.g. [[["global", "local"], 12]].
#include "archs/archs.h"
#include "archs/gpt2.h"

namespace mobius {
namespace {

// GPTNeoConfig.expand_attention_types_params: each [types, n] repeats `types` n times.
std::vector<std::string> attention_layers(const HfConfig& c, int64_t num_layers) {
  const nlohmann::json& types = c.has("attention_types")
                                    ? c.json()["attention_types"]
                                    : nlohmann::json::parse(R"([[["global", "local"], 12]])");
  std::vector<std::string> out;
  auto bad = [&] { c.fail("attention_types", "expected a list of [[\"global\" | \"local\", ...], count]"); };
  if (!types.is_array()) bad();
  for (const auto& item : types) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer())
      bad();
    for (const auto& t : item[0])
      if (!t.is_string() || (t != "global" && t != "local")) bad();
    // the expansion's length first: a count far past num_layers must not be expanded
    const int64_t count = item[1].get<int64_t>(), pattern = static_cast<int64_t>(item[0].size());
    if (count <= 0 || pattern == 0) continue;  // [types] * n: nothing for n <= 0
    if (count > (num_layers - static_cast<int64_t>(out.size())) / pattern)
      c.fail("attention_types", "expands to more layers than num_layers (" + std::to_string(num_layers) + ")");
    for (int64_t r = 0; r < count; ++r)
      for (const auto& t : item[0]) out.push_back(t == "local" ? "sliding_attention" : "full_attention");
  }
  if (static_cast<int64_t>(out.size()) != num_layers)
    c.fail("attention_types", "expands to " + std::to_string(out.size()) + " layers, num_layers is " +
                                  std::to_string(num_layers));
  return out;
}

}  // namespace

std::unique_ptr<Architecture> create_gpt_neo(const HfConfig& c, DataType dtype) {
  GptSpec g = gpt2_layout_spec(c, dtype,
                                   {"hidden_size", "num_layers", "num_heads", "max_position_embeddings",
                                    "intermediate_size", "gelu_new"});
  DecoderSpec& s = g.decoder;
  AttentionOptions& a = s.attention;
  a.qkv_bias = false;
  a.scale = 1.0f;
  a.names.o_proj = "out_proj";
  s.names.self_attn = "attn.attention";
  s.layer_types = attention_layers(c, s.num_hidden_layers);
  s.sliding_window = c.int_or("window_size", 256);
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
