// AutoencoderKLWan (diffusers/models/autoencoders/autoencoder_kl_wan.py): the causal 3-D VAE of
// Wan 2.1 (is_residual false).
//   encode(x): encoder.conv_in (causal 3x3x3) -> down_blocks (per level of dim_mult, num_res_blocks
//     WanResidualBlock, then a WanResample but on the last level: "downsample3d" where
//     temperal_downsample says so, else "downsample2d") -> mid_block (resnets.0, attentions.0,
//     resnets.1) -> norm_out, SiLU, conv_out (2 z_dim) -> quant_conv (causal 1x1x1)
//   decode(z): post_quant_conv (causal 1x1x1) -> decoder.conv_in -> mid_block -> up_blocks[i]
//     (num_res_blocks + 1 WanResidualBlock, then a WanResample but on the last block: "upsample3d"
//     where temperal_downsample reversed says so, else "upsample2d") -> norm_out, SiLU, conv_out ->
//     clamp to [-1, 1]. Widths: base_dim * dim_mult (encoder), decoder_base_dim (null: base_dim) *
//     the reversed dim_mult (decoder; a block after an upsampler takes half its width).
//   WanCausalConv3d: Conv3d with the time padding 2 * p all before the first frame (none after),
//     h and w padded p on both sides.
//   WanRMS_norm: x / max(||x||_2 over channels, 1e-12) * sqrt(channels) * gamma.
//   WanResidualBlock: shortcut(x) (causal 1x1x1 when the widths differ) + conv2(silu(norm2(
//     conv1(silu(norm1(x)))))).
//   WanAttentionBlock: per frame, one head of all the channels over the h * w positions: to_qkv
//     (Conv2d 1x1) of norm(x), SDPA, proj (Conv2d 1x1), plus x.
//   WanResample: upsample (out_dim -> out_dim / 2): upsample3d first doubles every frame but the
//     first by time_conv (causal (3, 1, 1), 2 * out_dim wide, its halves interleaved as the frame
//     pairs); then each frame 2x (nearest) and resample.1 (Conv2d 3x3, padding 1). downsample:
//     resample.1 (Conv2d 3x3 stride 2 after a zero row and column at the end) on each frame; with
//     downsample3d then the first frame and time_conv ((3, 1, 1), stride (2, 1, 1), unpadded) of
//     the clip.
// diffusers encodes the clip in chunks (the first frame, then 4 frames at a time) and decodes one
// latent frame at a time, with a cache of each causal convolution's last two input frames (the
// decoder's first frame skips time_conv, its "Rep" cache; the second runs time_conv with zero
// padding, not the first frame's features; the encoder's downsample3d convolves the previous
// chunk's last frame with the chunk). The graphs take the whole clip at once, the same computation:
// every causal convolution sees the same zero-padded previous two frames, the decoder's time_conv
// runs over frames 1.. as one causal sequence and the encoder's over the clip's stride-2 windows
// (tests/parity/test_diffusion_components.py compares both graphs with diffusers' chunked
// encode / decode on multi-chunk clips). The encoder's input is a clip of 1 + 4 k frames
// (WanPipeline's num_frames; diffusers drops the frames past the last whole chunk).
// Config fields read as AutoencoderKLWan's __init__: base_dim, decoder_base_dim, z_dim, dim_mult,
// num_res_blocks (at least 1: the encoder's levels widen in their residual blocks), attn_scales
// (empty: diffusers' encode fails with the attention blocks it adds, which take no cache),
// temperal_downsample (len(dim_mult) - 1 entries, at most 2 true: diffusers' 4-frame encode chunks),
// in_channels, out_channels; is_residual (Wan 2.2's VAE) and patch_size are refused by name;
// latents_mean / latents_std and the scale factors are the pipeline's.
// Graphs, with AutoencoderKL's names (archs/autoencoder_kl.cpp):
//   "vae_encoder": sample [batch_size, in_channels, frames, height, width]
//                  -> latent_parameters [batch_size, 2 * z_dim, latent_frames, height_latent,
//                  width_latent] (mean, then logvar, on axis 1)
//   "vae_decoder": latent_sample [batch_size, z_dim, latent_frames, height_latent, width_latent]
//                  -> sample [batch_size, out_channels, frames, height, width]
// frames = 1 + (latent_frames - 1) * 2^(temporal resamplings), height = height_latent *
// 2^(len(dim_mult) - 1).
#include <algorithm>
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

