// diffusers' BasicTransformerBlock (diffusers/models/attention.py) over tokens x [batch, seq, dim],
// with the norm types its users build (no positional embedding, no GLIGEN fuser, only_cross_attention
// and double_self_attention off):
//   LayerNorm (the UNet's Transformer2DModel, norm_type "layer_norm"):
//     x = attn1(norm1(x)) + x; x = attn2(norm2(x), encoder_hidden_states) + x; x = ff(norm3(x)) + x
//   AdaNormZero (DiT, "ada_norm_zero"): norm1 = AdaLayerNormZero with its own
//     CombinedTimestepLabelEmbeddings norm1.emb (blocks/timestep_embedding.h), e = norm1.linear(silu(
//     emb(timestep, class_labels))) cut into shift/scale/gate of the attention and of the MLP:
//     x = gate_msa * attn1(modulate(norm1.norm(x))) + x; [attn2 as LayerNorm's];
//     x = gate_mlp * ff(norm3(x) * (1 + scale_mlp) + shift_mlp) + x
//   AdaNormSingle (PixArt, "ada_norm_single"): the six chunks are scale_shift_table [6, dim] +
//     timestep reshaped to [batch, 6, dim] (AdaLayerNormSingle's output, computed once by the model):
//     x = gate_msa * attn1(norm1(x) * (1 + scale_msa) + shift_msa) + x;
//     x = attn2(x, encoder_hidden_states, encoder_attention_bias) + x   (no norm before it);
//     x = gate_mlp * ff(norm2(x) * (1 + scale_mlp) + shift_mlp) + x
// norm1..3 (the plain ones): LayerNorm(dim, norm_eps), affine as norm_elementwise_affine. attn2 and
// norm2 exist with a cross_attention_dim (norm2 always for AdaNormSingle).
// FeedForward (activation_fn, inner 4 * dim, bias): "geglu": h, gate = net.0.proj(x).chunk(2),
// net.2(h * gelu(gate)) (erf); "gelu-approximate": net.2(gelu_tanh(net.0.proj(x))).
// Attention (attention_processor.py Attention, AttnProcessor2_0): to_q, to_k, to_v (bias as
// attention_bias), to_out.0 with bias, heads of dim_head, SDPA with scale dim_head^-0.5 (the ONNX
// Attention op, tagged with its heads for the multi_head_attention lowering). Children named as the
// diffusers state dict.
#pragma once

#include <string>

#include "blocks/ada_layer_norm.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/timestep_embedding.h"

namespace mobius {

enum class BlockNorm { LayerNorm, AdaNormZero, AdaNormSingle };

struct BasicTransformerBlockOptions {
  int64_t dim;
  int64_t heads;
  int64_t dim_head;
  int64_t cross_attention_dim = 0;  // 0: no attn2
  BlockNorm norm_type = BlockNorm::LayerNorm;
  std::string activation_fn = "geglu";  // or "gelu-approximate"
  bool attention_bias = false;
  bool norm_elementwise_affine = true;
  float norm_eps = 1e-5f;
  int64_t num_embeds_ada_norm = 0;  // AdaNormZero: the class count of norm1.emb
  DataType dtype = DataType::FLOAT;
};

// diffusers' Attention without a norm or residual: to_out.0(SDPA(to_q(x), to_k(c), to_v(c))).
class DiffusersAttention : public Module {
 public:
  // kv_dim: the width of the states keys and values are projected from (dim for self-attention);
  // bias: to_q / to_k / to_v's.
  DiffusersAttention(int64_t dim, int64_t kv_dim, int64_t heads, int64_t dim_head, bool bias, DataType dtype);
  // x [batch, seq, dim], context [batch, len, kv_dim] (x itself for self-attention), bias: additive
  // [batch, 1, seq, len] or null -> [batch, seq, dim].
  Value* forward(Ops& op, Value* x, Value* context, Value* bias = nullptr) const;
  Linear *to_q, *to_k, *to_v, *to_out;

 private:
  int64_t heads_, dim_head_;
};

// The additive bias of diffusers' encoder_attention_mask (PixArt's and the UNet's forward):
// (1 - mask) * -10000, mask [batch, len] (1 keep, 0 discard; any numeric dtype), expanded over the
// queries of x [batch, seq, ...] -> [batch, 1, seq, len] in `dtype`.
Value* encoder_attention_bias(Ops& op, Value* mask, Value* x, DataType dtype);

struct BasicTransformerBlockInputs {
  Value* encoder_hidden_states = nullptr;   // [batch, len, cross_attention_dim] (attn2's)
  Value* encoder_attention_bias = nullptr;  // [batch, 1, seq, len] or null
  // AdaNormZero: the Timesteps(256) projection [batch, 256] (norm1.emb's time_proj output, shared
  // by every block); AdaNormSingle: AdaLayerNormSingle's [batch, 6 * dim].
  Value* timestep = nullptr;
  Value* class_labels = nullptr;  // AdaNormZero: int64 [batch]
};

class BasicTransformerBlock : public Module {
 public:
  explicit BasicTransformerBlock(const BasicTransformerBlockOptions& o);
  // x [batch, seq, dim] -> [batch, seq, dim].
  Value* forward(Ops& op, Value* x, const BasicTransformerBlockInputs& in) const;

  LayerNorm *norm1 = nullptr, *norm2 = nullptr, *norm3 = nullptr;
  AdaLayerNorm* norm1_zero = nullptr;                // AdaNormZero: norm1.linear, norm1.norm
  CombinedTimestepLabelEmbeddings* emb = nullptr;    // AdaNormZero: norm1.emb
  Parameter* scale_shift_table = nullptr;            // AdaNormSingle: [6, dim]
  DiffusersAttention *attn1, *attn2 = nullptr;
  Linear *ff_proj, *ff_out;  // ff.net.0.proj [dim -> inner, or 2 * inner for geglu], ff.net.2 [inner -> dim]

 private:
  Value* feed_forward(Ops& op, Value* x) const;
  BasicTransformerBlockOptions o_;
  int64_t inner_;  // FeedForward's inner width, 4 * dim
};

}  // namespace mobius
