// Mellum (transformers/models/mellum/{modular,configuration}_mellum.py, MellumConfig, 5.23):
// Laguna's decoder layer and per-layer-type RoPE with Qwen3-MoE's attention and MoE:
//   attention: Qwen3MoeAttention (q/k/v/o bias per attention_bias, per-head q_norm / k_norm RMSNorms
//     before RoPE), the window sliding_window on the "sliding_attention" layers (layer_types,
//     default all "full_attention")
//   RoPE: rope_parameters nested by layer type; without it the class default (full layers theta
//     500000, sliding ones 10000, the whole head)
//   mlp: per mlp_layer_types (default all "sparse"): Qwen3MoeSparseMoeBlock (softmax top
//     num_experts_per_tok, renormalized with norm_topk_prob (default true), experts of
//     moe_intermediate_size saved per expert), or a gated MLP of intermediate_size (no bias).
// The multi-token prediction layers (num_mtp_layers, mtp.* keys) are not part of the causal LM.
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_mellum(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // MellumMLP
  s.attention.qk_norm = QKNorm{};  // MellumRMSNorm(head_dim) for q and k
  const int64_t n = s.num_hidden_layers;
  s.layer_types = read_layer_types(c, n, std::vector<std::string>(static_cast<size_t>(n), "full_attention"));
  if (std::find(s.layer_types.begin(), s.layer_types.end(), "sliding_attention") != s.layer_types.end()) {
    if (c.json().contains("sliding_window") && !c.has("sliding_window"))
      c.fail("sliding_window", "is null, which a sliding_attention layer needs");
    s.sliding_window = c.int_or("sliding_window", 1024);
    if (s.sliding_window < 1) c.fail("sliding_window", "must be positive");
  }
  read_nested_layer_type_rope(c, s, {.rope_theta = 500000.0}, {.rope_theta = 10000.0});  // MellumConfig.__post_init__
  std::vector<bool> sparse;
  for (const auto& t : read_layer_list(c, "mlp_layer_types", n, {"dense", "sparse"},
                                       std::vector<std::string>(static_cast<size_t>(n), "sparse")))
    sparse.push_back(t == "sparse");
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "moe_intermediate_size");
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