struct WanVaeSpec {
  int64_t base_dim, decoder_base_dim, z_dim, num_res_blocks, in_channels, out_channels;
  std::vector<int64_t> dim_mult;
  std::vector<bool> temporal_downsample;
  DataType dtype;
};

WanVaeSpec wan_vae_spec(const HfConfig& c, DataType dtype) {
  WanVaeSpec s;
  s.dtype = dtype;
  diffusers_require(c, "is_residual", false, "the Wan 2.1 VAE (is_residual false)");
  diffusers_require(c, "patch_size", nullptr, "the Wan 2.1 VAE (patch_size null)");
  s.base_dim = diffusers_int(c, "base_dim", 1, kMaxHiddenSize);
  s.decoder_base_dim = c.has("decoder_base_dim") ? diffusers_int(c, "decoder_base_dim", 1, kMaxHiddenSize) : s.base_dim;
  s.z_dim = diffusers_int(c, "z_dim", 1, kMaxHiddenSize);
  s.dim_mult = diffusers_int_list(c, "dim_mult", 1, kMaxSmallSize);
  for (int64_t m : s.dim_mult)
    if (std::max(s.base_dim, s.decoder_base_dim) * m > kMaxHiddenSize || (s.decoder_base_dim * m) % 2 != 0)
      c.fail("dim_mult", "decoder_base_dim * " + std::to_string(m) + " must be even (the upsamplers halve it) and " +
                             "the widths at most " + std::to_string(kMaxHiddenSize));
  s.num_res_blocks = diffusers_int(c, "num_res_blocks", 1, kMaxLayers);  // the encoder's widen each level
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxHiddenSize);
  s.out_channels = diffusers_int(c, "out_channels", 1, kMaxHiddenSize);
  // diffusers' encode passes its caches to the attention blocks attn_scales adds, which take none
  diffusers_require(c, "attn_scales", nlohmann::json::array(),
                    "the Wan 2.1 VAE without attention in the encoder's levels: diffusers' encode fails with it");
  s.temporal_downsample = diffusers_bool_list(c, "temperal_downsample");
  if (s.temporal_downsample.size() != s.dim_mult.size() - 1)
    c.fail("temperal_downsample", "expected " + std::to_string(s.dim_mult.size() - 1) +
                                      " entries (one per resampling of dim_mult), got " +
                                      std::to_string(s.temporal_downsample.size()));
  if (std::count(s.temporal_downsample.begin(), s.temporal_downsample.end(), true) > 2)
    c.fail("temperal_downsample", "more than 2 temporal downsamplings are not supported (diffusers encodes 4 frames "
                                  "at a time, which a third would halve to one)");
  return s;
}

// WanCausalConv3d: kernel k (t, h, w), padding p -> pads 2 p_t before the frames, p_h / p_w around.
Conv3dOptions wan_causal_conv(const WanVaeSpec& s, int64_t in, int64_t out, std::array<int64_t, 3> k,
                              std::array<int64_t, 3> p) {
  return {.in_channels = in, .out_channels = out, .kernel = k, .pads = {2 * p[0], p[1], p[2], 0, p[1], p[2]},
          .dtype = s.dtype};
}

// WanRMS_norm over axis 1; gamma [dim, 1, 1, 1] (5-D input) or [dim, 1, 1] (4-D, `images`).
class WanRMSNorm : public Module {
 public:
  WanRMSNorm(int64_t dim, bool images, DataType dtype) : dim_(dim) {
    gamma = images ? param("gamma", {dim, 1, 1}, dtype) : param("gamma", {dim, 1, 1, 1}, dtype);
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    Value* norm = op.Max(op.Sqrt(op.ReduceSum(op.Mul(x, x), {1})), 1e-12);
    return op.Mul(op.Div(x, norm), op.Mul(gamma->value(op), std::sqrt(static_cast<double>(dim_))));
  }
  Parameter* gamma;

 private:
  int64_t dim_;
};

