// GLM-4-MoE (transformers/models/glm4_moe/modeling_glm4_moe.py, Glm4MoeConfig, 5.23): the Llama
// layer (RMSNorm, q/k/v bias per attention_bias, o_proj without) with rotary on the first
// head_dim * partial_rotary_factor channels (0.5 when config.json has none; rotate_half halves, not
// interleaved), optional per-head q_norm / k_norm (use_qk_norm), and DeepSeek-V3's layer plan
// (archs/moe_config.h): dense mlp before first_k_dense_replace (1), then the MoE with
// shared_experts (n_shared_experts 1) and the sigmoid group router (norm_topk_prob true). The
// next-token-prediction layers real checkpoints carry (model.layers.{num_hidden_layers}.*,
// num_mtp_layers) are not part of the forward and stay unread.
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_glm4_moe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype, {.partial_rotary_factor = 0.5});
  s.attention.o_bias = false;
  s.mlp.bias = false;  // DeepseekV3MLP (mlp_bias is not read)
  if (c.bool_or("use_qk_norm", false)) s.attention.qk_norm = QKNorm{};
  return make_v3_moe_decoder(c, s, true);
}

}  // namespace mobius
