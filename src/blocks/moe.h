// Sparse mixture-of-experts feed-forward: a router (blocks/moe_router.h), num_experts gated MLP
// experts and an optional shared expert, in standard ONNX ops. x: [batch, seq, hidden] -> same.
// References: MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock, GraniteMoeMoE, DeepseekV3MoE,
// GptOssMLP, PhimoeSparseMoeBlock, JetMoeMoE (transformers/models/<type>/modeling_<type>.py, 5.23).
//
// Dense evaluation. The router returns R [tokens, E]: each token's routing weight for every expert,
// 0 for the experts it did not pick. Every expert then runs on every token, as batched MatMuls over
// the experts' weights stacked to [E, in, out]:
//   gate, up = x @ W_gate[e], x @ W_up[e]          [E, tokens, intermediate]
//   y[e] = act(gate) * up @ W_down[e]              [E, tokens, hidden]
//   out = sum_e R[:, e] * y[e]                     [tokens, hidden]
// which equals transformers' sparse dispatch (the unpicked experts are multiplied by 0).
// Cost: E / top_k times the expert FLOPs of a sparse dispatch, and an [E, tokens, intermediate]
// activation; exact and simple, right for small models and short prompts, not for serving large
// ones (that wants a gather/scatter dispatch or a fused MoE kernel).
//
// Expert weights, bound to the checkpoint keys that save_pretrained writes (relative to the block):
//   per_expert        experts.{e}.{gate,up,down}_name.weight, each [out, in] (Mixtral w1/w3/w2;
//                     Qwen2-MoE, Qwen3-MoE, OLMoE, DeepSeek, PhiMoE gate_proj/up_proj/down_proj):
//                     one initializer per expert, stacked in the graph (Unsqueeze + Concat, folded
//                     to constants by ONNX Runtime at session creation)
//   stacked           input_linear.weight [E, 2 * intermediate, hidden] (gate | up halves) and
//                     output_linear.weight [E, hidden, intermediate] (GraniteMoE, JetMoE; the
//                     names are stacked_gate_up_name, stacked_down_name: Qwen3-VL-MoE's
//                     experts.gate_up_proj, experts.down_proj)
//   stacked_interleaved  experts.gate_up_proj [E, hidden, 2 * intermediate] (gate = even, up = odd
//                     columns), experts.down_proj [E, intermediate, hidden], each with a
//                     *_bias [E, out] (GPT-OSS)
//   stacked_in_out    [E, hidden, 2 * intermediate] (gate | up halves) and [E, intermediate, hidden],
//                     stored [in, out], no bias, named stacked_gate_up_name, stacked_down_name
//                     (Llama4TextExperts: experts.gate_up_proj, experts.down_proj; AriaExperts as
//                     saved: experts.fc1.weight, experts.fc2.weight)
//   stacked_in_out_biased  stacked_in_out's with stacked_interleaved's *_bias [E, out]
//                     (OpenAIPrivacyFilterExperts: gate | up halves)
//   per_expert_ungated  experts.{e}.{up_name,down_name}.weight, each [out, in], stacked as
//                     per_expert's: y[e] = act(x @ W_up[e]) @ W_down[e], no gate (NemotronHExperts,
//                     as save_pretrained writes them)
//   stacked_rows      gate_name, up_name, down_name: three [E * intermediate, hidden] tensors, the
//                     experts' rows one after the other, gate and up each expert's [out, in] and
//                     down its [in, out] (DbrxExpertGLU's w1, v1, w2 as save_pretrained writes
//                     them): gate and up one MatMul each over all experts, [hidden, E * I]
// With latent_size (NemotronHMoE's moe_latent_size) the experts read fc1_latent_proj(x)
// [tokens, latent] instead of x, and their weighted sum goes through fc2_latent_proj back to
// hidden (both Linear, with latent_bias); "hidden" above is then the latent size.
// With identity_experts Z > 0 the router's last Z experts are zero-computation experts that return
// their input (LongcatFlashExperts, transformers/models/longcat_flash/modeling_longcat_flash.py):
// out = sum_{e < E - Z} R[:, e] * y[e] + (sum_{e >= E - Z} R[:, e]) * x; only the first E - Z
// experts have weights (per_expert: a checkpoint's gate / up keys of the identity experts, which
// LongcatFlashExperts allocates, are left unread).
// With RoutingApplied::inputs the routing weights scale the experts' inputs instead of their
// outputs (Llama4TextMoe): out = sum_e y_e(R[:, e] * x), the unpicked experts reading 0 (their
// output 0: no bias, act(0) * 0).
#pragma once

