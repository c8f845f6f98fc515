// The Qwen3.5 text decoder (transformers/models/qwen3_5/modeling_qwen3_5.py Qwen3_5ForCausalLM,
// model_type "qwen3_5_text"; configuration_qwen3_5.py Qwen3_5TextConfig): Qwen3-Next's decoder
// (archs/qwen3_next.h) with Qwen3_5MLP (gate_proj / up_proj / down_proj of intermediate_size) on
// every layer and the gated DeltaNet's projections separate (in_proj_qkv, in_proj_z, in_proj_b,
// in_proj_a; blocks/gated_delta_net.h GatedDeltaNetProjections::separate).
// Qwen3_5TextRotaryEmbedding's interleaved M-RoPE (rope_parameters mrope_section) gives each of its
// three position grids the text position here (position_ids [batch, seq] expanded to 3): every
// section rotates by the same angle, which is the default RoPE on partial_rotary_factor (default
// 0.25) of head_dim.
// States as Qwen3-Next's (archs/qwen3_next.cpp): past_key_values.{i}.key|value on the attention
// layers, past_key_values.{i}.conv_state and past_key_values.{i}.recurrent_state on the
// linear-attention ones.
// The Qwen3.5-MoE text decoder (qwen3_5_moe/modeling_qwen3_5_moe.py Qwen3_5MoeForCausalLM, model_type
// "qwen3_5_moe_text"; configuration_qwen3_5_moe.py Qwen3_5MoeTextConfig, which has no dense MLP):
// the same layers with Qwen3_5MoeSparseMoeBlock on every layer (archs/qwen3_next.h qwen3_next_moe;
// Qwen3_5MoeTopKRouter always renormalizes the top-k weights).
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "archs/qwen3_next.h"

namespace mobius {

std::unique_ptr<Architecture> create_qwen3_5_text(const HfConfig& c, DataType dtype) {
  return make_decoder(qwen3_next_spec(c, dtype, GatedDeltaNetProjections::separate));
}

std::unique_ptr<Architecture> create_qwen3_5_moe_text(const HfConfig& c, DataType dtype) {
  DecoderSpec s = qwen3_next_spec(c, dtype, GatedDeltaNetProjections::separate, "moe_intermediate_size");
  MoEOptions m = qwen3_next_moe(c, s);
  m.router.norm_topk_prob = true;
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return make_decoder(s);
}

}  // namespace mobius
