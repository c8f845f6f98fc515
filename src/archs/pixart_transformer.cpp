// PixArtTransformer2DModel (diffusers/models/transformers/pixart_transformer_2d.py): the PixArt-α / Σ
// text-to-image DiT, adaLN-single:
//   x = PatchEmbed pos_embed(hidden_states)   (blocks/patch_embed.h: base_size sample_size //
//       patch_size, interpolation_scale as config.json gives it, else max(sample_size // 64, 1))
//   t6, emb = adaln_single(timestep[, resolution, aspect_ratio with use_additional_conditions: dim
//       must be a multiple of 3])   (blocks/pixart_embeddings.h AdaLayerNormSingle)
//   ctx = caption_projection(encoder_hidden_states) (PixArtAlphaTextProjection, with
//       caption_channels; else the states as they are)
//   num_layers BasicTransformerBlock, norm_type "ada_norm_single" (blocks/basic_transformer_block.h:
//     scale_shift_table + t6; self-attention, cross-attention to ctx under the encoder_attention_mask
//     bias (1 - mask) * -10000, FeedForward "gelu-approximate")
//   out = unpatchify(proj_out(modulated_out_norm(x, scale_shift_table, emb)))   (norm_out: LayerNorm
//     without affine, eps 1e-6)
// Config fields read as PixArtTransformer2DModel's __init__: norm_type "ada_norm_single",
// activation_fn "gelu-approximate" and attention_type "default" (diffusers' defaults) are required;
// use_additional_conditions null means sample_size == 128; cross_attention_dim must be set, and equal
// the width (num_attention_heads * attention_head_dim) with a caption projection (its output
// feeds attn2). dropout and upcast_attention do not change the float forward; norm_num_groups and
// num_embeds_ada_norm (only checked non-null by diffusers) are unused.
// Graph "transformer":
//   hidden_states [batch_size, in_channels, height, width] (multiples of patch_size),
//   encoder_hidden_states [batch_size, sequence_length, caption_channels or cross_attention_dim],
//   encoder_attention_mask int64 [batch_size, sequence_length] (1 keep, 0 padding: the prompt's
//   attention mask PixArtAlphaPipeline passes), timestep [timestep_batch] (the model dtype; 1 or
//   batch_size entries) [, resolution [batch_size, 2] (height, width), aspect_ratio [batch_size, 1]
//   (the model dtype; use_additional_conditions)]
//   -> out_hidden_states [batch_size, out_channels, height, width]
#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/basic_transformer_block.h"
#include "blocks/patch_embed.h"
#include "blocks/pixart_embeddings.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct PixArtSpec {
  int64_t patch, in_channels, out_channels, layers, heads, head_dim, dim, cross_dim, caption_channels, base_size;
  double interpolation_scale;
  bool additional_conditions, attention_bias, affine;
  float eps;
  DataType dtype;
};