class WanResidualBlock : public Module {
 public:
  WanResidualBlock(const WanVaeSpec& s, int64_t in, int64_t out) {
    norm1 = child<WanRMSNorm>("norm1", in, false, s.dtype);
    conv1 = child<Conv3d>("conv1", wan_causal_conv(s, in, out, {3, 3, 3}, {1, 1, 1}));
    norm2 = child<WanRMSNorm>("norm2", out, false, s.dtype);
    conv2 = child<Conv3d>("conv2", wan_causal_conv(s, out, out, {3, 3, 3}, {1, 1, 1}));
    if (in != out) conv_shortcut = child<Conv3d>("conv_shortcut", wan_causal_conv(s, in, out, {1, 1, 1}, {0, 0, 0}));
  }
  // x [batch, in, t, h, w] -> [batch, out, t, h, w].
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    Value* h = conv_shortcut ? conv_shortcut->forward(op, x) : x;
    x = conv1->forward(op, activation(op, "silu", norm1->forward(op, x)));
    x = conv2->forward(op, activation(op, "silu", norm2->forward(op, x)));
    return op.Add(x, h);
  }
  WanRMSNorm *norm1, *norm2;
  Conv3d *conv1, *conv2, *conv_shortcut = nullptr;
};

// [batch, c, t, h, w] <-> [batch * t, c, h, w] (the per-frame layout of the 2-D layers).
Value* wan_frames(Ops& op, Value* x) {
  Value* shape = op.Shape(x);
  return op.Reshape(op.Transpose(x, {.perm = {0, 2, 1, 3, 4}}),
                    op.Concat({op.builder().ints({-1}), op.Slice(shape, {1}, {2}, {0}), op.Slice(shape, {3}, {5}, {0})},
                              {.axis = 0}));
}

class WanAttentionBlock : public Module {
 public:
  WanAttentionBlock(const WanVaeSpec& s, int64_t dim) : dim_(dim) {
    norm = child<WanRMSNorm>("norm", dim, true, s.dtype);
    to_qkv = child<Conv2d>("to_qkv", Conv2dOptions{.in_channels = dim, .out_channels = 3 * dim, .kernel_size = 1,
                                                   .dtype = s.dtype});
    proj = child<Conv2d>("proj", Conv2dOptions{.in_channels = dim, .out_channels = dim, .kernel_size = 1,
                                               .dtype = s.dtype});
  }
  // x [batch, dim, t, h, w] -> same shape.
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    Value* frames = wan_frames(op, x);  // [batch * t, dim, h, w]
    Value* qkv = to_qkv->forward(op, norm->forward(op, frames));
    // [bt, 3 dim, h * w] -> [bt, 1, h * w, 3 dim] -> q, k, v [bt, 1, h * w, dim]
    qkv = op.Unsqueeze(op.Transpose(op.Reshape(qkv, {0, 3 * dim_, -1}), {.perm = {0, 2, 1}}), {1});
    const std::vector<Value*> parts = op.Split(qkv, {dim_, dim_, dim_}, {.axis = -1});
    Value* y = op.Attention(parts[0], parts[1], parts[2], nullptr, nullptr, nullptr,
                            {.scale = 1.0f / std::sqrt(static_cast<float>(dim_))})
                   .y;
    op.builder().producer(y).tags = {.num_heads = 1, .kv_num_heads = 1, .head_size = dim_};
    y = op.Reshape(op.Transpose(op.Squeeze(y, {1}), {.perm = {0, 2, 1}}), op.Shape(frames));
    y = proj->forward(op, y);  // [bt, dim, h, w] -> [batch, t, dim, h, w] -> [batch, dim, t, h, w]
    Value* shape = op.Shape(x);
    y = op.Reshape(y, op.Concat({op.Slice(shape, {0}, {1}, {0}), op.Slice(shape, {2}, {3}, {0}),
                                 op.Slice(shape, {1}, {2}, {0}), op.Slice(shape, {3}, {5}, {0})},
                                {.axis = 0}));
    return op.Add(op.Transpose(y, {.perm = {0, 2, 1, 3, 4}}), x);
  }
  WanRMSNorm* norm;
  Conv2d *to_qkv, *proj;

 private:
  int64_t dim_;
};

