// FluxTransformer2DModel (diffusers/models/transformers/transformer_flux.py): the denoiser of
// Flux.1 (a rectified-flow MMDiT over packed 2x2 latent patches):
//   x = x_embedder(hidden_states), ctx = context_embedder(encoder_hidden_states)
//   temb = timestep_embedder(Timesteps(256)(timestep * 1000))
//          [+ guidance_embedder(Timesteps(256)(guidance * 1000))]  (guidance_embeds)
//          + text_embedder(pooled_projections)          (PixArtAlphaTextProjection, silu)
//   rope = FluxPosEmbed(theta 10000, axes_dims_rope) of concat(txt_ids, img_ids)
//   num_layers FluxTransformerBlock (double stream: blocks/mmdit_block.h, RMSNorm q / k, the text
//     tokens first in the joint attention, RoPE)
//   num_single_layers FluxSingleTransformerBlock over h = concat(ctx, x) (diffusers concatenates and
//     splits in every block; the same values): with AdaLayerNormZeroSingle norm,
//     n = modulate(h); h += gate * proj_out(concat(attn(n) (pre_only), gelu_tanh(proj_mlp(n))))
//     (mlp_ratio 4)
//   out_hidden_states = proj_out(AdaLayerNormContinuous norm_out(h[text_len:], temb))
//     [batch, seq, patch_size^2 * out_channels]
// Every LayerNorm without affine parameters, eps 1e-6; the attention's RMSNorms eps 1e-6.
// Not modeled: the float16 clip of the blocks (only changes values past float16's range), the
// controlnet residuals and IP-adapter inputs of forward().
// Graph "transformer", with the I/O of Optimum's FluxTransformerOnnxConfig
// (optimum/exporters/onnx/model_configs.py, diffusers >= 0.31: 2-D ids):
//   hidden_states [batch_size, packed_height_width, in_channels], encoder_hidden_states
//   [batch_size, sequence_length, joint_attention_dim], pooled_projections [batch_size,
//   pooled_projection_dim], timestep [timestep_batch] (the model dtype; 1 or batch_size entries:
//   FluxPipeline's t.expand(batch)),
//   img_ids [packed_height_width, n_axes], txt_ids [sequence_length, n_axes] (the model dtype, as
//   FluxPipeline makes them), guidance [batch_size] (guidance_embeds only)
//   -> out_hidden_states [batch_size, packed_height_width, patch_size^2 * out_channels]
#include <limits>
#include <tuple>

#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/mmdit_block.h"
#include "blocks/timestep_embedding.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct FluxSpec {
  int64_t in_channels, out_width, layers, single_layers, heads, head_dim, dim, joint_dim, pooled_dim;
  bool guidance;
  std::vector<int64_t> axes;
  DataType dtype;
};

FluxSpec flux_spec(const HfConfig& c, DataType dtype) {
  FluxSpec s;
  s.dtype = dtype;
  const int64_t patch = diffusers_int(c, "patch_size", 1, kMaxSmallSize);
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxHiddenSize);
  // out_channels or in_channels (null or 0: in_channels)
  const int64_t out = c.has("out_channels") ? diffusers_int(c, "out_channels", 0, kMaxHiddenSize) : 0;
  s.out_width = patch * patch * (out ? out : s.in_channels);
  s.layers = diffusers_int(c, "num_layers", 0, kMaxLayers);
  s.single_layers = diffusers_int(c, "num_single_layers", 0, kMaxLayers);
  s.head_dim = diffusers_int(c, "attention_head_dim", 2, kMaxHeadDim);
  s.heads = diffusers_int(c, "num_attention_heads", 1, kMaxHeads);
  s.dim = s.heads * s.head_dim;
  if (s.dim > kMaxHiddenSize)
    c.fail("num_attention_heads", "num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                      " exceeds " + std::to_string(kMaxHiddenSize));
  s.joint_dim = diffusers_int(c, "joint_attention_dim", 1, kMaxHiddenSize);
  s.pooled_dim = diffusers_int(c, "pooled_projection_dim", 1, kMaxHiddenSize);
  s.guidance = c.bool_or("guidance_embeds", false);
  s.axes = diffusers_int_list(c, "axes_dims_rope", 2, kMaxHeadDim);
  int64_t sum = 0;
  for (int64_t d : s.axes) {
    if (d % 2 != 0) c.fail("axes_dims_rope", "expected even sizes (each axis rotates pairs), got " + std::to_string(d));
    sum += d;
  }
  if (sum != s.head_dim)
    c.fail("axes_dims_rope", "the sizes sum to " + std::to_string(sum) + ", expected attention_head_dim " +
                                 std::to_string(s.head_dim));
  return s;
}

JointAttentionOptions flux_attention(const FluxSpec& s) {
  return {.dim = s.dim, .heads = s.heads, .head_dim = s.head_dim, .pre_only = true, .dtype = s.dtype};
}

// FluxSingleTransformerBlock: the single-stream block over the joined tokens.
class FluxSingleTransformerBlock : public Module {
 public:
  explicit FluxSingleTransformerBlock(const FluxSpec& s) {
    norm = child<AdaLayerNorm>("norm", AdaLayerNormOptions{.dim = s.dim, .conditioning_dim = s.dim, .chunks = 3,
                                                           .dtype = s.dtype});
    proj_mlp = child<Linear>("proj_mlp", LinearOptions{s.dim, 4 * s.dim, true, s.dtype});
    proj_out = child<Linear>("proj_out", LinearOptions{5 * s.dim, s.dim, true, s.dtype});
    attn = child<JointAttention>("attn", flux_attention(s));
  }
  Value* forward(Ops& op, Value* h, Value* temb, const RopeTables& rope) const {
    auto sc = enter(op);
    const std::vector<Value*> e = norm->chunks(op, temb);  // shift, scale, gate
    Value* n = norm->modulate(op, h, e[0], e[1]);
    Value* mlp = op.Gelu(proj_mlp->forward(op, n), {.approximate = "tanh"});
    Value* joined = op.Concat({attn->forward(op, n, nullptr, &rope).x, mlp}, {.axis = 2});
    return op.Add(h, op.Mul(e[2], proj_out->forward(op, joined)));
  }
  AdaLayerNorm* norm;
  Linear *proj_mlp, *proj_out;
  JointAttention* attn;
};

