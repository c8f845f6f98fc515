// WanTransformer3DModel (diffusers/models/transformers/transformer_wan.py): the video denoiser of
// Wan 2.1 / 2.2 (text-to-video; image-to-video with image_dim), a DiT over 3-D latent patches:
//   x = patch_embedding(hidden_states) (Conv3d, kernel = stride = patch_size (t, h, w)) flattened
//       to [batch, f * h * w, dim], dim = num_attention_heads * attention_head_dim
//   rope: WanRotaryPosEmbed, theta 10000, the head cut into t_dim = head - 2 * (2 * (head // 6))
//       frequencies of the frame index, then h_dim = w_dim = 2 * (head // 6) of the row and column
//       of the patch grid (the interleaved pairs of get_1d_rotary_pos_embed repeat_interleave_real;
//       blocks/joint_attention.h axes_rope_tables over the grid's (frame, row, column) ids)
//   condition_embedder: temb = time_embedder(Timesteps(freq_dim, flip_sin_to_cos, shift 0)(timestep))
//       (TimestepEmbedding, silu); timestep_proj = time_proj(silu(temb)) as [batch, 6, dim];
//       ctx = text_embedder(encoder_hidden_states) (PixArtAlphaTextProjection, gelu_tanh);
//       with image_dim: img = image_embedder(encoder_hidden_states_image) (WanImageEmbedding:
//       norm2(ff(norm1(x))), LayerNorm eps 1e-5 with affine, FeedForward mult 1, GELU (erf))
//   num_layers WanTransformerBlock: shift, scale, gate, c_shift, c_scale, c_gate = scale_shift_table
//       [1, 6, dim] + timestep_proj;
//       x += gate * attn1(norm1(x) * (1 + scale) + shift)   (self-attention, RoPE on q and k)
//       x += attn2(norm2(x), ctx[, img])   (norm2: LayerNorm with affine when cross_attn_norm, else
//                                           none)
//       x += c_gate * ffn(norm3(x) * (1 + c_scale) + c_shift)   (FeedForward ffn_dim, GELU tanh)
//     norm1 / norm3 LayerNorms without affine, every norm eps as config.json gives it.
//   WanAttention: q = norm_q(to_q(x)), k = norm_k(to_k(c)), v = to_v(c), the RMSNorms (eps) over
//       the whole projection width (qk_norm "rms_norm_across_heads": diffusers builds them whatever
//       qk_norm says), SDPA with scale head_dim^-0.5; with the image branch (added_kv_proj_dim)
//       plus SDPA(q, norm_added_k(add_k_proj(img)), add_v_proj(img)); to_out.0 of the sum.
//   out = proj_out(norm_out(x) * (1 + scale) + shift), shift, scale = scale_shift_table [1, 2, dim] +
//       temb; unpatchified to [batch, out_channels, f * p_t, h * p_h, w * p_w].
// Not modeled: Wan 2.2 TI2V's per-token timesteps (a 2-D timestep: the graph's is 1-D), Wan FLF2V's
// image position table (pos_embed_seq_len: refused by name), grids longer than rope_max_seq_len on
// an axis (diffusers fails there). The image branch: diffusers cuts the joined context at 512 tokens
// from its end (WanAttnProcessor's hard-coded text length, the pipelines' max_sequence_length), so
// the graph, which takes the text and image tokens apart, is its forward for 512-token prompts.
// Config fields read as WanTransformer3DModel's __init__: image_dim and added_kv_proj_dim both null
// or both set, added_kv_proj_dim = dim (the image embedder's width feeds add_k_proj); out_channels
// null or 0 means in_channels; qk_norm and window_size are not read by diffusers' forward.
// Graph "transformer":
//   hidden_states [batch_size, in_channels, num_frames, height, width] (multiples of patch_size),
//   timestep [timestep_batch] (the model dtype; 1 or batch_size entries),
//   encoder_hidden_states [batch_size, sequence_length, text_dim]
//   [, encoder_hidden_states_image [batch_size, image_sequence_length, image_dim] (image_dim)]
//   -> out_hidden_states [batch_size, out_channels, num_frames, height, width]
#include <array>
#include <cmath>

