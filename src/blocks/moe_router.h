// The router of a sparse mixture-of-experts block: scores every expert for every token, picks
// the top-k and returns the routing weights as a dense matrix R [tokens, num_experts] (the weight
// of expert e for token t; 0 where e was not picked). The kinds, as transformers 5.23 computes
// them in eval mode (the *TopKRouter / *TopkRouter classes in transformers/models/<type>/):
//   softmax_topk    p = softmax(logits); top-k of p; if norm_topk_prob p_k /= sum(p_k) (or their
//                   norm_topk_p-norm: DBRX);
//                   * routed_scaling_factor. With n_group > 1 (DeepSeek-V2 topk_method
//                   "group_limited_greedy"): group score = max of p in the group, p outside the
//                   topk_group best groups set to 0 before the top-k.
//                   (Mixtral, Qwen2-MoE, Qwen3-MoE, OLMoE, DeepSeek-V2)
//   topk_softmax    top-k of the logits, softmax over those k (GraniteMoE, GPT-OSS with bias)
//   topk_sigmoid    top-k of the logits, each weighted by its sigmoid; if norm_topk_prob divided
//                   by their sum (Cohere2-MoE expert_selection_fn "sigmoid")
//   sigmoid_groups  s = sigmoid(logits); c = s + e_score_correction_bias; group score = sum of the
//                   two best c in the group; c outside the topk_group best groups = -inf (or 0:
//                   groups_fill_zero); top-k of c
//                   picks the experts, weighted by s; if norm_topk_prob s_k /= (sum(s_k) + norm_topk_eps);
//                   * routed_scaling_factor (DeepSeek-V3 "noaux_tc"; Lfm2Moe, one group,
//                   norm_topk_eps 1e-6, without the correction when use_expert_bias is false)
//   sigmoid_logit_correction  top-k of logits + e_score_correction_bias picks the experts, each
//                   weighted by sigmoid(logit); if norm_topk_prob w_k /= (sum(w_k) + norm_topk_eps)
//                   (sigmoid_groups with one group and the correction added to the logits, not to
//                   the scores: Kolibri-1, norm_topk_eps 0)
//   softmax_correction  sigmoid_groups' selection and weighting with p = softmax(logits) in place
//                   of the sigmoid, one group (Ernie 4.5 MoE: its moe_norm_min clamp of the sum
//                   never acts for moe_norm_min <= top_k / num_experts, which the arch checks)
//   sparsemixer     PhiMoE's sparsemixer (arXiv:2409.12136) at inference: always two experts.
//                   Expert 1 = argmax of the logits, weighted by its softmax probability among the
//                   logits l with (max - l) / max(|l|, max) <= 2 * router_jitter_noise; expert 2
//                   = argmax of the others, weighted likewise among the others, the threshold
//                   measured from the second maximum.
// Logits are x @ weight^T (+ bias) in the model dtype; scoring runs in float32 and R is returned
// in the model dtype. Top-k ties resolve to the lower expert index (ONNX TopK, like torch.topk).
#pragma once

#include <string>

#include "nn/module.h"

namespace mobius {

enum class RouterKind {
  softmax_topk,
  topk_softmax,
  topk_sigmoid,
  sigmoid_groups,
  sigmoid_logit_correction,
  softmax_correction,
  sparsemixer
};

struct RouterOptions {
  RouterKind kind = RouterKind::softmax_topk;
  int64_t hidden_size;
  int64_t num_experts;
  int64_t top_k;                       // num_experts_per_tok (sparsemixer: always 2)
  bool norm_topk_prob = false;
  // softmax_topk's norm_topk_prob divides the picked weights by their p-norm, (sum p_k^p)^(1/p)
  // (DBRX moe_normalize_expert_weights, torch.norm); 1: their sum
  double norm_topk_p = 1.0;
  float routed_scaling_factor = 1.0f;
  int64_t n_group = 1;                 // group-limited selection: num_experts % n_group == 0
  int64_t topk_group = 1;
  bool bias = false;                   // router bias (GPT-OSS)
  float jitter_eps = 0.0f;             // sparsemixer: router_jitter_noise
  // the corrected kinds (corrected()): the router holds e_score_correction_bias; false: its MoE
  // block does and sets the pointer (MoEOptions::score_bias_name)
  bool own_score_bias = true;
  // sigmoid_groups: false picks on the scores alone, no e_score_correction_bias (Lfm2Moe's
  // use_expert_bias false)
  bool score_correction = true;
  // sigmoid_groups, sigmoid_logit_correction, softmax_correction: added to the picked sum when
  // norm_topk_prob (Lfm2Moe 1e-6; Flint, Kolibri-1 0)
  double norm_topk_eps = 1e-20;
  // > 0: the float32 logits become c * tanh(logits / c) before scoring (Laguna
  // moe_router_logit_softcapping); 0: none
  float logit_softcapping = 0.0f;
  // sigmoid_groups: c outside the topk_group best groups becomes 0 instead of -inf (AXK2TopkRouter's
  // masked_fill(~score_mask, 0.0))
  bool groups_fill_zero = false;
  // Whether the kind picks on scores + e_score_correction_bias.
  bool corrected() const {
    return (kind == RouterKind::sigmoid_groups && score_correction) || kind == RouterKind::sigmoid_logit_correction ||
           kind == RouterKind::softmax_correction;
  }
  DataType dtype = DataType::FLOAT;
};

// Parameters: weight [num_experts, hidden_size] (stored transposed), optional bias [num_experts],
// e_score_correction_bias [num_experts] for the corrected kinds (corrected(); the block's,
// when not own_score_bias).
class MoERouter : public Module {
 public:
  // Inconsistent sizes (top_k, n_group, topk_group) are internal errors: the architectures
  // validate the config fields they come from.
  explicit MoERouter(const RouterOptions& o);
  // x: [tokens, hidden_size] -> R [tokens, num_experts] in the model dtype.
  Value* forward(Ops& op, Value* x) const;

  Parameter* weight;
  Parameter* bias = nullptr;
  Parameter* e_score_correction_bias = nullptr;

 private:
  // Keeps the topk_group best groups of `scores` [tokens, E]; the others become `fill`.
  Value* limit_groups(Ops& op, Value* scores, bool group_top2_sum, float fill) const;
  Value* sparsemixer(Ops& op, Value* logits) const;
  RouterOptions o_;
};

}  // namespace mobius