// WanResample "upsample2d" / "upsample3d" (temporal): dim -> dim / 2 channels, 2x h and w, and with
// temporal 2 t - 1 frames.
class WanUpsample : public Module {
 public:
  WanUpsample(const WanVaeSpec& s, int64_t dim, bool temporal) : dim_(dim) {
    resample = child<Conv2d>("resample.1", Conv2dOptions{.in_channels = dim, .out_channels = dim / 2,
                                                         .kernel_size = 3, .padding = 1, .dtype = s.dtype});
    if (temporal) time_conv = child<Conv3d>("time_conv", wan_causal_conv(s, dim, 2 * dim, {3, 1, 1}, {1, 0, 0}));
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    GraphBuilder& b = op.builder();
    const int64_t last = std::numeric_limits<int64_t>::max();
    if (time_conv) {
      // time_conv over frames 1.. with its zero padding: over x with frame 0 zeroed, the frame pair
      // of its first output dropped (so that a single frame stays a valid convolution and reshape)
      Value* first = op.Slice(x, {0}, {1}, {2});
      Value* rest = op.Concat({op.Mul(first, 0.0), op.Slice(x, {1}, {last}, {2})}, {.axis = 2});
      rest = time_conv->forward(op, rest);  // [batch, 2 dim, t, h, w]
      Value* shape = op.Shape(rest);
      Value* batch = op.Slice(shape, {0}, {1}, {0});
      Value* frames = op.Slice(shape, {2}, {3}, {0});
      Value* hw = op.Slice(shape, {3}, {5}, {0});
      // [batch, 2, dim, t, h, w] -> [batch, dim, t, 2, h, w] -> [batch, dim, 2 t, h, w]
      rest = op.Reshape(rest, op.Concat({batch, b.ints({2, dim_}), frames, hw}, {.axis = 0}));
      rest = op.Transpose(rest, {.perm = {0, 2, 3, 1, 4, 5}});
      rest = op.Reshape(rest, op.Concat({batch, b.ints({dim_}), op.Mul(frames, b.ints({2})), hw}, {.axis = 0}));
      x = op.Concat({first, op.Slice(rest, {2}, {last}, {2})}, {.axis = 2});
    }
    x = op.Resize(x, op.Mul(op.Shape(x), b.ints({1, 1, 1, 2, 2})));  // nearest-exact at scale 2
    // resample.1 on every frame: its [out, in, 3, 3] kernel as [out, in, 1, 3, 3]
    return op.Conv(x, op.Unsqueeze(resample->weight->value(op), {2}), resample->bias->value(op),
                   {.strides = {1, 1, 1}, .pads = {0, 1, 1, 0, 1, 1}});
  }
  Conv2d* resample;
  Conv3d* time_conv = nullptr;

 private:
  int64_t dim_;
};

// WanResample "downsample2d" / "downsample3d" (temporal): resample.1 (Conv2d 3x3, stride 2, after a
// zero row and column at the end) on every frame; with temporal, the first frame as it is and then
// time_conv (Conv3d (3, 1, 1), stride (2, 1, 1), unpadded) over all the frames: 1 + (t - 1) / 2
// frames.
class WanDownsample : public Module {
 public:
  WanDownsample(const WanVaeSpec& s, int64_t dim, bool temporal) {
    resample = child<Conv2d>("resample.1", Conv2dOptions{.in_channels = dim, .out_channels = dim, .kernel_size = 3,
                                                         .stride = 2, .dtype = s.dtype});
    if (temporal)
      time_conv = child<Conv3d>("time_conv", Conv3dOptions{.in_channels = dim, .out_channels = dim, .kernel = {3, 1, 1},
                                                           .stride = {2, 1, 1}, .pads = {0, 0, 0, 2, 0, 0},
                                                           .dtype = s.dtype});
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    x = op.Conv(x, op.Unsqueeze(resample->weight->value(op), {2}), resample->bias->value(op),
                {.strides = {1, 2, 2}, .pads = {0, 0, 0, 0, 1, 1}});
    if (!time_conv) return x;
    // diffusers' chunks: time_conv of [the previous chunk's last frame, this chunk's frames], the
    // first frame alone; the whole clip's unpadded strided windows are the same. Padded by 2 frames
    // at the end (a single frame stays a valid convolution), its first (t - 1) / 2 outputs kept.
    GraphBuilder& b = op.builder();
    Value* frames = op.Slice(op.Shape(x), {2}, {3}, {0});
    Value* keep = op.Div(op.Sub(frames, b.ints({1})), b.ints({2}));
    Value* y = op.Slice(time_conv->forward(op, x), b.ints({0}), keep, b.ints({2}));
    return op.Concat({op.Slice(x, {0}, {1}, {2}), y}, {.axis = 2});
  }
  Conv2d* resample;
  Conv3d* time_conv = nullptr;
};