PixArtSpec pixart_spec(const HfConfig& c, DataType dtype) {
  PixArtSpec s;
  s.dtype = dtype;
  const std::string what = "PixArtTransformer2DModel with norm_type ada_norm_single, activation_fn gelu-approximate "
                           "and attention_type default";
  diffusers_require(c, "norm_type", "ada_norm_single", what);
  diffusers_require(c, "activation_fn", "gelu-approximate", what);
  diffusers_require(c, "attention_type", "default", what);
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
  const int64_t sample_size = diffusers_int(c, "sample_size", s.patch, kMaxSmallSize);
  s.base_size = sample_size / s.patch;
  s.interpolation_scale = c.has("interpolation_scale") ? c.get_float("interpolation_scale")
                                                       : static_cast<double>(std::max<int64_t>(sample_size / 64, 1));
  if (!(s.interpolation_scale > 0.0)) c.fail("interpolation_scale", "expected a positive value");
  s.additional_conditions = c.has("use_additional_conditions") ? c.get_bool("use_additional_conditions")
                                                               : sample_size == 128;
  if (s.additional_conditions && s.dim % 3 != 0)
    c.fail("use_additional_conditions", "the resolution and aspect-ratio embeddings need num_attention_heads * "
                                        "attention_head_dim = " + std::to_string(s.dim) + " to be a multiple of 3");
  if (!c.has("cross_attention_dim")) c.fail("cross_attention_dim", "null is not supported (PixArt's cross-attention)");
  s.cross_dim = diffusers_int(c, "cross_attention_dim", 1, kMaxHiddenSize);
  s.caption_channels = c.has("caption_channels") ? diffusers_int(c, "caption_channels", 1, kMaxHiddenSize) : 0;
  if (s.caption_channels > 0 && s.cross_dim != s.dim)
    c.fail("cross_attention_dim", "expected num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                      " (the caption projection's width)");
  s.attention_bias = c.get_bool("attention_bias");
  s.affine = c.get_bool("norm_elementwise_affine");
  s.eps = static_cast<float>(c.get_float("norm_eps"));
  return s;
}

class PixArtTransformer2DModel : public OneGraphComponent {
 public:
  PixArtTransformer2DModel(const HfConfig& c, DataType dtype) : OneGraphComponent("diffusion-denoiser", GraphPath{"transformer", hf_graph::transformer}), s_(pixart_spec(c, dtype)) {
    pos_embed = child<PatchEmbed>("pos_embed", PatchEmbedOptions{.in_channels = s_.in_channels, .dim = s_.dim,
                                                                 .patch_size = s_.patch, .base_size = s_.base_size,
                                                                 .interpolation_scale = s_.interpolation_scale,
                                                                 .dtype = dtype});
    for (int64_t i = 0; i < s_.layers; ++i)
      blocks.push_back(child<BasicTransformerBlock>(
          "transformer_blocks." + std::to_string(i),
          BasicTransformerBlockOptions{.dim = s_.dim, .heads = s_.heads, .dim_head = s_.head_dim,
                                       .cross_attention_dim = s_.cross_dim, .norm_type = BlockNorm::AdaNormSingle,
                                       .activation_fn = "gelu-approximate", .attention_bias = s_.attention_bias,
                                       .norm_elementwise_affine = s_.affine, .norm_eps = s_.eps, .dtype = dtype}));
    norm_out = child<LayerNorm>("norm_out", NormOptions{.dim = s_.dim, .eps = 1e-6f, .dtype = dtype,
                                                        .kind = NormKind::LayerNorm, .elementwise_affine = false});
    scale_shift_table = param("scale_shift_table", {2, s_.dim}, dtype);
    proj_out = child<Linear>("proj_out", LinearOptions{s_.dim, s_.patch * s_.patch * s_.out_channels, true, dtype});
    adaln_single = child<AdaLayerNormSingle>("adaln_single", AdaLayerNormSingleOptions{
                                                                 .dim = s_.dim,
                                                                 .size_conditions = s_.additional_conditions,
                                                                 .dtype = dtype});
    if (s_.caption_channels > 0)
      caption_projection = child<PixArtTextProjection>("caption_projection", s_.caption_channels, s_.dim, dtype);
  }

  PatchEmbed* pos_embed;
  std::vector<BasicTransformerBlock*> blocks;
  LayerNorm* norm_out;
  Parameter* scale_shift_table;
  Linear* proj_out;
  AdaLayerNormSingle* adaln_single;
  PixArtTextProjection* caption_projection = nullptr;

 private:
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const DataType dt = s_.dtype;
    const int64_t text_dim = s_.caption_channels > 0 ? s_.caption_channels : s_.cross_dim;
    Value* hidden = b.input("hidden_states", dt, {"batch_size", s_.in_channels, "height", "width"});
    Value* states = b.input("encoder_hidden_states", dt, {"batch_size", "sequence_length", text_dim});
    Value* mask = b.input("encoder_attention_mask", DataType::INT64, {"batch_size", "sequence_length"});
    Value* timestep = b.input("timestep", dt, {"timestep_batch"});
    Value *resolution = nullptr, *aspect = nullptr;
    if (s_.additional_conditions) {
      resolution = b.input("resolution", dt, {"batch_size", 2});
      aspect = b.input("aspect_ratio", dt, {"batch_size", 1});
    }
    const AdaLayerNormSingleOutput t =
        adaln_single->forward(op, op.Expand(timestep, op.Shape(hidden, {.end = 1})), resolution, aspect);
    Value* ctx = caption_projection ? caption_projection->forward(op, states) : states;
    auto [x, grid] = pos_embed->forward(op, hidden);
    const BasicTransformerBlockInputs in{.encoder_hidden_states = ctx,
                                         .encoder_attention_bias = encoder_attention_bias(op, mask, x, dt),
                                         .timestep = t.timestep};
    for (const BasicTransformerBlock* block : blocks) x = block->forward(op, x, in);
    x = modulated_out_norm(op, *norm_out, x, scale_shift_table->value(op), t.embedded);
    x = unpatchify(op, proj_out->forward(op, x), grid, s_.patch, s_.out_channels);
    b.output(x, "out_hidden_states", {"batch_size", s_.out_channels, "height", "width"});
    return model;
  }
  PixArtSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_pixart_transformer(const HfConfig& c, DataType dtype) {
  return std::make_unique<PixArtTransformer2DModel>(c, dtype);
}

}  // namespace mobius
