// AutoencoderKLCogVideoX (diffusers/models/autoencoders/autoencoder_kl_cogvideox.py, its
// CogVideoXDownsample3D in models/downsampling.py and CogVideoXUpsample3D in models/upsampling.py):
// the causal 3-D VAE of CogVideoX.
//   encode(x): encoder.conv_in (causal 3x3x3) -> down_blocks[i] (layers_per_block
//     CogVideoXResnetBlock3D, then a CogVideoXDownsample3D but on the last block, compress_time for
//     i < log2(temporal_compression_ratio)) -> mid_block (2 resnets) -> norm_out (GroupNorm, eps
//     1e-6), SiLU, conv_out (causal, 2 latent_channels: mean, then logvar)
//   decode(z): decoder.conv_in (causal 3x3x3) -> mid_block (2 resnets) -> up_blocks[i]
//     (layers_per_block + 1 resnets over the reversed block_out_channels, a CogVideoXUpsample3D but
//     on the last block, compress_time for i < log2(temporal_compression_ratio)) -> norm_out
//     (CogVideoXSpatialNorm3D), SiLU, conv_out (causal, out_channels); no clamp.
//   CogVideoXCausalConv3d: the first frame repeated kernel_t - 1 times before the frames, h and w
//     zero-padded (kernel - 1) / 2 on both sides.
//   CogVideoXResnetBlock3D: shortcut(x) (Conv3d 1x1x1 when the widths differ) + conv2(act(norm2(
//     conv1(act(norm1(x)))))), norms GroupNorm(norm_num_groups, norm_eps) in the encoder and
//     CogVideoXSpatialNorm3D in the decoder.
//   CogVideoXSpatialNorm3D(f, zq): GroupNorm(norm_num_groups, eps 1e-6)(f) * conv_y(zq') + conv_b(zq')
//     (1x1x1 convolutions), zq' the decoder's input latent resized (nearest) to f's frames, height
//     and width, its first frame alone when f has an odd number of frames above one.
//   CogVideoXDownsample3D: with compress_time each pair of frames averaged (the first frame alone
//     when the frames are odd); then Conv2d 3x3 stride 2 on every frame after a zero row and column
//     at the end.
//   CogVideoXUpsample3D: nearest 2x of h and w, and with compress_time of the frames (all of them
//     when even, all but the first when odd above one); then Conv2d 3x3 (padding 1) on every frame.
// diffusers encodes the clip in batches of 8 frames (the first batch taking the remainder: 8 + T % 8)
// and decodes 2 latent frames at a time (the first 2 + T % 2), each causal convolution continuing
// from the previous batch's last frames (its conv_cache): over the whole clip that is one causal
// convolution, and the frame pairing of the temporal down/up sampling is the whole clip's (the later
// batches are even). The GroupNorms, though, take their mean and variance over one batch's frames:
// here every GroupNorm's statistics are over the frames of the batch a frame belongs to (the first
// batch's frames at that depth: the frames less the later batches, 8 / 2^k or 2 * 2^k frames each).
// The graphs take the whole clip at once; tests/parity/test_diffusion_components.py compares them
// with diffusers' batched encode / decode on clips of several batches, tiling off (diffusers' tiled
// encode / decode is not built).
// Config fields read as AutoencoderKLCogVideoX's __init__: in_channels, out_channels,
// down_block_types (CogVideoXDownBlock3D) and up_block_types (CogVideoXUpBlock3D), one per
// block_out_channels entry (each a multiple of norm_num_groups), latent_channels, layers_per_block,
// act_fn, norm_eps, norm_num_groups, temporal_compression_ratio (in [1, 16): int(log2) at most 3
// temporal compressions, as diffusers' 8-frame encode batches take), use_quant_conv / use_post_quant_conv refused when true (diffusers sizes them by
// out_channels, not latent_channels); scaling_factor, shift_factor, latents_mean / std are the
// pipeline's.
// Graphs, with AutoencoderKL's names (archs/autoencoder_kl.cpp):
//   "vae_encoder": sample [batch_size, in_channels, frames, height, width]
//                  -> latent_parameters [batch_size, 2 * latent_channels, latent_frames,
//                  height_latent, width_latent] (mean, then logvar, on axis 1)
//   "vae_decoder": latent_sample [batch_size, latent_channels, latent_frames, height_latent,
//                  width_latent] -> sample [batch_size, out_channels, frames, height, width]
// Each temporal downsampling takes T frames to ceil(T / 2), each upsampling T to 2 T - T % 2;
// height = height_latent * 2^(len(block_out_channels) - 1).
#include <cmath>
#include <limits>

