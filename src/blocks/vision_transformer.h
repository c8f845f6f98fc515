// The parts of a ViT-style vision tower (Dosovitskiy et al. 2020, arXiv:2010.11929), as the
// transformers vision encoders write them (models/{vit,deit,dinov2,clip,siglip,...}/modeling_*.py):
//   embeddings : Conv2d patch embedding (kernel = stride = patch_size) -> [batch, patches, hidden],
//                learned tokens (class, distillation) prepended, learned position embeddings added,
//                register tokens (DINOv2 with registers) inserted after the prepended tokens
//   each layer : h = x + ls1 * attention(norm1(x)); out = h + ls2 * mlp(norm2(h)), mlp =
//                fc2(act(fc1(.))) or a feed-forward of the options' own (DINOv2's SwiGLU)
//                (pre-norm; ls = DINOv2's LayerScale, 1 elsewhere); bidirectional, no mask
// Only the config's image_size is accepted: pixel_values is [batch, num_channels, image_size,
// image_size] with static channel and spatial dims, so onnxruntime refuses another size at the
// input (no position interpolation).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "blocks/attention.h"
#include "blocks/mlp.h"

namespace mobius {

struct VisionEmbeddingsOptions {
  int64_t num_channels = 3;
  int64_t image_size;
  int64_t patch_size;
  int64_t hidden_size;
  DataType dtype = DataType::FLOAT;
  std::string patch = "patch_embedding";  // the Conv2d child (ViT: "patch_embeddings.projection")
  bool patch_bias = true;                 // CLIP: false
  // Learned tokens prepended to the patches in this order, each a parameter of shape
  // [1, 1, hidden] (ViT "cls_token", DeiT + "distillation_token") or [hidden] with token_rank1
  // (CLIP "class_embedding").
  std::vector<std::string> tokens;
  bool token_rank1 = false;
  // The position table, one row per token and patch: [positions, hidden] (an Embedding's weight,
  // CLIP/SigLIP "position_embedding.weight") or [1, positions, hidden] with position_rank3 (ViT
  // "position_embeddings"); "" = none (BEiT without use_absolute_position_embeddings).
  std::string position = "position_embedding.weight";
  bool position_rank3 = false;
  // DINOv2-with-registers: parameter [1, num_registers, hidden] inserted after the prepended
  // tokens, after the positions were added (Dinov2WithRegistersEmbeddings); "" = none.
  std::string registers;
  int64_t num_registers = 0;
};

// (image_size / patch_size)^2: the patches of one image.
int64_t num_patches(const VisionEmbeddingsOptions& o);

// A Conv2d over non-overlapping patches. weight [out, in, patch, patch] (+ bias [out]).
// forward: pixel_values [batch, in, H, W] -> [batch, (H / patch) * (W / patch), out] (row-major
// patch order, as transformers' flatten(2).transpose(1, 2)).
class PatchEmbedding : public Module {
 public:
  PatchEmbedding(int64_t in_channels, int64_t out_channels, int64_t patch_size, bool bias, DataType dtype);
  Value* forward(Ops& op, Value* pixel_values) const;

  Parameter* weight;
  Parameter* bias = nullptr;

 private:
  int64_t patch_size_;
};

// The embeddings above. forward: pixel_values [batch, C, image_size, image_size] ->
// [batch, tokens + registers + patches, hidden].
class VisionEmbeddings : public Module {
 public:
  explicit VisionEmbeddings(const VisionEmbeddingsOptions& o);
  Value* forward(Ops& op, Value* pixel_values) const;

  PatchEmbedding* patch_embedding;
  std::vector<Parameter*> tokens;
  Parameter* position = nullptr;
  Parameter* registers = nullptr;

 private:
  VisionEmbeddingsOptions o_;
};

// Child names of a layer as the checkpoint spells them (dotted names nest). Defaults: CLIP/SigLIP
// (CLIPEncoderLayer); the attention's projections are AttentionOptions::names.
struct VisionLayerNames {
  std::string norm1 = "layer_norm1";
  std::string attention = "self_attn";
  std::string norm2 = "layer_norm2";
  std::string fc1 = "mlp.fc1";
  std::string fc2 = "mlp.fc2";
  // LayerScale parameters [hidden] multiplying each branch (Dinov2LayerScale "layer_scale1.lambda1");
  // "" = none.
  std::string layer_scale1;
  std::string layer_scale2;
};

struct VisionLayerOptions {
  int64_t hidden_size;
  int64_t intermediate_size;
  std::string hidden_act;
  float layer_norm_eps;  // the eps of norm1 and norm2
  NormKind norm = NormKind::LayerNorm;  // norm1 and norm2 (AIMv2's layers: RMSNorm)
  AttentionOptions attention;  // biases on, num_key_value_heads = num_attention_heads
  VisionLayerNames names;
  DataType dtype = DataType::FLOAT;
  // The feed-forward when it is not fc2(hidden_act(fc1(x))) with biases under names.fc1 / fc2
  // (intermediate_size wide): DINOv2's SwiGLU, down_proj(silu(gate_proj(x)) * up_proj(x)) with
  // gate and up fused (blocks/mlp.h; its names relative to the layer).
  std::optional<MLPOptions> mlp;