#include <string>

#include "blocks/mlp.h"
#include "blocks/moe_router.h"

namespace mobius {

enum class ExpertLayout {
  per_expert, stacked, stacked_interleaved, stacked_in_out, stacked_in_out_biased, per_expert_ungated, stacked_rows
};

enum class RoutingApplied { outputs, inputs };  // what the routing weights scale (see above)

struct MoEOptions {
  int64_t hidden_size;
  int64_t intermediate_size;  // of one expert (moe_intermediate_size)
  std::string hidden_act = "silu";
  RouterOptions router;       // hidden_size, dtype: filled from the above
  std::string router_name = "gate";  // module of the router: gate | router | router.layer
  ExpertLayout layout = ExpertLayout::per_expert;
  RoutingApplied routing_applied = RoutingApplied::outputs;
  // per_expert(_ungated): under experts.{e}.; stacked_rows: the whole keys (relative to the block)
  std::string gate_name = "gate_proj", up_name = "up_proj", down_name = "down_proj";
  // GPT-OSS clamped SwiGLU when swiglu_limit > 0 (GptOssExperts._apply_gate):
  //   gate = min(gate, limit); up = clamp(up, -limit, limit); h = (up + 1) * gate * sigmoid(alpha * gate)
  float swiglu_limit = 0.0f;
  float swiglu_alpha = 1.0f;
  // An always-on MLP added to the experts' output: shared_expert (Qwen2-MoE, scaled by
  // sigmoid(shared_expert_gate(x))), shared_experts (DeepSeek; Nemotron-H's ungated). Empty name: none.
  std::string shared_expert_name;
  MLPOptions shared_expert;  // its sizes, activation, bias and gating (make_mlp)
  bool shared_expert_gate = false;
  bool shared_expert_average = false;  // (experts + shared) / 2 (Cohere2-MoE "average" combination)
  bool bias = false;  // a [hidden] `bias` added to the combined output (JetMoE)
  // The sigmoid_groups router's e_score_correction_bias [E] where the block holds it, as a key
  // relative to the block (ExaoneMoe mlp., MiniMax-M2 block_sparse_moe.e_score_correction_bias);
  // empty: the router's own (router_name.e_score_correction_bias: DeepSeek-V3, Dots1, GLM-4-MoE)
  std::string score_bias_name;
  bool score_bias_row = false;  // stored [1, E] (Ernie 4.5 MoE's moe_statics.e_score_correction_bias)
  DataType dtype = DataType::FLOAT;
  int64_t identity_experts = 0;  // the router's last experts that return their input (see above)
  int64_t latent_size = 0;   // > 0: the experts' width through fc1_latent_proj / fc2_latent_proj
  bool latent_bias = false;  // of the two latent projections
  // stacked: the checkpoint keys of the two stacked weights (relative to the block)
  std::string stacked_gate_up_name = "input_linear.weight", stacked_down_name = "output_linear.weight";
};

class SparseMoE : public FeedForward {
 public:
  explicit SparseMoE(const MoEOptions& o);
  Value* forward(Ops& op, Value* x) const override;

  MoERouter* router;
  FeedForward* shared_expert = nullptr;
  Linear *fc1_latent_proj = nullptr, *fc2_latent_proj = nullptr;
  Linear* shared_expert_gate = nullptr;
  Parameter* bias = nullptr;

 private:
  // The stacked [E, in, out] weight of one per_expert projection.
  Value* stack(Ops& op, const std::vector<Parameter*>& per_expert) const;
  // y [E, tokens, hidden] for x [tokens, hidden] (every expert reads x) or [E, tokens, hidden].
  Value* experts(Ops& op, Value* x) const;
  MoEOptions o_;
  int64_t computed_;  // the experts with weights: the router's less identity_experts
  std::vector<Parameter*> gate_, up_, down_;  // per_expert(_ungated): one per expert
  Parameter *gate_up_ = nullptr, *gate_up_bias_ = nullptr, *down_w_ = nullptr, *down_bias_ = nullptr;
  Parameter *gate_w_ = nullptr, *up_w_ = nullptr;  // stacked_rows: [hidden, E * I] (stored transposed)
};

}  // namespace mobius