#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/activation.h"
#include "blocks/conv2d.h"
#include "blocks/conv3d.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct CogVaeSpec : VaeSizes {
  int64_t time_levels;
  std::string act;
  float eps;  // the resnets' GroupNorm eps (norm_eps); the others' is 1e-6
  DataType dtype;
};

CogVaeSpec cogvideox_vae_spec(const HfConfig& c, DataType dtype) {
  CogVaeSpec s;
  s.dtype = dtype;
  static_cast<VaeSizes&>(s) = read_vae_sizes(c, "CogVideoXDownBlock3D", "CogVideoXUpBlock3D");
  s.act = diffusers_activation(c, "act_fn");
  s.eps = static_cast<float>(c.float_or("norm_eps", 1e-6));
  if (!(s.eps > 0.0f && s.eps < 1.0f)) c.fail("norm_eps", "expected a value in (0, 1)");
  const double ratio = c.float_or("temporal_compression_ratio", 4);
  // diffusers: int(np.log2(ratio)) temporal levels; its 8-frame encode batches halve to 1 frame at 3
  if (!(ratio >= 1.0 && ratio < 16.0))
    c.fail("temporal_compression_ratio", "expected a value in [1, 16) (at most 3 temporal compressions: diffusers "
                                         "encodes 8 frames at a time)");
  s.time_levels = static_cast<int64_t>(std::floor(std::log2(ratio)));
  diffusers_require(c, "use_quant_conv", false, "the CogVideoX VAE without quant_conv");
  diffusers_require(c, "use_post_quant_conv", false, "the CogVideoX VAE without post_quant_conv");
  return s;
}

// The frame batches of diffusers' encode / decode at one depth of the network: a first batch, then
// `later` batches of `length` frames each.
struct CogFrameBatches {
  Value* later;  // int64 scalar
  int64_t length;
};

// The features of one depth: the frame batches and, in the decoder, the latent at their size.
struct CogDepth {
  CogFrameBatches batches;
  Value* zq = nullptr;
};

// A norm of CogVideoXResnetBlock3D: GroupNorm (the encoder's) or CogVideoXSpatialNorm3D (the
// decoder's), over x [batch, channels, t, h, w] at `depth`.
class CogNorm : public Module {
 public:
  virtual Value* normalize(Ops& op, Value* x, const CogDepth& depth) const = 0;
};

// The batches of a clip of `frames` (int64 [1]) frames, `length` at a time (the first taking the
// remainder): max(frames / length, 1) - 1 later batches.
CogFrameBatches cog_frame_batches(Ops& op, Value* frames, int64_t length) {
  GraphBuilder& b = op.builder();
  Value* batches = op.Max(op.Div(op.Squeeze(frames, {0}), b.scalar_i64(length)), b.scalar_i64(1));
  return {op.Sub(batches, b.scalar_i64(1)), length};
}

// The frame count of x [batch, c, t, h, w] as int64 [1].
Value* cog_frames(Ops& op, Value* x) { return op.Slice(op.Shape(x), {2}, {3}, {0}); }

