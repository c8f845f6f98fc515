// MiniMax-M2 (transformers/models/minimax_m2/modular_minimax_m2.py, MiniMaxM2Config, 5.23): the
// Llama pre-norm layer without bias, q_norm / k_norm RMSNorms over the whole q / k projection
// (FlexOlmoAttention) before RoPE on the first head_dim * partial_rotary_factor channels (released
// configs give the legacy rotary_dim: factor rotary_dim / head_dim; rope_theta default_theta 5e6),
// every layer full attention, and Mixtral's block_sparse_moe (experts.{e}.w1 / w3 / w2, as
// save_pretrained writes them) routed by sigmoid scores + the block's e_score_correction_bias,
// top-k renormalized (the DeepSeek-V3 router with one group, no scaling).
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_minimax_m2(const HfConfig& c, DataType dtype) {
  RopeDefaults rope{.partial_rotary_factor = 1.0};
  if (c.has("rotary_dim")) {  // MiniMaxM2Config.convert_rope_params_to_dict
    const int64_t head_dim = c.get_int("head_dim");
    const int64_t rotary_dim = c.get_int("rotary_dim");
    if (rotary_dim <= 0 || rotary_dim > head_dim || rotary_dim % 2 != 0)
      c.fail("rotary_dim", "must be even and between 2 and head_dim");
    rope.partial_rotary_factor = static_cast<double>(rotary_dim) / static_cast<double>(head_dim);
  }
  DecoderSpec s = llama_spec(c, dtype, rope);
  s.attention.qkv_bias = s.attention.o_bias = s.mlp.bias = false;
  s.attention.qk_norm = QKNorm{.layout = QKNormLayout::full_width};
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  RouterOptions& r = m.router;
  r.kind = RouterKind::sigmoid_groups;  // n_group = topk_group = 1, routed_scaling_factor 1
  r.norm_topk_prob = true;
  if (r.num_experts < 2) c.fail("num_local_experts", "the sigmoid router needs at least 2 experts");
  m.score_bias_name = "e_score_correction_bias";
  m.gate_name = "w1";
  m.up_name = "w3";
  m.down_name = "w2";
  s.names.mlp = "block_sparse_moe";
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return make_decoder(s);
}

}  // namespace mobius
