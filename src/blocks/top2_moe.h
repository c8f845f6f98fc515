// The sparse feed-forward of NLLB-MoE (transformers/models/nllb_moe/modeling_nllb_moe.py 5.23,
// NllbMoeSparseMLP with NllbMoeTop2Router, eval mode; fairseq's top-2 gating, Lepikhin et al.,
// arXiv:2006.16668), over the tokens of the whole call: the [batch, seq] tokens are one list of
// N = batch * seq, in row-major order (padding positions included).
//   router.classifier : Linear d_model -> num_experts (bias: router_bias), scored in float32
//                       (router_dtype float32; the logits of an f16 build are cast)
//   probs = softmax(logits); top-1 = argmax(probs), top-2 = argmax(logits without the top-1)
//   (second_expert_policy "all"; ties to the lower index); tokens that are padding (the encoder's
//   attention_mask 0, unless router_ignore_padding_tokens) choose no expert
//   capacity = ceil(moe_eval_capacity_token_fraction * N) when that fraction is > 0, else
//   expert_capacity; an expert keeps the top-1 tokens whose rank among its top-1 tokens is below
//   the capacity, then the top-2 tokens whose rank among its top-2 tokens plus its number of top-1
//   tokens is below it. Rank: the token order, or with batch_prioritized_routing the order of the
//   tokens' largest router probability (descending, ties to the earlier token)
//   gates: the top-1 and top-2 probabilities divided by their sum (at least float32 epsilon),
//   taken before the capacity drop with normalize_router_prob_before_dropping, else after it (a
//   dropped choice counting 0); a dropped choice's gate is 0
//   output = (1 - moe_token_dropout) * sum over the experts e of gate[e] * expert_e(x)
//   experts.expert_{e}: fc1, act, fc2 with biases (NllbMoeDenseActDense)
// transformers 5.23's NllbMoeExperts.forward does not compute that last line: it one-hot encodes
// the [N, num_experts] top-1 mask itself, so it runs expert_1 on each token weighted by its kept
// top-1 gate and expert_0 weighted by the rest, whatever the router chose. This block computes
// the routing above (transformers 4.x's NllbMoeSparseMLP, fairseq's MoE layer); docs/seq2seq.md.
// Dense evaluation: every expert runs on every token times its gate (0 where not routed), exact
// and num_experts / 2 times a sparse dispatch's expert FLOPs.
#pragma once

#include <vector>

#include "blocks/linear.h"
#include "blocks/mlp.h"

namespace mobius {

struct Top2MoEOptions {
  int64_t d_model;
  int64_t ffn_dim;  // of one expert
  int64_t num_experts;
  int64_t expert_capacity;                       // used when the fraction is <= 0
  double moe_eval_capacity_token_fraction = 1.0;
  bool normalize_router_prob_before_dropping = false;
  bool batch_prioritized_routing = false;
  bool router_ignore_padding_tokens = false;
  bool router_bias = false;
  float moe_token_dropout = 0.2f;
  std::string act = "relu";  // activation_function
  DataType dtype = DataType::FLOAT;
};

class Top2SparseMLP : public Module {
 public:
  explicit Top2SparseMLP(const Top2MoEOptions& o);
  // x: [batch, seq, d_model]; attention_mask: int64 [batch, seq] (1 token, 0 padding), or null
  // when every position is a token (the decoder). Returns [batch, seq, d_model].
  Value* forward(Ops& op, Value* x, Value* attention_mask) const;

  Linear* classifier;  // router.classifier
  std::vector<FeedForward*> experts;

 private:
  // The gates [N, num_experts] in float32 of the flattened tokens x2 [N, d_model].
  Value* route(Ops& op, Value* x2, Value* attention_mask) const;
  Top2MoEOptions o_;
};

}  // namespace mobius