class FluxTransformer2DModel : public OneGraphComponent {
 public:
  FluxTransformer2DModel(const HfConfig& c, DataType dtype) : OneGraphComponent("diffusion-denoiser", GraphPath{"transformer", hf_graph::transformer}), s_(flux_spec(c, dtype)) {
    const TimestepEmbeddingOptions time{.in_channels = 256, .time_embed_dim = s_.dim, .dtype = dtype};
    timestep_embedder = child<TimestepEmbedding>("time_text_embed.timestep_embedder", time);
    if (s_.guidance) guidance_embedder = child<TimestepEmbedding>("time_text_embed.guidance_embedder", time);
    // PixArtAlphaTextProjection(act_fn "silu"): linear_1, silu, linear_2, as TimestepEmbedding
    text_embedder = child<TimestepEmbedding>("time_text_embed.text_embedder",
                                             TimestepEmbeddingOptions{.in_channels = s_.pooled_dim,
                                                                      .time_embed_dim = s_.dim, .dtype = dtype});
    context_embedder = child<Linear>("context_embedder", LinearOptions{s_.joint_dim, s_.dim, true, dtype});
    x_embedder = child<Linear>("x_embedder", LinearOptions{s_.in_channels, s_.dim, true, dtype});
    for (int64_t i = 0; i < s_.layers; ++i)
      blocks.push_back(child<MMDiTBlock>("transformer_blocks." + std::to_string(i),
                                         MMDiTBlockOptions{.dim = s_.dim, .heads = s_.heads, .head_dim = s_.head_dim,
                                                           .dtype = dtype}));
    for (int64_t i = 0; i < s_.single_layers; ++i)
      single_blocks.push_back(child<FluxSingleTransformerBlock>("single_transformer_blocks." + std::to_string(i), s_));
    norm_out = child<AdaLayerNorm>("norm_out", AdaLayerNormOptions{.dim = s_.dim, .conditioning_dim = s_.dim,
                                                                   .chunks = 2, .dtype = dtype});
    proj_out = child<Linear>("proj_out", LinearOptions{s_.dim, s_.out_width, true, dtype});
  }

  TimestepEmbedding *timestep_embedder, *guidance_embedder = nullptr, *text_embedder;
  Linear *context_embedder, *x_embedder, *proj_out;
  std::vector<MMDiTBlock*> blocks;
  std::vector<FluxSingleTransformerBlock*> single_blocks;
  AdaLayerNorm* norm_out;

 private:
  // Timesteps(256, flip_sin_to_cos, shift 0) of t * 1000, through `embedder`.
  Value* time_embedding(Ops& op, const TimestepEmbedding* embedder, Value* t) const {
    return embedder->forward(op, timestep_sinusoids(op, op.Mul(t, 1000.0), {.dim = 256, .dtype = s_.dtype}));
  }
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const DataType dt = s_.dtype;
    const int64_t n_axes = static_cast<int64_t>(s_.axes.size());
    Value* hidden = b.input("hidden_states", dt, {"batch_size", "packed_height_width", s_.in_channels});
    Value* states = b.input("encoder_hidden_states", dt, {"batch_size", "sequence_length", s_.joint_dim});
    Value* pooled = b.input("pooled_projections", dt, {"batch_size", s_.pooled_dim});
    Value* timestep = b.input("timestep", dt, {"timestep_batch"});
    Value* img_ids = b.input("img_ids", dt, {"packed_height_width", n_axes});
    Value* txt_ids = b.input("txt_ids", dt, {"sequence_length", n_axes});
    Value* batch = op.Shape(hidden, {.end = 1});
    Value* temb = time_embedding(op, timestep_embedder, op.Expand(timestep, batch));
    if (guidance_embedder)
      temb = op.Add(temb, time_embedding(op, guidance_embedder, b.input("guidance", dt, {"batch_size"})));
    temb = op.Add(temb, text_embedder->forward(op, pooled));
    Value* x = x_embedder->forward(op, hidden);
    Value* ctx = context_embedder->forward(op, states);
    const RopeTables rope = axes_rope_tables(op, op.Concat({txt_ids, img_ids}, {.axis = 0}), s_.axes, 10000.0,
                                             batch, dt);
    for (const MMDiTBlock* block : blocks) std::tie(x, ctx) = block->forward(op, x, ctx, temb, &rope);
    Value* h = op.Concat({ctx, x}, {.axis = 1});
    for (const FluxSingleTransformerBlock* block : single_blocks) h = block->forward(op, h, temb, rope);
    x = op.Slice(h, op.Shape(states, {.start = 1, .end = 2}), b.ints({std::numeric_limits<int64_t>::max()}),
                 b.ints({1}));
    const std::vector<Value*> e = norm_out->chunks(op, temb);  // scale, shift
    x = proj_out->forward(op, norm_out->modulate(op, x, e[1], e[0]));
    b.output(x, "out_hidden_states", {"batch_size", "packed_height_width", s_.out_width});
    return model;
  }
  FluxSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_flux_transformer(const HfConfig& c, DataType dtype) {
  return std::make_unique<FluxTransformer2DModel>(c, dtype);
}

}  // namespace mobius
