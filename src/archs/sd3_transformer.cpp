// SD3Transformer2DModel (diffusers/models/transformers/transformer_sd3.py): the MMDiT denoiser of
// Stable Diffusion 3 / 3.5:
//   x = PatchEmbed pos_embed(hidden_states): proj (Conv2d patch_size x patch_size, stride
//       patch_size) flattened to [batch, h * w, dim] plus pos_embed.pos_embed [1, M * M, dim] (the
//       checkpoint's sincos table, M = pos_embed_max_size) cropped to the centred h x w window
//       (cropped_pos_embed: top = (M - h) // 2, left = (M - w) // 2)
//   temb = timestep_embedder(Timesteps(256)(timestep)) + text_embedder(pooled_projections)
//       (CombinedTimestepTextProjEmbeddings, as Flux's without guidance)
//   ctx = context_embedder(encoder_hidden_states)
//   num_layers JointTransformerBlock (blocks/mmdit_block.h: image tokens first in the joint
//     attention, no RoPE, qk_norm "rms_norm" or none; the last block context_pre_only; the
//     dual_attention_layers with SD3.5's attn2)
//   out = unpatchify(proj_out(AdaLayerNormContinuous norm_out(x, temb))) (blocks/patch_embed.h): [batch, h, w, p, p, c]
//     -> [batch, c, h * p, w * p]
// Every LayerNorm without affine parameters, eps 1e-6. caption_projection_dim must equal the
// blocks' width (num_attention_heads * attention_head_dim), as every SD3 checkpoint has it.
// Not modeled: skip_layers, the controlnet residuals and IP-adapter inputs of forward().
// Graph "transformer", with the I/O of Optimum's SD3TransformerOnnxConfig
// (optimum/exporters/onnx/model_configs.py):
//   hidden_states [batch_size, in_channels, height, width], encoder_hidden_states [batch_size,
//   sequence_length, joint_attention_dim], pooled_projections [batch_size, pooled_projection_dim],
//   timestep [timestep_batch] (the model dtype, 0..1000 as StableDiffusion3Pipeline feeds it; 1 or
//   batch_size entries) -> out_hidden_states [batch_size, out_channels, height, width] (height and width
//   multiples of patch_size, at most pos_embed_max_size patches each)
#include <algorithm>
#include <tuple>

#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/conv2d.h"
#include "blocks/mmdit_block.h"
#include "blocks/patch_embed.h"
#include "blocks/timestep_embedding.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct SD3Spec {
  int64_t patch, in_channels, out_channels, layers, heads, head_dim, dim, joint_dim, pooled_dim, max_size;
  std::vector<int64_t> dual;  // dual_attention_layers
  bool qk_norm;
  DataType dtype;
};

