// DiTTransformer2DModel (diffusers/models/transformers/dit_transformer_2d.py): the class-conditional
// DiT denoiser (Peebles & Xie 2022), adaLN-Zero:
//   x = PatchEmbed pos_embed(hidden_states)   (blocks/patch_embed.h: the sincos table of the input's
//       patch grid, base_size sample_size // patch_size, interpolation_scale 1)
//   t = Timesteps(256, flip_sin_to_cos, downscale_freq_shift 1)(timestep)
//   num_layers BasicTransformerBlock, norm_type "ada_norm_zero" (blocks/basic_transformer_block.h):
//     each block's norm1.emb embeds (t, class_labels) with its own weights; self-attention only
//     (bias as attention_bias), FeedForward "gelu-approximate"
//   shift, scale = proj_out_1(silu(transformer_blocks.0.norm1.emb(t, class_labels))).chunk(2)
//   out = unpatchify(proj_out_2(norm_out(x) * (1 + scale) + shift))   (norm_out: LayerNorm without
//     affine, eps 1e-6)
// diffusers' unpatchify takes the patch grid as square (int(seq ** 0.5)); mobius uses the input's h
// and w (the same for the square latents DiTPipeline makes). Config fields read as
// DiTTransformer2DModel's __init__: norm_type must be "ada_norm_zero" and activation_fn
// "gelu-approximate" (diffusers' defaults); num_embeds_ada_norm is the class count (the label table
// has one more row: the unconditional class DiTPipeline feeds for guidance); dropout and
// upcast_attention do not change the float forward; norm_num_groups is unused by diffusers.
// Graph "transformer":
//   hidden_states [batch_size, in_channels, height, width] (multiples of patch_size),
//   timestep [timestep_batch] (the model dtype; 1 or batch_size entries), class_labels int64
//   [batch_size] (0 .. num_embeds_ada_norm, the last the unconditional class)
//   -> out_hidden_states [batch_size, out_channels, height, width]
#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/activation.h"
#include "blocks/basic_transformer_block.h"
#include "blocks/patch_embed.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct DiTSpec {
  int64_t patch, in_channels, out_channels, layers, heads, head_dim, dim, classes, base_size;
  bool attention_bias, affine;
  float eps;
  DataType dtype;
};

DiTSpec dit_spec(const HfConfig& c, DataType dtype) {
  DiTSpec s;
  s.dtype = dtype;
  diffusers_require(c, "norm_type", "ada_norm_zero", "DiTTransformer2DModel with norm_type ada_norm_zero");
  diffusers_require(c, "activation_fn", "gelu-approximate", "DiTTransformer2DModel with activation_fn gelu-approximate");
  s.heads = diffusers_int(c, "num_attention_heads", 1, kMaxHeads);
  s.head_dim = diffusers_int(c, "attention_head_dim", 1, kMaxHeadDim);
  s.dim = s.heads * s.head_dim;
  if (s.dim > kMaxHiddenSize || s.dim % 4 != 0)
    c.fail("num_attention_heads", "num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                      " must be a multiple of 4 (the 2-D sincos positions) up to " +
                                      std::to_string(kMaxHiddenSize));
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxHiddenSize);
  s.out_channels = c.has("out_channels") ? diffusers_int(c, "out_channels", 1, kMaxHiddenSize) : s.in_channels;
  s.layers = diffusers_int(c, "num_layers", 1, kMaxLayers);
  s.patch = diffusers_int(c, "patch_size", 1, kMaxSmallSize);
  s.base_size = diffusers_int(c, "sample_size", s.patch, kMaxSmallSize) / s.patch;
  if (!c.has("num_embeds_ada_norm")) c.fail("num_embeds_ada_norm", "null is not supported (the class count of ada_norm_zero)");
  s.classes = diffusers_int(c, "num_embeds_ada_norm", 1, kMaxVocabSize);
  s.attention_bias = c.get_bool("attention_bias");
  s.affine = c.get_bool("norm_elementwise_affine");
  s.eps = static_cast<float>(c.get_float("norm_eps"));
  return s;
}

class DiTTransformer2DModel : public OneGraphComponent {
 public:
  DiTTransformer2DModel(const HfConfig& c, DataType dtype) : OneGraphComponent("diffusion-denoiser", GraphPath{"transformer", hf_graph::transformer}), s_(dit_spec(c, dtype)) {
    pos_embed = child<PatchEmbed>("pos_embed", PatchEmbedOptions{.in_channels = s_.in_channels, .dim = s_.dim,
                                                                 .patch_size = s_.patch, .base_size = s_.base_size,
                                                                 .dtype = dtype});
    for (int64_t i = 0; i < s_.layers; ++i)
      blocks.push_back(child<BasicTransformerBlock>(
          "transformer_blocks." + std::to_string(i),
          BasicTransformerBlockOptions{.dim = s_.dim, .heads = s_.heads, .dim_head = s_.head_dim,
                                       .norm_type = BlockNorm::AdaNormZero, .activation_fn = "gelu-approximate",
                                       .attention_bias = s_.attention_bias, .norm_elementwise_affine = s_.affine,
                                       .norm_eps = s_.eps, .num_embeds_ada_norm = s_.classes, .dtype = dtype}));
    norm_out = child<LayerNorm>("norm_out", NormOptions{.dim = s_.dim, .eps = 1e-6f, .dtype = dtype,
                                                        .kind = NormKind::LayerNorm, .elementwise_affine = false});
    proj_out_1 = child<Linear>("proj_out_1", LinearOptions{s_.dim, 2 * s_.dim, true, dtype});
    proj_out_2 = child<Linear>("proj_out_2", LinearOptions{s_.dim, s_.patch * s_.patch * s_.out_channels, true, dtype});
  }

  PatchEmbed* pos_embed;
  std::vector<BasicTransformerBlock*> blocks;
  LayerNorm* norm_out;
  Linear *proj_out_1, *proj_out_2;

 private:
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const DataType dt = s_.dtype;
    Value* hidden = b.input("hidden_states", dt, {"batch_size", s_.in_channels, "height", "width"});
    Value* timestep = b.input("timestep", dt, {"timestep_batch"});
    Value* labels = b.input("class_labels", DataType::INT64, {"batch_size"});
    Value* t = timestep_sinusoids(op, op.Expand(timestep, op.Shape(hidden, {.end = 1})),
                                  CombinedTimestepLabelEmbeddings::time_proj(dt));
    auto [x, grid] = pos_embed->forward(op, hidden);
    for (const BasicTransformerBlock* block : blocks) x = block->forward(op, x, {.timestep = t, .class_labels = labels});
    Value* cond = blocks[0]->emb->forward(op, t, labels);
    std::vector<Value*> e = op.Split(op.Unsqueeze(proj_out_1->forward(op, activation(op, "silu", cond)), {1}),
                                     {s_.dim, s_.dim}, {.axis = -1});  // shift, scale
    x = op.Add(op.Mul(norm_out->forward(op, x), op.Add(e[1], 1.0)), e[0]);
    x = unpatchify(op, proj_out_2->forward(op, x), grid, s_.patch, s_.out_channels);
    b.output(x, "out_hidden_states", {"batch_size", s_.out_channels, "height", "width"});
    return model;
  }
  DiTSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_dit_transformer(const HfConfig& c, DataType dtype) {
  return std::make_unique<DiTTransformer2DModel>(c, dtype);
}

}  // namespace mobius
