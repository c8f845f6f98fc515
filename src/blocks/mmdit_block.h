// The double-stream block of diffusers' MMDiTs: FluxTransformerBlock
// (diffusers/models/transformers/transformer_flux.py) and JointTransformerBlock (attention.py, SD3 /
// SD3.5), over image tokens x and text tokens ctx [batch, *, dim] with the conditioning temb
// [batch, dim]:
//   norm1 (AdaLayerNormZero; SD35AdaLayerNormZeroX with dual attention: 9 chunks) and
//   norm1_context (AdaLayerNormZero; AdaLayerNormContinuous in SD3's last block, context_pre_only)
//   x'   = x + gate_msa * attn(modulated x | modulated ctx)       (blocks/joint_attention.h)
//   [x'  = x' + gate_msa2 * attn2(norm(x) * (1 + scale_msa2) + shift_msa2)]   (dual attention)
//   x''  = x' + gate_mlp * ff(norm2(x') * (1 + scale_mlp) + shift_mlp)
//   ctx likewise with the c_ chunks, norm2_context and ff_context (none with context_pre_only)
// ff / ff_context: diffusers' FeedForward with activation_fn "gelu-approximate" (GeluFeedForward).
// LayerNorms without affine parameters, eps 1e-6. Children named as the diffusers state dict.
#pragma once

#include <utility>

#include "blocks/ada_layer_norm.h"
#include "blocks/joint_attention.h"

namespace mobius {

// diffusers' FeedForward(dim, dim_out=dim, activation_fn="gelu-approximate", mult 4):
// net.2(gelu_tanh(net.0.proj(x))), net.0.proj [dim -> 4 dim], net.2 [4 dim -> dim], with biases.
class GeluFeedForward : public Module {
 public:
  GeluFeedForward(int64_t dim, DataType dtype);
  // x [..., dim] -> [..., dim].
  Value* forward(Ops& op, Value* x) const;
  Linear *proj, *out;
};

struct MMDiTBlockOptions {
  int64_t dim;
  int64_t heads;
  int64_t head_dim;
  bool qk_norm = true;            // RMSNorm q / k (Flux; SD3 with qk_norm "rms_norm")
  bool context_first = true;      // the joint sequence's order (Flux: text first; SD3: image first)
  bool context_pre_only = false;  // SD3's last block: the text stream ends in the attention's keys
  bool dual_attention = false;    // SD3.5's attn2 (dual_attention_layers)
  DataType dtype = DataType::FLOAT;
};

class MMDiTBlock : public Module {
 public:
  explicit MMDiTBlock(const MMDiTBlockOptions& o);
  // x [batch, seq, dim], ctx [batch, len, dim], temb [batch, dim], rope: tables over the joint
  // sequence or null -> (x', ctx'); ctx' is null with context_pre_only.
  std::pair<Value*, Value*> forward(Ops& op, Value* x, Value* ctx, Value* temb, const RopeTables* rope) const;
  AdaLayerNorm *norm1, *norm1_context;
  JointAttention *attn, *attn2 = nullptr;
  LayerNorm *norm2, *norm2_context = nullptr;
  GeluFeedForward *ff, *ff_context = nullptr;

 private:
  MMDiTBlockOptions o_;
};

}  // namespace mobius