// torch.nn.GroupNorm over each frame batch of x [batch, channels, t, h, w]: a group's mean and
// (biased) variance over its channels, h, w and the frames of the batch, then * weight + bias.
// Computed as per-frame means averaged over the batch's frames (each frame holds as many values)
// by a [t, t] matrix of 1 / (the batch's frames) between the frames of one batch.
class CogGroupNorm : public CogNorm {
 public:
  CogGroupNorm(int64_t channels, int64_t groups, float eps, DataType dtype)
      : channels_(channels), groups_(groups), eps_(eps) {
    weight = param("weight", {channels}, dtype);
    bias = param("bias", {channels}, dtype);
  }
  Value* forward(Ops& op, Value* x, const CogFrameBatches& batches) const {
    auto sc = enter(op);
    GraphBuilder& b = op.builder();
    Value* shape = op.Shape(x);
    Value* frames = op.Squeeze(cog_frames(op, x), {0});
    // the batch of frame j: max(j - first + length, 0) / length, first = t - later * length
    Value* first = op.Sub(frames, op.Mul(batches.later, b.scalar_i64(batches.length)));
    Value* j = op.Range(b.scalar_i64(0), frames, b.scalar_i64(1));
    Value* batch = op.Div(op.Max(op.Add(op.Sub(j, first), b.scalar_i64(batches.length)), b.scalar_i64(0)),
                          b.scalar_i64(batches.length));
    Value* same = op.Cast(op.Equal(op.Unsqueeze(batch, {1}), op.Unsqueeze(batch, {0})), {.to = weight->dtype});
    Value* average = op.Div(same, op.ReduceSum(same, {0}));  // [t, t]: column j averages j's batch
    // [batch, groups, channels / groups, t, h, w]; per-frame statistics [batch, groups, t]
    Value* g = op.Reshape(x, op.Concat({op.Slice(shape, {0}, {1}, {0}), b.ints({groups_, channels_ / groups_}),
                                        op.Slice(shape, {2}, {5}, {0})},
                                       {.axis = 0}));
    const std::vector<int64_t> within = {2, 4, 5};
    Value* mean = op.MatMul(op.ReduceMean(g, within, {.keepdims = 0}), average);
    Value* d = op.Sub(g, op.Unsqueeze(mean, within));
    Value* var = op.MatMul(op.ReduceMean(op.Mul(d, d), within, {.keepdims = 0}), average);
    Value* y = op.Reshape(op.Div(d, op.Unsqueeze(op.Sqrt(op.Add(var, eps_)), within)), shape);
    const std::vector<int64_t> channel_axes = {1, 2, 3};  // [C] -> [C, 1, 1, 1]
    return op.Add(op.Mul(y, op.Unsqueeze(weight->value(op), channel_axes)), op.Unsqueeze(bias->value(op), channel_axes));
  }
  Value* normalize(Ops& op, Value* x, const CogDepth& depth) const override { return forward(op, x, depth.batches); }
  Parameter *weight, *bias;

 private:
  int64_t channels_, groups_;
  float eps_;
};

// CogVideoXCausalConv3d (checkpoint keys conv.weight, conv.bias): kernel k^3 over x with its first
// frame repeated k - 1 times before it.
class CogCausalConv3d : public Module {
 public:
  CogCausalConv3d(const CogVaeSpec& s, int64_t in, int64_t out, int64_t kernel) : kernel_(kernel) {
    const int64_t p = (kernel - 1) / 2;
    conv = child<Conv3d>("conv", Conv3dOptions{.in_channels = in, .out_channels = out, .kernel = {kernel, kernel, kernel},
                                               .pads = {0, p, p, 0, p, p}, .dtype = s.dtype});
  }
  // x [batch, in, t, h, w] -> [batch, out, t, h, w].
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    if (kernel_ > 1) {
      std::vector<Value*> parts(kernel_ - 1, op.Slice(x, {0}, {1}, {2}));
      parts.push_back(x);
      x = op.Concat(parts, {.axis = 2});
    }
    return conv->forward(op, x);
  }
  Conv3d* conv;

 private:
  int64_t kernel_;
};

// The decoder's input latent zq at the size of one depth's features: `repeat` output frames per
// latent frame (the first alone when the latent frames are odd), h and w nearest-resized to
// `like`'s.
Value* cog_latent_at(Ops& op, Value* zq, Value* like, int64_t repeat) {
  GraphBuilder& b = op.builder();
  // frame j <- latent (j + (repeat - 1) * (latent_frames % 2)) / repeat
  Value* latent_frames = op.Squeeze(cog_frames(op, zq), {0});
  Value* odd = op.Sub(latent_frames, op.Mul(op.Div(latent_frames, b.scalar_i64(2)), b.scalar_i64(2)));
  Value* j = op.Range(b.scalar_i64(0), op.Squeeze(cog_frames(op, like), {0}), b.scalar_i64(1));
  Value* source = op.Div(op.Add(j, op.Mul(odd, b.scalar_i64(repeat - 1))), b.scalar_i64(repeat));
  Value* z = op.Gather(zq, source, {.axis = 2});
  return op.Resize(z, op.Concat({op.Slice(op.Shape(z), {0}, {3}, {0}), op.Slice(op.Shape(like), {3}, {5}, {0})},
                                {.axis = 0}));
}