#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/activation.h"
#include "blocks/conv3d.h"
#include "blocks/joint_attention.h"
#include "blocks/pixart_embeddings.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct WanSpec {
  std::array<int64_t, 3> patch;
  int64_t in_channels, out_channels, heads, head_dim, dim, text_dim, freq_dim, ffn_dim, layers, image_dim;
  bool cross_attn_norm;
  float eps;
  DataType dtype;
};

WanSpec wan_spec(const HfConfig& c, DataType dtype) {
  WanSpec s;
  s.dtype = dtype;
  const std::vector<int64_t> patch = diffusers_int_list(c, "patch_size", 1, kMaxSmallSize);
  if (patch.size() != 3) c.fail("patch_size", "expected 3 entries (frames, height, width), got " +
                                                  std::to_string(patch.size()));
  s.patch = {patch[0], patch[1], patch[2]};
  s.heads = diffusers_int(c, "num_attention_heads", 1, kMaxHeads);
  s.head_dim = diffusers_int(c, "attention_head_dim", 2, kMaxHeadDim);
  if (s.head_dim % 2 != 0)
    c.fail("attention_head_dim", "expected an even size (the frame, row and column RoPE rotate pairs), got " +
                                     std::to_string(s.head_dim));
  s.dim = s.heads * s.head_dim;
  if (s.dim > kMaxHiddenSize)
    c.fail("num_attention_heads", "num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                      " exceeds " + std::to_string(kMaxHiddenSize));
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxHiddenSize);
  const int64_t out = c.has("out_channels") ? diffusers_int(c, "out_channels", 0, kMaxHiddenSize) : 0;
  s.out_channels = out ? out : s.in_channels;
  s.text_dim = diffusers_int(c, "text_dim", 1, kMaxHiddenSize);
  s.freq_dim = diffusers_int(c, "freq_dim", 2, kMaxHiddenSize);
  s.ffn_dim = diffusers_int(c, "ffn_dim", 1, kMaxHiddenSize);
  s.layers = diffusers_int(c, "num_layers", 0, kMaxLayers);
  s.cross_attn_norm = c.get_bool("cross_attn_norm");
  s.eps = static_cast<float>(c.get_float("eps"));
  if (!(s.eps > 0.0f)) c.fail("eps", "expected a positive value");
  diffusers_require(c, "pos_embed_seq_len", nullptr, "WanTransformer3DModel without the FLF2V image position table");
  s.image_dim = c.has("image_dim") ? diffusers_int(c, "image_dim", 1, kMaxHiddenSize) : 0;
  const int64_t added = c.has("added_kv_proj_dim") ? diffusers_int(c, "added_kv_proj_dim", 1, kMaxHiddenSize) : 0;
  if ((added > 0) != (s.image_dim > 0))
    c.fail("added_kv_proj_dim", "expected it set exactly when image_dim is (the image branch), got " +
                                    std::to_string(added) + " with image_dim " + std::to_string(s.image_dim));
  if (added > 0 && added != s.dim)
    c.fail("added_kv_proj_dim", "expected num_attention_heads * attention_head_dim = " + std::to_string(s.dim) +
                                    " (the image embedder's width), got " + std::to_string(added));
  return s;
}

