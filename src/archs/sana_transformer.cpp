// SanaTransformer2DModel (diffusers/models/transformers/sana_transformer.py): the Sana linear-attention
// DiT (Xie et al. 2024):
//   x = PatchEmbed patch_embed(hidden_states)   (blocks/patch_embed.h: the sincos table only with an
//       interpolation_scale, base_size sample_size // patch_size; none by default)
//   t6, emb = time_embed(timestep)   (AdaLayerNormSingle without size conditions,
//       blocks/pixart_embeddings.h)
//   ctx = caption_norm(caption_projection(encoder_hidden_states))   (PixArtAlphaTextProjection, then
//       RMSNorm eps 1e-5 with weight)
//   num_layers SanaTransformerBlock (blocks/sana_block.h: linear self-attention, cross-attention under
//     the encoder_attention_mask bias (1 - mask) * -10000, GLUMBConv feed-forward on the patch grid)
//   out = unpatchify(proj_out(norm_out(x, emb, scale_shift_table)))   (SanaModulatedNorm: LayerNorm
//     without affine, eps 1e-6)
// Config fields read as SanaTransformer2DModel's __init__; refused: guidance_embeds (SANA-Sprint's
// guidance embedding), qk_norm (SANA 1.5's q / k RMSNorm), cross_attention_dim null. dropout does not
// change the float forward; timestep_scale and guidance_embeds_scale are the pipeline's (it scales the
// timestep it feeds).
// Graph "transformer":
//   hidden_states [batch_size, in_channels, height, width] (multiples of patch_size),
//   encoder_hidden_states [batch_size, sequence_length, caption_channels], encoder_attention_mask int64
//   [batch_size, sequence_length] (1 keep, 0 padding), timestep [timestep_batch] (the model dtype; 1
//   or batch_size entries) -> out_hidden_states [batch_size, out_channels, height, width]
#include <optional>

#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/patch_embed.h"
#include "blocks/pixart_embeddings.h"
#include "blocks/sana_block.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct SanaSpec {
  int64_t patch, in_channels, out_channels, layers, heads, head_dim, dim, cross_heads, cross_head_dim, cross_dim;
  int64_t caption_channels, base_size, ff_hidden;
  std::optional<double> interpolation_scale;
  bool attention_bias, affine;
  float eps;
  DataType dtype;
};