SD3Spec sd3_spec(const HfConfig& c, DataType dtype) {
  SD3Spec s;
  s.dtype = dtype;
  s.patch = diffusers_int(c, "patch_size", 1, kMaxSmallSize);
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxHiddenSize);
  s.out_channels = c.has("out_channels") ? diffusers_int(c, "out_channels", 1, kMaxHiddenSize) : s.in_channels;
  s.layers = diffusers_int(c, "num_layers", 1, kMaxLayers);
  s.head_dim = diffusers_int(c, "attention_head_dim", 1, kMaxHeadDim);
  s.heads = diffusers_int(c, "num_attention_heads", 1, kMaxHeads);
  s.dim = s.heads * s.head_dim;
  if (s.dim > kMaxHiddenSize)
    c.fail("num_attention_heads", "num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                      " exceeds " + std::to_string(kMaxHiddenSize));
  s.joint_dim = diffusers_int(c, "joint_attention_dim", 1, kMaxHiddenSize);
  if (diffusers_int(c, "caption_projection_dim", 1, kMaxHiddenSize) != s.dim)
    c.fail("caption_projection_dim", "expected num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                         " (the joint blocks' width)");
  s.pooled_dim = diffusers_int(c, "pooled_projection_dim", 1, kMaxHiddenSize);
  if (!c.has("pos_embed_max_size"))
    c.fail("pos_embed_max_size", "null is not supported (mobius reads the cropped table SD3 checkpoints store)");
  s.max_size = diffusers_int(c, "pos_embed_max_size", 1, kMaxSmallSize);
  if (c.has("dual_attention_layers") && !c.json()["dual_attention_layers"].empty())
    s.dual = diffusers_int_list(c, "dual_attention_layers", 0, s.layers - 1);
  s.qk_norm = c.has("qk_norm");
  if (s.qk_norm) diffusers_require(c, "qk_norm", "rms_norm", "SD3Transformer2DModel with qk_norm null or rms_norm");
  return s;
}

class SD3Transformer2DModel : public OneGraphComponent {
 public:
  SD3Transformer2DModel(const HfConfig& c, DataType dtype) : OneGraphComponent("diffusion-denoiser", GraphPath{"transformer", hf_graph::transformer}), s_(sd3_spec(c, dtype)) {
    proj_in = child<Conv2d>("pos_embed.proj", Conv2dOptions{.in_channels = s_.in_channels, .out_channels = s_.dim,
                                                            .kernel_size = s_.patch, .stride = s_.patch, .dtype = dtype});
    pos_table = param("pos_embed.pos_embed", {1, s_.max_size * s_.max_size, s_.dim}, dtype);
    const TimestepEmbeddingOptions time{.in_channels = 256, .time_embed_dim = s_.dim, .dtype = dtype};
    timestep_embedder = child<TimestepEmbedding>("time_text_embed.timestep_embedder", time);
    text_embedder = child<TimestepEmbedding>("time_text_embed.text_embedder",
                                             TimestepEmbeddingOptions{.in_channels = s_.pooled_dim,
                                                                      .time_embed_dim = s_.dim, .dtype = dtype});
    context_embedder = child<Linear>("context_embedder", LinearOptions{s_.joint_dim, s_.dim, true, dtype});
    for (int64_t i = 0; i < s_.layers; ++i)
      blocks.push_back(child<MMDiTBlock>(
          "transformer_blocks." + std::to_string(i),
          MMDiTBlockOptions{.dim = s_.dim, .heads = s_.heads, .head_dim = s_.head_dim, .qk_norm = s_.qk_norm,
                            .context_first = false, .context_pre_only = i == s_.layers - 1,
                            .dual_attention = std::find(s_.dual.begin(), s_.dual.end(), i) != s_.dual.end(),
                            .dtype = dtype}));
    norm_out = child<AdaLayerNorm>("norm_out", AdaLayerNormOptions{.dim = s_.dim, .conditioning_dim = s_.dim,
                                                                   .chunks = 2, .dtype = dtype});
    proj_out = child<Linear>("proj_out", LinearOptions{s_.dim, s_.patch * s_.patch * s_.out_channels, true, dtype});
  }

  Conv2d* proj_in;
  Parameter* pos_table;
  TimestepEmbedding *timestep_embedder, *text_embedder;
  Linear *context_embedder, *proj_out;
  std::vector<MMDiTBlock*> blocks;
  AdaLayerNorm* norm_out;

 private:
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const DataType dt = s_.dtype;
    const int64_t m = s_.max_size;
    Value* hidden = b.input("hidden_states", dt, {"batch_size", s_.in_channels, "height", "width"});
    Value* states = b.input("encoder_hidden_states", dt, {"batch_size", "sequence_length", s_.joint_dim});
    Value* pooled = b.input("pooled_projections", dt, {"batch_size", s_.pooled_dim});
    Value* timestep = b.input("timestep", dt, {"timestep_batch"});
    Value* batch = op.Shape(hidden, {.end = 1});
    Value* t = timestep_sinusoids(op, op.Expand(timestep, batch), {.dim = 256, .dtype = dt});
    Value* temb = op.Add(timestep_embedder->forward(op, t), text_embedder->forward(op, pooled));
    Value* patches = proj_in->forward(op, hidden);  // [batch, dim, h, w]
    Value* hw = op.Shape(patches, {.start = 2});    // [h, w]
    Value* x = op.Transpose(op.Reshape(patches, {0, s_.dim, -1}), {.perm = {0, 2, 1}});
    // cropped_pos_embed: rows top .. top + h, columns left .. left + w of the M x M table
    Value* start = op.Div(op.Sub(b.ints({m, m}), hw), b.ints({2, 2}));
    Value* table = op.Slice(op.Reshape(pos_table->value(op), {m, m, s_.dim}), start, op.Add(start, hw), b.ints({0, 1}));
    x = op.Add(x, op.Reshape(table, {1, -1, s_.dim}));
    Value* ctx = context_embedder->forward(op, states);
    for (const MMDiTBlock* block : blocks) std::tie(x, ctx) = block->forward(op, x, ctx, temb, nullptr);
    const std::vector<Value*> e = norm_out->chunks(op, temb);  // scale, shift
    x = unpatchify(op, proj_out->forward(op, norm_out->modulate(op, x, e[1], e[0])), hw, s_.patch, s_.out_channels);
    b.output(x, "out_hidden_states", {"batch_size", s_.out_channels, "height", "width"});
    return model;
  }
  SD3Spec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_sd3_transformer(const HfConfig& c, DataType dtype) {
  return std::make_unique<SD3Transformer2DModel>(c, dtype);
}

}  // namespace mobius