// WanAttention with WanAttnProcessor: self-attention (rope), or cross-attention to the text
// context plus, with the image branch, to the image context.
class WanAttention : public Module {
 public:
  WanAttention(const WanSpec& s, bool image_branch) : s_(s) {
    const NormOptions norm{.dim = s.dim, .eps = s.eps, .dtype = s.dtype};
    to_q = child<Linear>("to_q", LinearOptions{s.dim, s.dim, true, s.dtype});
    to_k = child<Linear>("to_k", LinearOptions{s.dim, s.dim, true, s.dtype});
    to_v = child<Linear>("to_v", LinearOptions{s.dim, s.dim, true, s.dtype});
    to_out = child<Linear>("to_out.0", LinearOptions{s.dim, s.dim, true, s.dtype});
    norm_q = child<RMSNorm>("norm_q", norm);
    norm_k = child<RMSNorm>("norm_k", norm);
    if (image_branch) {
      add_k_proj = child<Linear>("add_k_proj", LinearOptions{s.dim, s.dim, true, s.dtype});
      add_v_proj = child<Linear>("add_v_proj", LinearOptions{s.dim, s.dim, true, s.dtype});
      norm_added_k = child<RMSNorm>("norm_added_k", norm);
    }
  }
  // x [batch, seq, dim]; context [batch, len, dim] (null: self-attention); image [batch, n, dim] or
  // null; rope: the grid's tables (self-attention) or null -> [batch, seq, dim].
  Value* forward(Ops& op, Value* x, Value* context, Value* image, const RopeTables* rope) const {
    auto sc = enter(op);
    auto heads = [&](Value* t) {  // [batch, seq, dim] -> [batch, heads, seq, head_dim]
      return op.Transpose(op.Reshape(t, {0, 0, s_.heads, s_.head_dim}), {.perm = {0, 2, 1, 3}});
    };
    Value* from = context ? context : x;
    Value* q = heads(norm_q->forward(op, to_q->forward(op, x)));
    Value* k = heads(norm_k->forward(op, to_k->forward(op, from)));
    if (rope) {
      q = apply_rope(op, q, *rope, true);
      k = apply_rope(op, k, *rope, true);
    }
    Value* y = sdpa(op, q, k, heads(to_v->forward(op, from)));
    if (image && add_k_proj)
      y = op.Add(y, sdpa(op, q, heads(norm_added_k->forward(op, add_k_proj->forward(op, image))),
                         heads(add_v_proj->forward(op, image))));
    return to_out->forward(op, op.Reshape(op.Transpose(y, {.perm = {0, 2, 1, 3}}), {0, 0, s_.dim}));
  }
  Linear *to_q, *to_k, *to_v, *to_out, *add_k_proj = nullptr, *add_v_proj = nullptr;
  RMSNorm *norm_q, *norm_k, *norm_added_k = nullptr;

 private:
  Value* sdpa(Ops& op, Value* q, Value* k, Value* v) const {
    Value* y = op.Attention(q, k, v, nullptr, nullptr, nullptr,
                            {.scale = 1.0f / std::sqrt(static_cast<float>(s_.head_dim))})
                   .y;
    op.builder().producer(y).tags = {.num_heads = s_.heads, .kv_num_heads = s_.heads, .head_size = s_.head_dim};
    return y;
  }
  WanSpec s_;
};

// LayerNorm(dim, eps) of the blocks: affine or not.
NormOptions wan_layer_norm(const WanSpec& s, int64_t dim, float eps, bool affine) {
  return {.dim = dim, .eps = eps, .dtype = s.dtype, .kind = NormKind::LayerNorm, .elementwise_affine = affine};
}

class WanTransformerBlock : public Module {
 public:
  WanTransformerBlock(const WanSpec& s, bool image_branch) : s_(s) {
    norm1 = child<LayerNorm>("norm1", wan_layer_norm(s, s.dim, s.eps, false));
    attn1 = child<WanAttention>("attn1", s, false);
    attn2 = child<WanAttention>("attn2", s, image_branch);
    if (s.cross_attn_norm) norm2 = child<LayerNorm>("norm2", wan_layer_norm(s, s.dim, s.eps, true));
    ffn_proj = child<Linear>("ffn.net.0.proj", LinearOptions{s.dim, s.ffn_dim, true, s.dtype});
    ffn_out = child<Linear>("ffn.net.2", LinearOptions{s.ffn_dim, s.dim, true, s.dtype});
    norm3 = child<LayerNorm>("norm3", wan_layer_norm(s, s.dim, s.eps, false));
    scale_shift_table = param("scale_shift_table", {1, 6, s.dim}, s.dtype);
  }
  // x [batch, seq, dim], ctx [batch, len, dim], image [batch, n, dim] or null, timestep_proj
  // [batch, 6, dim] -> [batch, seq, dim].
  Value* forward(Ops& op, Value* x, Value* ctx, Value* image, Value* timestep_proj, const RopeTables& rope) const {
    auto sc = enter(op);
    // shift, scale, gate of the attention, then of the feed-forward: each [batch, 1, dim]
    const std::vector<Value*> e =
        op.Split(op.Add(scale_shift_table->value(op), timestep_proj), {1, 1, 1, 1, 1, 1}, {.axis = 1});
    auto modulate = [&](const LayerNorm* norm, Value* shift, Value* scale) {
      return op.Add(op.Mul(norm->forward(op, x), op.Add(scale, 1.0)), shift);
    };
    x = op.Add(x, op.Mul(attn1->forward(op, modulate(norm1, e[0], e[1]), nullptr, nullptr, &rope), e[2]));
    x = op.Add(x, attn2->forward(op, norm2 ? norm2->forward(op, x) : x, ctx, image, nullptr));
    Value* ff = ffn_out->forward(op, op.Gelu(ffn_proj->forward(op, modulate(norm3, e[3], e[4])),
                                             {.approximate = "tanh"}));
    return op.Add(x, op.Mul(ff, e[5]));
  }
  LayerNorm *norm1, *norm2 = nullptr, *norm3;
  WanAttention *attn1, *attn2;
  Linear *ffn_proj, *ffn_out;  // ffn.net.0.proj, ffn.net.2
  Parameter* scale_shift_table;  // [1, 6, dim]

