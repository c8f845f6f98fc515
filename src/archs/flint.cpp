// Flint (transformers/models/flint/{modular,configuration}_flint.py, FlintConfig, 5.23): the
// Qwen3-MoE decoder layer with
//   attention: FlintAttention = Qwen3MoeAttention (q/k/v/o bias per attention_bias, per-head q_norm /
//     k_norm RMSNorms) with a learned sink logit per head (sinks, as GPT-OSS), RoPE on the
//     "sliding_attention" layers only (window sliding_window); layer_types default: full on layers
//     0, 1, every i % 4 == 1 and the last, sliding elsewhere
//   mlp: a gated MLP of intermediate_size (no bias) on mlp_only_layers (default [0, 1]) and where
//     (i + 1) % decoder_sparse_step != 0; elsewhere FlintSparseMoeBlock: FlintTopKRouter takes the
//     top num_experts_per_tok of sigmoid(float32 logits), renormalized (no epsilon) with
//     norm_topk_prob, over Qwen3-MoE experts of moe_intermediate_size, plus shared_expert, a gated MLP
//     of shared_expert_intermediate_size without a gate of its own.
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_flint(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // FlintMLP = Qwen3MoeMLP
  s.attention.qk_norm = QKNorm{};  // FlintRMSNorm(head_dim) for q and k
  s.attention.sinks = true;
  s.attention.names.sinks = "softmax_offset";  // as save_pretrained writes FlintAttention.sinks
  const int64_t n = s.num_hidden_layers;
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < n; ++i)
    fallback.push_back(i < 2 || i % 4 == 1 || i == n - 1 ? "full_attention" : "sliding_attention");
  s.layer_types = read_layer_types(c, n, fallback);
  for (const auto& t : s.layer_types) {
    s.layer_uses_rope.push_back(t == "sliding_attention");  // FlintAttention: RoPE on sliding layers only
    if (t == "sliding_attention") {
      s.sliding_window = c.int_or("sliding_window", 513);
      if (s.sliding_window < 1) c.fail("sliding_window", "must be positive");
    }
  }
  std::vector<bool> sparse = read_sparse_layers(c, n);
  if (!c.has("mlp_only_layers"))  // FlintConfig.__post_init__: [0, 1]
    for (int64_t i = 0; i < std::min<int64_t>(n, 2); ++i) sparse[static_cast<size_t>(i)] = false;
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "num_experts", "moe_intermediate_size");
  set_one_group_sigmoid_router(c, m, 1.0);  // no correction bias: the top-k of the sigmoid scores
  m.router.score_correction = false;
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  m.router.norm_topk_eps = 0.0;
  set_shared_expert(c, m, s.mlp, 1024);
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