// CogVideoXSpatialNorm3D: norm_layer (GroupNorm, eps 1e-6) of f scaled by conv_y and shifted by
// conv_b (1x1x1) of the latent at f's size.
class CogSpatialNorm : public CogNorm {
 public:
  CogSpatialNorm(const CogVaeSpec& s, int64_t channels) {
    norm_layer = child<CogGroupNorm>("norm_layer", channels, s.groups, 1e-6f, s.dtype);
    conv_y = child<CogCausalConv3d>("conv_y", s, s.latent_channels, channels, 1);
    conv_b = child<CogCausalConv3d>("conv_b", s, s.latent_channels, channels, 1);
  }
  // f [batch, channels, t, h, w], zq [batch, latent_channels, t, h, w] (cog_latent_at).
  Value* forward(Ops& op, Value* f, Value* zq, const CogFrameBatches& batches) const {
    auto sc = enter(op);
    return op.Add(op.Mul(norm_layer->forward(op, f, batches), conv_y->forward(op, zq)), conv_b->forward(op, zq));
  }
  Value* normalize(Ops& op, Value* x, const CogDepth& depth) const override {
    return forward(op, x, depth.zq, depth.batches);
  }
  CogGroupNorm* norm_layer;
  CogCausalConv3d *conv_y, *conv_b;
};

class CogResnetBlock : public Module {
 public:
  CogResnetBlock(const CogVaeSpec& s, int64_t in, int64_t out, bool spatial) : act_(s.act) {
    norm1 = spatial ? static_cast<CogNorm*>(child<CogSpatialNorm>("norm1", s, in))
                    : child<CogGroupNorm>("norm1", in, s.groups, s.eps, s.dtype);
    conv1 = child<CogCausalConv3d>("conv1", s, in, out, 3);
    norm2 = spatial ? static_cast<CogNorm*>(child<CogSpatialNorm>("norm2", s, out))
                    : child<CogGroupNorm>("norm2", out, s.groups, s.eps, s.dtype);
    conv2 = child<CogCausalConv3d>("conv2", s, out, out, 3);
    if (in != out)
      conv_shortcut = child<Conv3d>("conv_shortcut", Conv3dOptions{.in_channels = in, .out_channels = out,
                                                                   .kernel = {1, 1, 1}, .dtype = s.dtype});
  }
  // x [batch, in, t, h, w] -> [batch, out, t, h, w].
  Value* forward(Ops& op, Value* x, const CogDepth& depth) const {
    auto sc = enter(op);
    Value* h = conv1->forward(op, activation(op, act_, norm1->normalize(op, x, depth)));
    h = conv2->forward(op, activation(op, act_, norm2->normalize(op, h, depth)));
    return op.Add(h, conv_shortcut ? conv_shortcut->forward(op, x) : x);
  }
  CogNorm *norm1, *norm2;  // CogGroupNorm (encoder) or CogSpatialNorm (decoder)
  CogCausalConv3d *conv1, *conv2;
  Conv3d* conv_shortcut = nullptr;

 private:
  std::string act_;
};

// x [batch, c, t, h, w] with the odd frame counts' first frame repeated: [x0, x0, x1, ...] (odd t)
// or x (even t), t + t % 2 frames.
Value* cog_even_frames(Ops& op, Value* x) {
  GraphBuilder& b = op.builder();
  Value* frames = op.Squeeze(cog_frames(op, x), {0});
  Value* odd = op.Sub(frames, op.Mul(op.Div(frames, b.scalar_i64(2)), b.scalar_i64(2)));
  return op.Gather(x, op.Max(op.Range(op.Neg(odd), frames, b.scalar_i64(1)), b.scalar_i64(0)), {.axis = 2});
}

// CogVideoXDownsample3D (checkpoint keys conv.weight, conv.bias).
class CogDownsample : public Module {
 public:
  CogDownsample(const CogVaeSpec& s, int64_t channels, bool compress_time) : compress_time(compress_time) {
    conv = child<Conv2d>("conv", Conv2dOptions{.in_channels = channels, .out_channels = channels, .kernel_size = 3,
                                               .stride = 2, .dtype = s.dtype});
  }
  // x [batch, c, t, h, w] -> [batch, c, t or ceil(t / 2), (h - 1) / 2 + 1 ... ].
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    GraphBuilder& b = op.builder();
    if (compress_time) {  // pairs averaged; [x0, x0] is x0
      x = cog_even_frames(op, x);
      Value* shape = op.Shape(x);
      x = op.ReduceMean(op.Reshape(x, op.Concat({op.Slice(shape, {0}, {2}, {0}), b.ints({-1, 2}),
                                                 op.Slice(shape, {3}, {5}, {0})},
                                                {.axis = 0})),
                        {3}, {.keepdims = 0});
    }
    return op.Conv(x, op.Unsqueeze(conv->weight->value(op), {2}), conv->bias->value(op),
                   {.strides = {1, 2, 2}, .pads = {0, 0, 0, 0, 1, 1}});
  }
  Conv2d* conv;
  bool compress_time;
};