 private:
  WanSpec s_;
};

// WanImageEmbedding without a position table: norm2(ff(norm1(x))).
class WanImageEmbedding : public Module {
 public:
  explicit WanImageEmbedding(const WanSpec& s) {
    norm1 = child<LayerNorm>("norm1", wan_layer_norm(s, s.image_dim, 1e-5f, true));
    ff_proj = child<Linear>("ff.net.0.proj", LinearOptions{s.image_dim, s.image_dim, true, s.dtype});
    ff_out = child<Linear>("ff.net.2", LinearOptions{s.image_dim, s.dim, true, s.dtype});
    norm2 = child<LayerNorm>("norm2", wan_layer_norm(s, s.dim, 1e-5f, true));
  }
  // image [batch, n, image_dim] -> [batch, n, dim].
  Value* forward(Ops& op, Value* image) const {
    auto sc = enter(op);
    return norm2->forward(op, ff_out->forward(op, op.Gelu(ff_proj->forward(op, norm1->forward(op, image)))));
  }
  LayerNorm *norm1, *norm2;
  Linear *ff_proj, *ff_out;
};

class WanTransformer3DModel : public OneGraphComponent {
 public:
  WanTransformer3DModel(const HfConfig& c, DataType dtype) : OneGraphComponent("diffusion-denoiser", GraphPath{"transformer", hf_graph::transformer}), s_(wan_spec(c, dtype)) {
    patch_embedding = child<Conv3d>("patch_embedding", Conv3dOptions{.in_channels = s_.in_channels,
                                                                     .out_channels = s_.dim, .kernel = s_.patch,
                                                                     .stride = s_.patch, .dtype = dtype});
    time_embedder = child<TimestepEmbedding>("condition_embedder.time_embedder",
                                             TimestepEmbeddingOptions{.in_channels = s_.freq_dim,
                                                                      .time_embed_dim = s_.dim, .dtype = dtype});
    time_proj = child<Linear>("condition_embedder.time_proj", LinearOptions{s_.dim, 6 * s_.dim, true, dtype});
    text_embedder = child<PixArtTextProjection>("condition_embedder.text_embedder", s_.text_dim, s_.dim, dtype);
    if (s_.image_dim > 0) image_embedder = child<WanImageEmbedding>("condition_embedder.image_embedder", s_);
    for (int64_t i = 0; i < s_.layers; ++i)
      blocks.push_back(child<WanTransformerBlock>("blocks." + std::to_string(i), s_, s_.image_dim > 0));
    norm_out = child<LayerNorm>("norm_out", wan_layer_norm(s_, s_.dim, s_.eps, false));
    const int64_t out_width = s_.out_channels * s_.patch[0] * s_.patch[1] * s_.patch[2];
    proj_out = child<Linear>("proj_out", LinearOptions{s_.dim, out_width, true, dtype});
    scale_shift_table = param("scale_shift_table", {1, 2, s_.dim}, dtype);
  }

