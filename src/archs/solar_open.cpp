// Solar Open (transformers/models/solar_open/modeling_solar_open.py, SolarOpenConfig, 5.23): the
// Llama layer (RMSNorm, q/k/v bias per attention_bias, o_proj without; the whole head rotates;
// rope_theta: default_theta 1e6, registry/config_defaults.inc) with GLM-4-MoE's MoE on every layer:
// the DeepSeek-V3 sigmoid group router (n_group, topk_group, norm_topk_prob true,
// * routed_scaling_factor) and shared_experts (archs/moe_config.h read_deepseek_experts,
// read_v3_router). The config class has no intermediate_size nor first_k_dense_replace (no dense
// layer): the spec's MLP options are the experts'.
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "registry/config_defaults.h"

namespace mobius {

std::unique_ptr<Architecture> create_solar_open(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig c = with_attribute_map(config, {{"num_local_experts", "n_routed_experts"}});
  DecoderSpec s = llama_spec(c, dtype, {}, "moe_intermediate_size");
  s.attention.o_bias = false;
  s.mlp.bias = false;  // SolarOpenMLP (mlp_bias is not read)
  MoEOptions m = read_deepseek_experts(c, s);
  read_v3_router(c, m, true);
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return make_decoder(s);
}

}  // namespace mobius
