// Kolibri-1 (transformers/models/kolibri1/{modular,configuration}_kolibri1.py, Kolibri1Config,
// 5.23): GLM-4's sandwich layer (Glm4DecoderLayer: input_layernorm, post_self_attn_layernorm on
// the attention output, post_attention_layernorm, post_mlp_layernorm on the MoE output) with
//   attention: Exaone4Attention (per-head q_norm / k_norm before RoPE, no bias). layer_types default:
//     every 5th layer full, the others sliding (window sliding_window, 513); only the sliding layers
//     apply RoPE (the full ones are NoPE). sliding_window null (Exaone4Attention's RoPE everywhere)
//     is refused: Kolibri1Model.forward always builds the sliding mask, which then raises
//   mlp: DeepseekV3MoE on every layer: Kolibri1TopKRouter (mlp.gate) picks the top
//     num_experts_per_tok of float32 logits + e_score_correction_bias and weights each by the
//     sigmoid of its logit, divided by their sum (no epsilon) with norm_topk_prob (default false);
//     Qwen3-MoE experts of moe_intermediate_size (num_experts, alias num_local_experts) plus
//     shared_experts, a gated MLP of shared_expert_intermediate_size (512).
// Checkpoint names as save_pretrained writes them (conversion_mapping.py kolibri1, as the released
// checkpoint names them): model.layers.N.moe.router.expert_bias for mlp.gate.e_score_correction_bias
// (outside the MoE block: the router's parameter reads it by source_key), post_attn_norm and
// post_ffn_norm for post_self_attn_layernorm and post_mlp_layernorm.
#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/moe.h"

namespace mobius {

std::unique_ptr<Architecture> create_kolibri1(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype, {}, "moe_intermediate_size");
  s.attention.qk_norm = QKNorm{};  // Kolibri1RMSNorm(head_dim) for q and k
  s.attention.qkv_bias = s.attention.o_bias = false;
  s.mlp.bias = false;  // Kolibri1MLP = Qwen3MoeMLP
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attn_norm";
  s.names.mlp_output_norm = "post_ffn_norm";
  const int64_t n = s.num_hidden_layers;
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < n; ++i) fallback.push_back((i + 1) % 5 == 0 ? "full_attention" : "sliding_attention");
  s.layer_types = read_layer_types(c, n, fallback);
  // Kolibri1Model builds the sliding-window mask in every forward, which fails without a window
  if (c.json().contains("sliding_window") && !c.has("sliding_window"))
    c.fail("sliding_window", "must be set: transformers' Kolibri1Model cannot run without it (null)");
  s.sliding_window = c.int_or("sliding_window", 513);
  if (s.sliding_window < 1) c.fail("sliding_window", "must be positive");
  for (const auto& t : s.layer_types) s.layer_uses_rope.push_back(t == "sliding_attention");
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "moe_intermediate_size");
  m.router.kind = RouterKind::sigmoid_logit_correction;
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", false);
  m.router.norm_topk_eps = 0.0;
  set_shared_expert(c, m, s.mlp, 512);
  m.shared_expert_name = "shared_experts";
  s.make_feed_forward = [moe = sparse_moe(m, s.mlp)](int64_t layer) {
    std::unique_ptr<FeedForward> block = moe(layer);
    static_cast<SparseMoE*>(block.get())->router->e_score_correction_bias->source_key =
        "model.layers." + std::to_string(layer) + ".moe.router.expert_bias";
    return block;
  };
  return make_decoder(s);
}

}  // namespace mobius
