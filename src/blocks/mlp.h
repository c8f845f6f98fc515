// Feed-forward blocks. x: [..., hidden_size] -> [..., hidden_size].
//   GatedMLP (LlamaMLP): down_proj(act(gate_proj(x)) * up_proj(x))
//     fused_gate_up (Phi3MLP, GlmMLP): one gate_up_proj [2 * intermediate_size, hidden_size],
//     gate = first half of its output, up = second half (torch chunk(2, -1)); Split in the graph
//   MLP (PhiMLP, GPTNeoXMLP, GPTJMLP, GPT2MLP, OPT, BloomMLP, MptMLP, FalconMLP, …):
//     down(act(up(x))) under the family's names (fc1/fc2, dense_h_to_4h/dense_4h_to_h,
//     fc_in/fc_out, c_fc/c_proj, up_proj/down_proj)
//     swiglu_clamp (MiniMaxM3VLDenseMLP): GPT-OSS's clamped SwiGLU (clamped_swiglu below) in place of
//     act(gate) * up
// hidden_act "xielu" registers the activation's parameters as the child act_fn (ApertusMLP,
// transformers/models/apertus/modeling_apertus.py; blocks/activation.h XIELU).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blocks/activation.h"
#include "blocks/linear.h"
#include "blocks/norms.h"

namespace mobius {

// GPT-OSS's clamped SwiGLU (GptOssExperts._apply_gate, with gate and up given apart):
//   gate = min(gate, limit); up = clamp(up, -limit, limit); (up + 1) * gate * sigmoid(alpha * gate)
struct SwigluClamp {
  float limit;
  float alpha;
};
Value* clamped_swiglu(Ops& op, Value* gate, Value* up, const SwigluClamp& c);

struct MLPOptions {
  int64_t hidden_size;
  int64_t intermediate_size;
  std::string hidden_act = "silu";
  bool bias = false;
  DataType dtype = DataType::FLOAT;
  bool gated = true;           // GatedMLP; false: MLP
  bool fused_gate_up = false;  // GatedMLP with gate_up_proj
  std::string up_name = "fc1", down_name = "fc2";  // MLP's two projections
  // GatedMLP's three projections (T5DenseGatedActDense: wi_0, wi_1, wo)
  std::string gate_name = "gate_proj", gated_up_name = "up_proj", gated_down_name = "down_proj";
  std::string gate_up_name = "gate_up_proj";  // fused_gate_up's (DINOv2's SwiGLU: mlp.weights_in)
  bool conv1d = false;  // GPT-2 Conv1D projections ([in, out] weights, blocks/linear.h)
  std::optional<bool> down_bias;  // GatedMLP's down projection when not `bias` (GteMLP: down_proj only)
  // GatedMLP: down(act(gate(x) * gate_multiplier) * up(x)) * down_multiplier (FalconH1MLP's
  // mlp_multipliers); 1: no node
  float gate_multiplier = 1.0f, down_multiplier = 1.0f;
  std::optional<SubNorm> down_input_norm;  // GatedMLP: a norm over act(gate) * up before the down projection (BitNet)
  std::optional<SwigluClamp> swiglu_clamp;  // GatedMLP: clamped_swiglu(gate, up) instead of act(gate) * up
};

// A feed-forward sublayer of a decoder layer (GatedMLP, MLP; SparseMoE in blocks/moe.h).
class FeedForward : public Module {
 public:
  virtual Value* forward(Ops& op, Value* x) const = 0;

 protected:
  // Sets the activation act() applies; "xielu" registers its parameters as the child act_fn.
  void init_activation(const std::string& hidden_act, DataType dtype);
  Value* act(Ops& op, Value* x) const;

 private:
  std::string act_;
  XIELU* act_fn_ = nullptr;
};

class GatedMLP : public FeedForward {
 public:
  explicit GatedMLP(const MLPOptions& o);
  Value* forward(Ops& op, Value* x) const override;
  Linear *gate_proj = nullptr, *up_proj = nullptr, *gate_up_proj = nullptr, *down_proj;
  Norm* down_input_norm = nullptr;  // MLPOptions::down_input_norm

 private:
  int64_t intermediate_size_;
  float gate_multiplier_, down_multiplier_;
  std::optional<SwigluClamp> swiglu_clamp_;
};

class MLP : public FeedForward {
 public:
  explicit MLP(const MLPOptions& o);
  Value* forward(Ops& op, Value* x) const override;
  Linear *up, *down;
};

// The sum of sibling feed-forwards on the same input, each registered under its own name:
// adopted under the name "" by a decoder layer, they bind at the layer's level, e.g.
// block_sparse_moe(x) + shared_mlp(x) (GraniteMoeSharedDecoderLayer,
// transformers/models/granitemoeshared/modeling_granitemoeshared.py).
class FeedForwardSum : public FeedForward {
 public:
  // Registers `part` as the child `name`; parts are summed in the order added.
  void add(const std::string& name, std::unique_ptr<FeedForward> part);
  Value* forward(Ops& op, Value* x) const override;

 private:
  std::vector<FeedForward*> parts_;
};

// A feed-forward and a norm over its output, each registered under its own name: adopted under
// the name "" by a decoder layer, both bind at the layer's level. x: [..., hidden] ->
// norm(part(x)), or part(x) without a norm (empty norm_name). A.X-K1's MoE layers (AXK1MoE's
// post_mlp_layernorm, transformers/models/axk1/modular_axk1.py; the checkpoints store it beside the
// mlp module, as layers.N.post_mlp_layernorm) and its dense layers (no norm).
class NormedFeedForward : public FeedForward {
 public:
  NormedFeedForward(const std::string& name, std::unique_ptr<FeedForward> part, const std::string& norm_name,
                    const NormOptions& norm);
  Value* forward(Ops& op, Value* x) const override;
  FeedForward* part;
  Norm* norm = nullptr;  // null for an empty norm_name
};

// GatedMLP or MLP as o.gated says (register it with Module::adopt).
std::unique_ptr<FeedForward> make_mlp(const MLPOptions& o);

}  // namespace mobius
