// The sparse feed-forward of Switch Transformers (transformers/models/switch_transformers/
// modeling_switch_transformers.py, SwitchTransformersSparseMLP with SwitchTransformersTop1Router,
// 5.23, eval mode; Fedus et al., arXiv:2101.03961): every token goes to its top-1 expert, weighted
// by that expert's router probability, unless the expert already took `expert_capacity` tokens of
// the same sequence (counted in order along the sequence axis of the call: torch.cumsum over the
// one-hot choices); a dropped token's output is 0 (the layer's residual carries it). The count is
// per forward call, as transformers computes it: a prefill counts its own tokens, a decode step
// only its one.
//   router.classifier : Linear d_model -> num_experts (bias: router_bias), scored in float32
//                       (router_dtype; the logits of an f16 build are cast, not recomputed)
//   experts.expert_{e}: wi, act, wo (SwitchTransformersDenseActDense, no biases)
// Dense evaluation: every expert runs on every token and is multiplied by its routing weight
// (0 for the experts not picked or over capacity), as blocks/moe.h does; exact, E times the
// expert FLOPs of a sparse dispatch.
#pragma once

#include <vector>

#include "blocks/linear.h"
#include "blocks/mlp.h"

namespace mobius {

struct SwitchMoEOptions {
  int64_t d_model;
  int64_t d_ff;             // of one expert
  int64_t num_experts;
  int64_t expert_capacity;  // tokens an expert takes per sequence and call
  bool router_bias = false;
  std::string act = "relu";  // dense_act_fn
  DataType dtype = DataType::FLOAT;
};

class SwitchSparseMLP : public FeedForward {
 public:
  explicit SwitchSparseMLP(const SwitchMoEOptions& o);
  // x: [batch, seq, d_model] -> [batch, seq, d_model].
  Value* forward(Ops& op, Value* x) const override;

  Linear* classifier;  // router.classifier
  std::vector<FeedForward*> experts;

 private:
  // The routing weights [batch, seq, num_experts] in the model dtype.
  Value* route(Ops& op, Value* x) const;
  SwitchMoEOptions o_;
};

}  // namespace mobius