  MLPOptions feed_forward() const;  // `mlp`, or the fc1 / fc2 MLP
};

// The options of a multi-head self-attention of width `hidden` with q/k/v/o biases, the
// projections named `names` (no RoPE, no cache): what every tower here uses.
AttentionOptions vision_attention(int64_t hidden, int64_t heads, const AttentionNames& names, DataType dtype);

// One pre-norm layer (CLIPEncoderLayer; also the CLIP and SigLIP text towers', and with RMSNorm and
// a SwiGLU feed-forward AIMv2's Aimv2EncoderLayer).
// forward: x [batch, seq, hidden] -> [batch, seq, hidden]; mask: an additive float mask
// [batch, 1, seq, seq] (blocks/attention.h causal_mask, padding_mask), or null for none (images).
class VisionEncoderLayer : public Module {
 public:
  explicit VisionEncoderLayer(const VisionLayerOptions& o);
  Value* forward(Ops& op, Value* x, Value* mask = nullptr) const;

  Norm *norm1, *norm2;  // of kind VisionLayerOptions::norm
  Attention* attention;
  FeedForward* mlp;
  Parameter* layer_scale1 = nullptr;
  Parameter* layer_scale2 = nullptr;
};

struct VisionTransformerOptions {
  std::string embeddings = "embeddings";
  VisionEmbeddingsOptions embedding;
  std::string pre_norm;                 // LayerNorm after the embeddings (CLIP "pre_layrnorm"); "" = none
  std::string layers = "encoder.layers";  // the layer list (ViT: "encoder.layer")
  int64_t num_hidden_layers;
  VisionLayerOptions layer;
  std::string post_norm;  // LayerNorm on the last layer's sequence (SigLIP "post_layernorm", ViT "layernorm"); "" = none
};

struct VisionTransformerOutputs {
  // [batch, seq, hidden]: the last layer's output, after post_norm; null when forward ran fewer
  // layers than num_hidden_layers.
  Value* last_hidden_state = nullptr;
  // hidden_states[k], k = 0..layers run: the sequence after k layers, without post_norm
  // (k = 0: the embeddings, after pre_norm): transformers' output_hidden_states tuple, which
  // LLaVA's vision_feature_layer indexes.
  std::vector<Value*> hidden_states;
};

// A whole tower (transformers' *VisionModel without the pooler or head; those are the family's).
// Build it with a family's factory (archs/vision_towers.h) and register it under the checkpoint
// prefix of its weights.
class VisionTransformer : public Module {
 public:
  explicit VisionTransformer(const VisionTransformerOptions& o);
  // pixel_values: [batch, num_channels, image_size, image_size], the model dtype. `layers`: how
  // many layers to run (-1 = all; 0..num_hidden_layers); the layers after it are not in the graph.
  VisionTransformerOutputs forward(Ops& op, Value* pixel_values, int64_t layers = -1) const;

  const VisionTransformerOptions& options() const { return o_; }
  int64_t hidden_size() const { return o_.layer.hidden_size; }
  // Tokens + registers + patches: the sequence length of every output.
  int64_t sequence_length() const;

  VisionEmbeddings* embeddings;
  LayerNorm* pre_norm = nullptr;
  std::vector<VisionEncoderLayer*> layers;
  LayerNorm* post_norm = nullptr;

 private:
  VisionTransformerOptions o_;
};

// x [batch, seq, hidden] -> [batch, hidden]: the token at index i (x[:, i]; i = -1: the last).
Value* token_at(Ops& op, Value* x, int64_t i);
// x [batch, seq, hidden] -> [batch, hidden]: the mean of the tokens from index `from` on
// (x[:, from:].mean(1)).
Value* mean_tokens(Ops& op, Value* x, int64_t from = 0);

}  // namespace mobius