SanaSpec sana_spec(const HfConfig& c, DataType dtype) {
  SanaSpec s;
  s.dtype = dtype;
  const std::string what = "SanaTransformer2DModel without guidance_embeds and qk_norm";
  diffusers_require(c, "guidance_embeds", false, what);
  diffusers_require(c, "qk_norm", nullptr, what);
  s.heads = diffusers_int(c, "num_attention_heads", 1, kMaxHeads);
  s.head_dim = diffusers_int(c, "attention_head_dim", 1, kMaxHeadDim);
  s.dim = s.heads * s.head_dim;
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxHiddenSize);
  s.out_channels = c.has("out_channels") ? diffusers_int(c, "out_channels", 1, kMaxHiddenSize) : s.in_channels;
  s.layers = diffusers_int(c, "num_layers", 1, kMaxLayers);
  s.patch = diffusers_int(c, "patch_size", 1, kMaxSmallSize);
  s.base_size = diffusers_int(c, "sample_size", s.patch, kMaxSmallSize) / s.patch;
  if (c.has("interpolation_scale")) {
    s.interpolation_scale = c.get_float("interpolation_scale");
    if (!(*s.interpolation_scale > 0.0)) c.fail("interpolation_scale", "expected a positive value");
  }
  if (s.dim > kMaxHiddenSize || (s.interpolation_scale && s.dim % 4 != 0))
    c.fail("num_attention_heads", "num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                      " must be at most " + std::to_string(kMaxHiddenSize) +
                                      " (and a multiple of 4 for the 2-D sincos positions of an interpolation_scale)");
  if (!c.has("cross_attention_dim")) c.fail("cross_attention_dim", "null is not supported (Sana's cross-attention)");
  s.cross_dim = diffusers_int(c, "cross_attention_dim", 1, kMaxHiddenSize);
  if (s.cross_dim != s.dim)
    c.fail("cross_attention_dim", "expected num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                      " (the caption projection's width)");
  s.cross_heads = diffusers_int(c, "num_cross_attention_heads", 1, kMaxHeads);
  s.cross_head_dim = diffusers_int(c, "cross_attention_head_dim", 1, kMaxHeadDim);
  s.caption_channels = diffusers_int(c, "caption_channels", 1, kMaxHiddenSize);
  const double ratio = c.get_float("mlp_ratio");
  if (!(ratio > 0.0 && ratio * static_cast<double>(s.dim) <= static_cast<double>(kMaxHiddenSize)))
    c.fail("mlp_ratio", "expected a positive ratio with int(mlp_ratio * width) at most " + std::to_string(kMaxHiddenSize));
  s.ff_hidden = static_cast<int64_t>(ratio * static_cast<double>(s.dim));
  if (s.ff_hidden < 1) c.fail("mlp_ratio", "int(mlp_ratio * width) is 0");
  s.attention_bias = c.get_bool("attention_bias");
  s.affine = c.get_bool("norm_elementwise_affine");
  s.eps = static_cast<float>(c.get_float("norm_eps"));
  return s;
}

class SanaTransformer2DModel : public OneGraphComponent {
 public:
  SanaTransformer2DModel(const HfConfig& c, DataType dtype) : OneGraphComponent("diffusion-denoiser", GraphPath{"transformer", hf_graph::transformer}), s_(sana_spec(c, dtype)) {
    patch_embed = child<PatchEmbed>("patch_embed", PatchEmbedOptions{.in_channels = s_.in_channels, .dim = s_.dim,
                                                                     .patch_size = s_.patch, .base_size = s_.base_size,
                                                                     .interpolation_scale = s_.interpolation_scale,
                                                                     .dtype = dtype});
    time_embed = child<AdaLayerNormSingle>("time_embed", AdaLayerNormSingleOptions{.dim = s_.dim, .dtype = dtype});
    caption_projection = child<PixArtTextProjection>("caption_projection", s_.caption_channels, s_.dim, dtype);
    caption_norm = child<RMSNorm>("caption_norm", NormOptions{.dim = s_.dim, .eps = 1e-5f, .dtype = dtype,
                                                              .kind = NormKind::RMSNorm});
    for (int64_t i = 0; i < s_.layers; ++i)
      blocks.push_back(child<SanaTransformerBlock>(
          "transformer_blocks." + std::to_string(i),
          SanaTransformerBlockOptions{.dim = s_.dim, .heads = s_.heads, .head_dim = s_.head_dim,
                                      .cross_heads = s_.cross_heads, .cross_head_dim = s_.cross_head_dim,
                                      .cross_attention_dim = s_.cross_dim, .ff_hidden = s_.ff_hidden,
                                      .attention_bias = s_.attention_bias, .norm_elementwise_affine = s_.affine,
                                      .norm_eps = s_.eps, .dtype = dtype}));
    scale_shift_table = param("scale_shift_table", {2, s_.dim}, dtype);
    norm_out = child<LayerNorm>("norm_out.norm", NormOptions{.dim = s_.dim, .eps = 1e-6f, .dtype = dtype,
                                                             .kind = NormKind::LayerNorm, .elementwise_affine = false});
    proj_out = child<Linear>("proj_out", LinearOptions{s_.dim, s_.patch * s_.patch * s_.out_channels, true, dtype});
  }

  PatchEmbed* patch_embed;
  AdaLayerNormSingle* time_embed;
  PixArtTextProjection* caption_projection;
  RMSNorm* caption_norm;
  std::vector<SanaTransformerBlock*> blocks;
  Parameter* scale_shift_table;
  LayerNorm* norm_out;
  Linear* proj_out;

 private:
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const DataType dt = s_.dtype;
    Value* hidden = b.input("hidden_states", dt, {"batch_size", s_.in_channels, "height", "width"});
    Value* states = b.input("encoder_hidden_states", dt, {"batch_size", "sequence_length", s_.caption_channels});
    Value* mask = b.input("encoder_attention_mask", DataType::INT64, {"batch_size", "sequence_length"});
    Value* timestep = b.input("timestep", dt, {"timestep_batch"});
    auto [x, grid] = patch_embed->forward(op, hidden);
    const AdaLayerNormSingleOutput t =
        time_embed->forward(op, op.Expand(timestep, op.Shape(hidden, {.end = 1})), nullptr, nullptr);
    Value* ctx = caption_norm->forward(op, caption_projection->forward(op, states));
    Value* bias = encoder_attention_bias(op, mask, x, dt);
    for (const SanaTransformerBlock* block : blocks) x = block->forward(op, x, ctx, bias, t.timestep, grid);
    x = modulated_out_norm(op, *norm_out, x, scale_shift_table->value(op), t.embedded);
    x = unpatchify(op, proj_out->forward(op, x), grid, s_.patch, s_.out_channels);
    b.output(x, "out_hidden_states", {"batch_size", s_.out_channels, "height", "width"});
    return model;
  }
  SanaSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_sana_transformer(const HfConfig& c, DataType dtype) {
  return std::make_unique<SanaTransformer2DModel>(c, dtype);
}

}  // namespace mobius
