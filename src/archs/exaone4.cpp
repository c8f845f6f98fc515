// EXAONE 4 and K-EXAONE (transformers/models/exaone4/modeling_exaone4.py,
// exaone_moe/modular_exaone_moe.py, 5.23).
//   exaone4  post-norm layers like OLMo 2 (post_attention_layernorm after self_attn,
//          post_feedforward_layernorm after mlp), per-head q_norm / k_norm before RoPE, no bias
//          anywhere. layer_types (default: every sliding_window_pattern-th layer full, the others
//          sliding) selects the mask; when sliding_window is set only the sliding layers apply RoPE
//          (the full-attention layers are NoPE). Exaone4Config: sliding_window 4096 and
//          sliding_window_pattern 4 when config.json has none.
//   exaone_moe  the same attention in Llama's pre-norm layer (OlmoeDecoderLayer:
//          input_layernorm, post_attention_layernorm), and DeepSeek-V3's MoE (archs/moe_config.h)
//          on the layers mlp_layer_types calls "sparse" (default: from first_k_dense_replace on):
//          num_experts experts, num_shared_experts, the sigmoid group router whose
//          e_score_correction_bias the block holds (mlp.e_score_correction_bias)
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {
namespace {

// Exaone4Attention and its layer pattern on `s`.
void exaone4_attention(const HfConfig& c, DecoderSpec& s) {
  s.attention.qk_norm = QKNorm{};
  s.attention.qkv_bias = s.attention.o_bias = false;
  s.mlp.bias = false;
  const bool sliding = !c.json().contains("sliding_window") || c.has("sliding_window");
  if (sliding && !c.has("layer_types")) {
    const int64_t pattern = c.int_or("sliding_window_pattern", 4);
    if (pattern <= 0) c.fail("sliding_window_pattern", "must be a positive integer");
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      if ((i + 1) % pattern != 0) s.layer_types[static_cast<size_t>(i)] = "sliding_attention";
  }
  read_layer_types(c, s, 4096);
  for (const auto& t : s.layer_types) {
    if (sliding) s.layer_uses_rope.push_back(t == "sliding_attention");
  }
}

}  // namespace

std::unique_ptr<Architecture> create_exaone4(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.names.input_layernorm = s.names.post_attention_layernorm = "";
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attention_layernorm";
  s.names.mlp_output_norm = "post_feedforward_layernorm";
  exaone4_attention(c, s);
  return make_decoder(s);
}

std::unique_ptr<Architecture> create_exaone_moe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  exaone4_attention(c, s);
  const int64_t first_sparse = c.int_or("first_k_dense_replace", 1);
  if (first_sparse < 0) c.fail("first_k_dense_replace", "must not be negative");
  std::vector<std::string> dense_sparse;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i) dense_sparse.push_back(i < first_sparse ? "dense" : "sparse");
  dense_sparse = read_layer_list(c, "mlp_layer_types", s.num_hidden_layers, {"dense", "sparse"}, dense_sparse);
  std::vector<bool> sparse;
  for (const auto& t : dense_sparse) sparse.push_back(t == "sparse");
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_deepseek_experts(c, s, "num_experts", "num_shared_experts");
  read_v3_router(c, m, true);
  m.score_bias_name = "e_score_correction_bias";
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