// WanEncoder3d (is_residual false, no attn_scales): conv_in -> down_blocks (a flat list: per level
// num_res_blocks residual blocks, then a resample but on the last level) -> mid_block -> norm_out,
// SiLU, conv_out (2 z_dim: mean and log-variance).
class WanVaeEncoder : public Module {
 public:
  explicit WanVaeEncoder(const WanVaeSpec& s) {
    std::vector<int64_t> dims = {s.base_dim};
    for (int64_t m : s.dim_mult) dims.push_back(s.base_dim * m);
    conv_in = child<Conv3d>("conv_in", wan_causal_conv(s, s.in_channels, dims[0], {3, 3, 3}, {1, 1, 1}));
    int64_t index = 0;
    const auto name = [&] { return "down_blocks." + std::to_string(index++); };
    for (size_t i = 0; i < s.dim_mult.size(); ++i) {
      int64_t in = dims[i];
      const int64_t out = dims[i + 1];
      std::vector<WanResidualBlock*> resnets;
      for (int64_t r = 0; r < s.num_res_blocks; ++r, in = out)
        resnets.push_back(child<WanResidualBlock>(name(), s, in, out));
      level_resnets.push_back(resnets);
      downsamplers.push_back(i + 1 < s.dim_mult.size()
                                 ? child<WanDownsample>(name(), s, out, s.temporal_downsample[i])
                                 : nullptr);
    }
    const int64_t top = dims.back();
    mid.push_back(child<WanResidualBlock>("mid_block.resnets.0", s, top, top));
    mid_attention = child<WanAttentionBlock>("mid_block.attentions.0", s, top);
    mid.push_back(child<WanResidualBlock>("mid_block.resnets.1", s, top, top));
    norm_out = child<WanRMSNorm>("norm_out", top, false, s.dtype);
    conv_out = child<Conv3d>("conv_out", wan_causal_conv(s, top, 2 * s.z_dim, {3, 3, 3}, {1, 1, 1}));
  }
  // x [batch, in_channels, frames, height, width] -> [batch, 2 z_dim, latent_frames, h, w].
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    x = conv_in->forward(op, x);
    for (size_t i = 0; i < level_resnets.size(); ++i) {
      for (const WanResidualBlock* r : level_resnets[i]) x = r->forward(op, x);
      if (downsamplers[i]) x = downsamplers[i]->forward(op, x);
    }
    x = mid[1]->forward(op, mid_attention->forward(op, mid[0]->forward(op, x)));
    return conv_out->forward(op, activation(op, "silu", norm_out->forward(op, x)));
  }
  Conv3d *conv_in, *conv_out;
  std::vector<std::vector<WanResidualBlock*>> level_resnets;
  std::vector<WanDownsample*> downsamplers;  // null on the last level
  std::vector<WanResidualBlock*> mid;
  WanAttentionBlock* mid_attention;
  WanRMSNorm* norm_out;
};