// CogVideoXUpsample3D (checkpoint keys conv.weight, conv.bias).
class CogUpsample : public Module {
 public:
  CogUpsample(const CogVaeSpec& s, int64_t channels, bool compress_time) : compress_time(compress_time) {
    conv = child<Conv2d>("conv", Conv2dOptions{.in_channels = channels, .out_channels = channels, .kernel_size = 3,
                                               .padding = 1, .dtype = s.dtype});
  }
  // x [batch, c, t, h, w] -> [batch, c, t or 2 t - t % 2, 2 h, 2 w].
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    GraphBuilder& b = op.builder();
    if (compress_time) {
      // every frame doubled, then the first of the odd counts' [x0, x0] dropped
      Value* frames = op.Squeeze(cog_frames(op, x), {0});
      Value* odd = op.Sub(frames, op.Mul(op.Div(frames, b.scalar_i64(2)), b.scalar_i64(2)));
      x = op.Resize(x, op.Mul(op.Shape(x), b.ints({1, 1, 2, 2, 2})));
      x = op.Slice(x, op.Unsqueeze(odd, {0}), b.ints({std::numeric_limits<int64_t>::max()}), b.ints({2}));
    } else {
      x = op.Resize(x, op.Mul(op.Shape(x), b.ints({1, 1, 1, 2, 2})));
    }
    return op.Conv(x, op.Unsqueeze(conv->weight->value(op), {2}), conv->bias->value(op),
                   {.strides = {1, 1, 1}, .pads = {0, 1, 1, 0, 1, 1}});
  }
  Conv2d* conv;
  bool compress_time;
};

// CogVideoXEncoder3D: x [batch, in_channels, t, h, w] -> [batch, 2 latent_channels, latent t, h, w];
// diffusers' frame batches of 8.
class CogEncoder : public Module {
 public:
  explicit CogEncoder(const CogVaeSpec& s) {
    const std::vector<int64_t>& ch = s.channels;
    conv_in = child<CogCausalConv3d>("conv_in", s, s.in_channels, ch[0], 3);
    for (size_t i = 0; i < ch.size(); ++i) {
      const std::string prefix = "down_blocks." + std::to_string(i);
      std::vector<CogResnetBlock*> resnets;
      for (int64_t r = 0; r < s.layers_per_block; ++r)
        resnets.push_back(child<CogResnetBlock>(prefix + ".resnets." + std::to_string(r), s,
                                                r == 0 ? ch[i > 0 ? i - 1 : 0] : ch[i], ch[i], false));
      block_resnets.push_back(resnets);
      downsamplers.push_back(i + 1 < ch.size() ? child<CogDownsample>(prefix + ".downsamplers.0", s, ch[i],
                                                                       static_cast<int64_t>(i) < s.time_levels)
                                               : nullptr);
    }
    for (int r = 0; r < 2; ++r)
      mid.push_back(child<CogResnetBlock>("mid_block.resnets." + std::to_string(r), s, ch.back(), ch.back(), false));
    norm_out = child<CogGroupNorm>("norm_out", ch.back(), s.groups, 1e-6f, s.dtype);
    conv_out = child<CogCausalConv3d>("conv_out", s, ch.back(), 2 * s.latent_channels, 3);
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    CogDepth depth{cog_frame_batches(op, cog_frames(op, x), 8)};
    x = conv_in->forward(op, x);
    for (size_t i = 0; i < block_resnets.size(); ++i) {
      for (const CogResnetBlock* r : block_resnets[i]) x = r->forward(op, x, depth);
      if (downsamplers[i]) {
        x = downsamplers[i]->forward(op, x);
        if (downsamplers[i]->compress_time) depth.batches.length /= 2;
      }
    }
    for (const CogResnetBlock* r : mid) x = r->forward(op, x, depth);
    return conv_out->forward(op, activation(op, "silu", norm_out->forward(op, x, depth.batches)));
  }
  CogCausalConv3d *conv_in, *conv_out;
  std::vector<std::vector<CogResnetBlock*>> block_resnets;
  std::vector<CogDownsample*> downsamplers;  // null on the last block
  std::vector<CogResnetBlock*> mid;
  CogGroupNorm* norm_out;
};