  Conv3d* patch_embedding;
  TimestepEmbedding* time_embedder;
  Linear* time_proj;
  PixArtTextProjection* text_embedder;
  WanImageEmbedding* image_embedder = nullptr;
  std::vector<WanTransformerBlock*> blocks;
  LayerNorm* norm_out;
  Linear* proj_out;
  Parameter* scale_shift_table;  // [1, 2, dim]

 private:
  // The RoPE tables of the grid (int64 [3]: patches along frames, rows, columns).
  RopeTables rope(Ops& op, Value* grid, Value* batch) const {
    GraphBuilder& b = op.builder();
    std::vector<Value*> ids;
    for (int64_t a = 0; a < 3; ++a) {
      std::vector<int64_t> shape = {1, 1, 1, 1};
      shape[a] = -1;
      Value* n = op.Squeeze(op.Slice(grid, {a}, {a + 1}, {0}), {0});
      Value* along = op.Reshape(op.Range(b.scalar_i64(0), n, b.scalar_i64(1)), shape);
      ids.push_back(op.Expand(along, op.Concat({grid, b.ints({1})}, {.axis = 0})));
    }
    Value* all = op.Reshape(op.Concat(ids, {.axis = 3}), {-1, 3});  // [f * h * w, 3]
    const int64_t hw = 2 * (s_.head_dim / 6);
    return axes_rope_tables(op, all, {s_.head_dim - 2 * hw, hw, hw}, 10000.0, batch, s_.dtype);
  }
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const DataType dt = s_.dtype;
    Value* hidden = b.input("hidden_states", dt, {"batch_size", s_.in_channels, "num_frames", "height", "width"});
    Value* timestep = b.input("timestep", dt, {"timestep_batch"});
    Value* text = b.input("encoder_hidden_states", dt, {"batch_size", "sequence_length", s_.text_dim});
    Value* image = nullptr;
    if (image_embedder)
      image = image_embedder->forward(
          op, b.input("encoder_hidden_states_image", dt, {"batch_size", "image_sequence_length", s_.image_dim}));
    Value* batch = op.Shape(hidden, {.end = 1});
    const TimestepSinusoidOptions sinusoids{.dim = s_.freq_dim, .dtype = dt};
    Value* temb = time_embedder->forward(op, timestep_sinusoids(op, op.Expand(timestep, batch), sinusoids));
    Value* timestep_proj = op.Reshape(time_proj->forward(op, activation(op, "silu", temb)), {0, 6, s_.dim});
    Value* ctx = text_embedder->forward(op, text);
    Value* patches = patch_embedding->forward(op, hidden);  // [batch, dim, f, h, w]
    Value* grid = op.Shape(patches, {.start = 2});
    Value* x = op.Transpose(op.Reshape(patches, {0, s_.dim, -1}), {.perm = {0, 2, 1}});
    const RopeTables tables = rope(op, grid, batch);
    for (const WanTransformerBlock* block : blocks) x = block->forward(op, x, ctx, image, timestep_proj, tables);
    x = modulated_out_norm(op, *norm_out, x, op.Reshape(scale_shift_table->value(op), {2, s_.dim}), temb);
    x = proj_out->forward(op, x);
    // [batch, f, h, w, p_t, p_h, p_w, c] -> [batch, c, f, p_t, h, p_h, w, p_w] -> [batch, c, F, H, W]
    const std::array<int64_t, 3>& p = s_.patch;
    x = op.Reshape(x, op.Concat({batch, grid, b.ints({p[0], p[1], p[2], s_.out_channels})}, {.axis = 0}));
    x = op.Transpose(x, {.perm = {0, 7, 1, 4, 2, 5, 3, 6}});
    x = op.Reshape(x, op.Concat({batch, b.ints({s_.out_channels}), op.Mul(grid, b.ints({p[0], p[1], p[2]}))},
                                {.axis = 0}));
    b.output(x, "out_hidden_states", {"batch_size", s_.out_channels, "num_frames", "height", "width"});
    return model;
  }
  WanSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_wan_transformer(const HfConfig& c, DataType dtype) {
  return std::make_unique<WanTransformer3DModel>(c, dtype);
}

}  // namespace mobius