class WanVaeDecoder : public Module {
 public:
  explicit WanVaeDecoder(const WanVaeSpec& s) {
    std::vector<int64_t> dims = {s.decoder_base_dim * s.dim_mult.back()};
    for (auto it = s.dim_mult.rbegin(); it != s.dim_mult.rend(); ++it) dims.push_back(s.decoder_base_dim * *it);
    conv_in = child<Conv3d>("conv_in", wan_causal_conv(s, s.z_dim, dims[0], {3, 3, 3}, {1, 1, 1}));
    mid.push_back(child<WanResidualBlock>("mid_block.resnets.0", s, dims[0], dims[0]));
    mid_attention = child<WanAttentionBlock>("mid_block.attentions.0", s, dims[0]);
    mid.push_back(child<WanResidualBlock>("mid_block.resnets.1", s, dims[0], dims[0]));
    const size_t n = s.dim_mult.size();
    for (size_t i = 0; i < n; ++i) {
      const std::string prefix = "up_blocks." + std::to_string(i);
      int64_t in = i > 0 ? dims[i] / 2 : dims[i];
      const int64_t out = dims[i + 1];
      std::vector<WanResidualBlock*> resnets;
      for (int64_t r = 0; r <= s.num_res_blocks; ++r, in = out)
        resnets.push_back(child<WanResidualBlock>(prefix + ".resnets." + std::to_string(r), s, in, out));
      up_resnets.push_back(resnets);
      // temperal_downsample reversed
      up_samplers.push_back(i + 1 < n ? child<WanUpsample>(prefix + ".upsamplers.0", s, out,
                                                           s.temporal_downsample[n - 2 - i])
                                      : nullptr);
    }
    norm_out = child<WanRMSNorm>("norm_out", dims.back(), false, s.dtype);
    conv_out = child<Conv3d>("conv_out", wan_causal_conv(s, dims.back(), s.out_channels, {3, 3, 3}, {1, 1, 1}));
  }
  // x [batch, z_dim, t, h, w] (after post_quant_conv) -> [batch, out_channels, frames, height, width].
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    x = mid[0]->forward(op, conv_in->forward(op, x));
    x = mid[1]->forward(op, mid_attention->forward(op, x));
    for (size_t i = 0; i < up_resnets.size(); ++i) {
      for (const WanResidualBlock* r : up_resnets[i]) x = r->forward(op, x);
      if (up_samplers[i]) x = up_samplers[i]->forward(op, x);
    }
    return conv_out->forward(op, activation(op, "silu", norm_out->forward(op, x)));
  }
  Conv3d *conv_in, *conv_out;
  std::vector<WanResidualBlock*> mid;
  WanAttentionBlock* mid_attention;
  std::vector<std::vector<WanResidualBlock*>> up_resnets;
  std::vector<WanUpsample*> up_samplers;  // null on the last block
  WanRMSNorm* norm_out;
};

class AutoencoderKLWan : public VaeArchitecture {
 public:
  AutoencoderKLWan(const HfConfig& c, DataType dtype) : s_(wan_vae_spec(c, dtype)) {
    encoder = child<WanVaeEncoder>("encoder", s_);
    quant_conv = child<Conv3d>("quant_conv", wan_causal_conv(s_, 2 * s_.z_dim, 2 * s_.z_dim, {1, 1, 1}, {0, 0, 0}));
    post_quant_conv = child<Conv3d>("post_quant_conv", wan_causal_conv(s_, s_.z_dim, s_.z_dim, {1, 1, 1}, {0, 0, 0}));
    decoder = child<WanVaeDecoder>("decoder", s_);
  }
  WanVaeEncoder* encoder;
  Conv3d *quant_conv, *post_quant_conv;
  WanVaeDecoder* decoder;

 private:
  Model encoder_graph() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* x = b.input("sample", s_.dtype, {"batch_size", s_.in_channels, "frames", "height", "width"});
    b.output(quant_conv->forward(op, encoder->forward(op, x)), "latent_parameters",
             {"batch_size", 2 * s_.z_dim, "latent_frames", "height_latent", "width_latent"});
    return model;
  }
  Model decoder_graph() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* z = b.input("latent_sample", s_.dtype,
                       {"batch_size", s_.z_dim, "latent_frames", "height_latent", "width_latent"});
    Value* x = decoder->forward(op, post_quant_conv->forward(op, z));
    b.output(op.Min(op.Max(x, -1.0), 1.0), "sample", {"batch_size", s_.out_channels, "frames", "height", "width"});
    return model;
  }
  WanVaeSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_autoencoder_kl_wan(const HfConfig& c, DataType dtype) {
  return std::make_unique<AutoencoderKLWan>(c, dtype);
}

}  // namespace mobius
