// GPT-OSS (transformers/models/gpt_oss/modeling_gpt_oss.py, 5.23): a Llama-like decoder with
//   attention  q/k/v/o bias (attention_bias, default true), a learned per-head sink logit in the
//              softmax (blocks/attention_sinks.h), sliding / full layers via layer_types
//   mlp        router (weight + bias): top-k logits, softmax over the k; experts stored stacked
//              [E, in, out] with biases, gate/up interleaved, clamped SwiGLU (swiglu_limit,
//              swiglu_alpha) with (up + 1) (blocks/moe.h)
//   rope       without rope_parameters / rope_scaling, GptOssConfig.__post_init__'s yarn dict
//              (configuration_gpt_oss.py; rope_theta: default_theta 150000, registry/config_defaults.inc)
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_gpt_oss(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype, {.rope_parameters = R"({
      "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": false,
      "original_max_position_embeddings": 4096})"});
  s.attention.qkv_bias = s.attention.o_bias = c.bool_or("attention_bias", true);
  s.attention.sinks = true;
  // GptOssConfig.__post_init__: layer_types alternate sliding (even layers) and full; window 128
  for (size_t i = 0; i < s.layer_types.size(); i += 2) s.layer_types[i] = "sliding_attention";
  read_layer_types(c, s, 128);
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.kind = RouterKind::topk_softmax;
  m.router.bias = true;
  m.router_name = "router";
  m.layout = ExpertLayout::stacked_interleaved;
  m.swiglu_limit = static_cast<float>(c.float_or("swiglu_limit", 7.0));
  m.swiglu_alpha = static_cast<float>(c.float_or("swiglu_alpha", 1.702));
  if (m.swiglu_limit <= 0) c.fail("swiglu_limit", "must be positive");
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
