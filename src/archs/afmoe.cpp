// AFMoE (transformers/models/afmoe/{modular,configuration}_afmoe.py, AfmoeConfig, 5.23): Llama
// layers with four norms (input_layernorm -> self_attn -> post_attention_layernorm, + residual;
// pre_mlp_layernorm -> mlp -> post_mlp_layernorm, + residual: the sandwich topology) and
//   attention: AfmoeAttention = LlamaAttention (q/k/v/o bias per attention_bias) with per-head
//     q_norm / k_norm RMSNorms before RoPE, RoPE on the "sliding_attention" layers only (window
//     sliding_window), and the heads' output gated by sigmoid(gate_proj(x)) (no bias) before o_proj;
//     layer_types default: sliding unless (i + 1) % global_attn_every_n_layers == 0
//   mlp: the first num_dense_layers layers a gated MLP of intermediate_size (Qwen2MoeMLP, no bias);
//     the others AfmoeSparseMoeBlock: sigmoid(router.gate(x)) + the block's expert_bias pick the top
//     num_experts_per_tok, weighted by their sigmoid scores renormalized (+ 1e-20) * route_scale
//     (the DeepSeek-V3 router with one group), experts of moe_intermediate_size (saved per expert),
//     plus shared_experts, a gated MLP of moe_intermediate_size * num_shared_experts (none when 0)
//   mup_enabled: the embeddings times sqrt(hidden_size).
#include <cmath>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_afmoe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // Qwen2MoeMLP (mlp_bias not read)
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attention_layernorm";
  s.names.post_attention_layernorm = "pre_mlp_layernorm";
  s.names.mlp_output_norm = "post_mlp_layernorm";
  s.attention.qk_norm = QKNorm{};  // AfmoeRMSNorm(head_dim) for q and k
  s.attention.output_gate = "gate_proj";
  if (c.bool_or("mup_enabled", false)) s.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(s.hidden_size)));
  const int64_t every = c.int_or("global_attn_every_n_layers", 4);
  if (every <= 0) c.fail("global_attn_every_n_layers", "must be positive");
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    fallback.push_back((i + 1) % every ? "sliding_attention" : "full_attention");
  s.layer_types = read_layer_types(c, s.num_hidden_layers, fallback);
  for (const auto& t : s.layer_types) {
    s.layer_uses_rope.push_back(t == "sliding_attention");  // AfmoeAttention: RoPE on local layers only
    if (t == "sliding_attention") s.sliding_window = c.get_int("sliding_window");
  }
  const int64_t dense = c.int_or("num_dense_layers", 1);
  if (dense < 0) c.fail("num_dense_layers", "must not be negative");
  std::vector<bool> sparse;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i) sparse.push_back(i >= dense);
  if (dense >= s.num_hidden_layers) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "num_experts", "moe_intermediate_size");
  set_one_group_sigmoid_router(c, m, c.float_or("route_scale", 1.0));
  m.router_name = "router.gate";
  m.score_bias_name = "expert_bias";
  const int64_t shared = c.int_or("num_shared_experts", 2);
  if (shared < 0) c.fail("num_shared_experts", "must not be negative");
  add_shared_experts(m, s.mlp, shared);
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