// CogVideoXDecoder3D: z [batch, latent_channels, t, h, w] -> [batch, out_channels, frames, height,
// width]; diffusers' frame batches of 2 latent frames, z the spatial norms' zq.
class CogDecoder : public Module {
 public:
  explicit CogDecoder(const CogVaeSpec& s) {
    const std::vector<int64_t> ch(s.channels.rbegin(), s.channels.rend());
    conv_in = child<CogCausalConv3d>("conv_in", s, s.latent_channels, ch[0], 3);
    for (int r = 0; r < 2; ++r)
      mid.push_back(child<CogResnetBlock>("mid_block.resnets." + std::to_string(r), s, ch[0], ch[0], true));
    for (size_t i = 0; i < ch.size(); ++i) {
      const std::string prefix = "up_blocks." + std::to_string(i);
      std::vector<CogResnetBlock*> resnets;
      for (int64_t r = 0; r <= s.layers_per_block; ++r)
        resnets.push_back(child<CogResnetBlock>(prefix + ".resnets." + std::to_string(r), s,
                                                r == 0 ? ch[i > 0 ? i - 1 : 0] : ch[i], ch[i], true));
      block_resnets.push_back(resnets);
      upsamplers.push_back(i + 1 < ch.size() ? child<CogUpsample>(prefix + ".upsamplers.0", s, ch[i],
                                                                   static_cast<int64_t>(i) < s.time_levels)
                                             : nullptr);
    }
    norm_out = child<CogSpatialNorm>("norm_out", s, ch.back());
    conv_out = child<CogCausalConv3d>("conv_out", s, ch.back(), s.out_channels, 3);
  }
  Value* forward(Ops& op, Value* z) const {
    auto sc = enter(op);
    CogDepth depth{cog_frame_batches(op, cog_frames(op, z), 2), z};
    int64_t repeat = 1;  // output frames per latent frame at this depth
    Value* x = conv_in->forward(op, z);
    for (const CogResnetBlock* r : mid) x = r->forward(op, x, depth);
    for (size_t i = 0; i < block_resnets.size(); ++i) {
      for (const CogResnetBlock* r : block_resnets[i]) x = r->forward(op, x, depth);
      if (upsamplers[i]) {
        x = upsamplers[i]->forward(op, x);
        if (upsamplers[i]->compress_time) {
          depth.batches.length *= 2;
          repeat *= 2;
        }
        depth.zq = cog_latent_at(op, z, x, repeat);
      }
    }
    x = norm_out->forward(op, x, depth.zq, depth.batches);
    return conv_out->forward(op, activation(op, "silu", x));
  }
  CogCausalConv3d *conv_in, *conv_out;
  std::vector<CogResnetBlock*> mid;
  std::vector<std::vector<CogResnetBlock*>> block_resnets;
  std::vector<CogUpsample*> upsamplers;  // null on the last block
  CogSpatialNorm* norm_out;
};

class AutoencoderKLCogVideoX : public VaeArchitecture {
 public:
  AutoencoderKLCogVideoX(const HfConfig& c, DataType dtype) : s_(cogvideox_vae_spec(c, dtype)) {
    encoder = child<CogEncoder>("encoder", s_);
    decoder = child<CogDecoder>("decoder", s_);
  }
  CogEncoder* encoder;
  CogDecoder* decoder;

 private:
  Model encoder_graph() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* x = b.input("sample", s_.dtype, {"batch_size", s_.in_channels, "frames", "height", "width"});
    b.output(encoder->forward(op, x), "latent_parameters",
             {"batch_size", 2 * s_.latent_channels, "latent_frames", "height_latent", "width_latent"});
    return model;
  }
  Model decoder_graph() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* z = b.input("latent_sample", s_.dtype,
                       {"batch_size", s_.latent_channels, "latent_frames", "height_latent", "width_latent"});
    b.output(decoder->forward(op, z), "sample", {"batch_size", s_.out_channels, "frames", "height", "width"});
    return model;
  }
  CogVaeSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_autoencoder_kl_cogvideox(const HfConfig& c, DataType dtype) {
  return std::make_unique<AutoencoderKLCogVideoX>(c, dtype);
}

}  // namespace mobius
