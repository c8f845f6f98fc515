// LFM2-MoE (transformers/models/lfm2_moe/modular_lfm2_moe.py Lfm2MoeForCausalLM;
// configuration_lfm2_moe.py): LFM2's decoder (archs/lfm2.h: short-convolution and attention
// layers) whose feed_forward is the dense SwiGLU Lfm2MoeMLP (intermediate_size as is, no
// adjustment) on the first num_dense_layers layers and Lfm2MoeSparseMoeBlock on the others:
//   gate (router weight [E, hidden]): s = sigmoid(logits); the top num_experts_per_tok of
//   s + expert_bias (use_expert_bias; else of s) pick the experts, weighted by s, divided by
//   (sum + 1e-6) with norm_topk_prob, times routed_scaling_factor (blocks/moe_router.h
//   sigmoid_groups, one group); experts.{e}.w1 (gate) / w3 (up) / w2 (down) as save_pretrained
//   writes them (the model's stacked gate_up_proj / down_proj), silu.
// Lfm2MoeConfig has no default layer pattern: layer_types ("conv" / "full_attention") is required.
// States as LFM2's; onnxruntime-genai 0.18 runs it as its "lfm2_moe" type.
#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/lfm2.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_lfm2_moe(const HfConfig& c, DataType dtype) {
  const int64_t layers = c.get_int("num_hidden_layers");
  if (layers < 1 || layers > kMaxLayers) c.fail("num_hidden_layers", "expected 1 to " + std::to_string(kMaxLayers));
  if (!c.has("layer_types")) c.fail("layer_types", "required: Lfm2MoeConfig has no default layer pattern");
  DecoderSpec s = lfm2_spec(c, dtype, read_layer_list(c, "layer_types", layers, {"full_attention", "conv"}, {}));
  s.mlp = {.hidden_size = s.hidden_size, .intermediate_size = c.get_int("intermediate_size"), .hidden_act = "silu",
           .dtype = dtype, .gate_name = "w1", .gated_up_name = "w3", .gated_down_name = "w2"};
  if (s.mlp.intermediate_size < 1 || s.mlp.intermediate_size > kMaxFfnSize)
    c.fail("intermediate_size", "expected 1 to " + std::to_string(kMaxFfnSize));

  MoEOptions m = read_moe_options(c, s, "num_experts", "moe_intermediate_size");
  if (m.intermediate_size > kMaxFfnSize) c.fail("moe_intermediate_size", "expected 1 to " + std::to_string(kMaxFfnSize));
  const bool expert_bias = c.bool_or("use_expert_bias", true);
  m.router.kind = RouterKind::sigmoid_groups;
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  m.router.norm_topk_eps = 1e-6;
  m.router.routed_scaling_factor = static_cast<float>(c.float_or("routed_scaling_factor", 1.0));
  m.router.score_correction = expert_bias;
  if (m.router.num_experts < 2) c.fail("num_experts", "expected at least 2");  // sigmoid_groups' one group
  if (expert_bias) m.score_bias_name = "expert_bias";
  m.gate_name = "w1";  // save_pretrained writes experts.{e}.w1 / w3 / w2 (conversion_mapping.py "lfm2_moe")
  m.up_name = "w3";
  m.down_name = "w2";
  const int64_t dense = c.int_or("num_dense_layers", 2);
  if (dense < 0) c.fail("num_dense_layers", "expected 0 or more");
  std::vector<bool> sparse;
  for (int64_t i = 0; i < layers; ++i) sparse.push_back(i >= dense);
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
