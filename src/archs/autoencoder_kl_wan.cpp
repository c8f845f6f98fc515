// AutoencoderKLWan (diffusers/models/autoencoders/autoencoder_kl_wan.py): the causal 3-D VAE of
// Wan 2.1, its decoder (the encoder is not built yet: its tensors are reported unused).
//   decode(z): post_quant_conv (causal 1x1x1) -> decoder.conv_in (causal 3x3x3) -> mid_block
//     (resnets.0, attentions.0, resnets.1) -> up_blocks[i] (num_res_blocks + 1 WanResidualBlock,
//     then a WanResample but on the last block: "upsample3d" where temperal_downsample reversed says
//     so, else "upsample2d") -> norm_out, SiLU, conv_out (causal 3x3x3) -> clamp to [-1, 1].
//   WanCausalConv3d: Conv3d with the time padding 2 * p all before the first frame (none after),
//     h and w padded p on both sides.
//   WanRMS_norm: x / max(||x||_2 over channels, 1e-12) * sqrt(channels) * gamma.
//   WanResidualBlock: shortcut(x) (causal 1x1x1 when the widths differ) + conv2(silu(norm2(
//     conv1(silu(norm1(x)))))).
//   WanAttentionBlock: per frame, one head of all the channels over the h * w positions: to_qkv
//     (Conv2d 1x1) of norm(x), SDPA, proj (Conv2d 1x1), plus x.
//   WanResample (out_dim -> out_dim / 2): upsample3d first doubles every frame but the first by
//     time_conv (causal (3, 1, 1), 2 * out_dim wide, its halves interleaved as the frame pairs);
//     then both modes upsample each frame 2x (nearest) and apply resample.1 (Conv2d 3x3, padding 1).
// diffusers decodes one latent frame at a time with a cache of each causal convolution's last two
// input frames (the first frame skips time_conv: its "Rep" cache; the second runs time_conv with
// zero padding, not the first frame's features). The graph takes the whole clip at once, which is
// the same computation: every causal convolution sees the same zero-padded previous two frames, and
// time_conv runs over frames 1.. as one causal sequence (tests/parity/test_diffusion_components.py
// compares the graph with diffusers' chunked decode on a multi-frame latent).
// Config fields read as AutoencoderKLWan's __init__: decoder_base_dim (null: base_dim), z_dim,
// dim_mult, num_res_blocks, temperal_downsample (len(dim_mult) - 1 entries), out_channels;
// is_residual (Wan 2.2's VAE) and patch_size are refused by name; latents_mean / latents_std and
// the scale factors are the pipeline's.
// Graph "vae_decoder": latent_sample [batch_size, z_dim, latent_frames, height_latent, width_latent]
//   -> sample [batch_size, out_channels, frames, height, width], frames = 1 + (latent_frames - 1) *
//   2^(temporal upsamplings), height = height_latent * 2^(len(dim_mult) - 1).
#include <cmath>
#include <limits>

#include "archs/diffusers_config.h"
#include "blocks/activation.h"
#include "blocks/conv2d.h"
#include "blocks/conv3d.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct WanVaeSpec {
  int64_t base_dim, z_dim, num_res_blocks, out_channels;
  std::vector<int64_t> dim_mult;
  std::vector<bool> temporal_upsample;  // temperal_downsample reversed
  DataType dtype;
};

WanVaeSpec wan_vae_spec(const HfConfig& c, DataType dtype) {
  WanVaeSpec s;
  s.dtype = dtype;
  diffusers_require(c, "is_residual", false, "the Wan 2.1 VAE (is_residual false)");
  diffusers_require(c, "patch_size", nullptr, "the Wan 2.1 VAE (patch_size null)");
  s.base_dim = c.has("decoder_base_dim") ? diffusers_int(c, "decoder_base_dim", 1, kMaxHiddenSize)
                                         : diffusers_int(c, "base_dim", 1, kMaxHiddenSize);
  s.z_dim = diffusers_int(c, "z_dim", 1, kMaxHiddenSize);
  s.dim_mult = diffusers_int_list(c, "dim_mult", 1, kMaxSmallSize);
  for (int64_t m : s.dim_mult)
    if (s.base_dim * m > kMaxHiddenSize || (s.base_dim * m) % 2 != 0)
      c.fail("dim_mult", "base_dim * " + std::to_string(m) + " must be even (the upsamplers halve it) and at most " +
                             std::to_string(kMaxHiddenSize));
  s.num_res_blocks = diffusers_int(c, "num_res_blocks", 0, kMaxLayers);
  s.out_channels = diffusers_int(c, "out_channels", 1, kMaxHiddenSize);
  const std::vector<bool> down = diffusers_bool_list(c, "temperal_downsample");
  if (down.size() != s.dim_mult.size() - 1)
    c.fail("temperal_downsample", "expected " + std::to_string(s.dim_mult.size() - 1) +
                                      " entries (one per upsampling of dim_mult), got " + std::to_string(down.size()));
  s.temporal_upsample.assign(down.rbegin(), down.rend());
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
      Value* rest = time_conv->forward(op, op.Slice(x, {1}, {last}, {2}));  // [batch, 2 dim, t - 1, h, w]
      Value* shape = op.Shape(rest);
      Value* batch = op.Slice(shape, {0}, {1}, {0});
      Value* hw = op.Slice(shape, {3}, {5}, {0});
      // [batch, 2, dim, t - 1, h, w] -> [batch, dim, t - 1, 2, h, w] -> [batch, dim, 2 (t - 1), h, w]
      rest = op.Reshape(rest, op.Concat({batch, b.ints({2, dim_, -1}), hw}, {.axis = 0}));
      rest = op.Transpose(rest, {.perm = {0, 2, 3, 1, 4, 5}});
      rest = op.Reshape(rest, op.Concat({batch, b.ints({dim_, -1}), hw}, {.axis = 0}));
      x = op.Concat({op.Slice(x, {0}, {1}, {2}), rest}, {.axis = 2});
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

class WanVaeDecoder : public Module {
 public:
  explicit WanVaeDecoder(const WanVaeSpec& s) {
    std::vector<int64_t> dims = {s.base_dim * s.dim_mult.back()};
    for (auto it = s.dim_mult.rbegin(); it != s.dim_mult.rend(); ++it) dims.push_back(s.base_dim * *it);
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
      up_samplers.push_back(i + 1 < n ? child<WanUpsample>(prefix + ".upsamplers.0", s, out, s.temporal_upsample[i])
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

class AutoencoderKLWan : public Architecture {
 public:
  AutoencoderKLWan(const HfConfig& c, DataType dtype) : s_(wan_vae_spec(c, dtype)) {
    post_quant_conv = child<Conv3d>("post_quant_conv", wan_causal_conv(s_, s_.z_dim, s_.z_dim, {1, 1, 1}, {0, 0, 0}));
    decoder = child<WanVaeDecoder>("decoder", s_);
  }
  std::string task() const override { return "diffusion-vae"; }
  std::vector<NamedGraph> build_graphs() const override {
    std::vector<NamedGraph> graphs;
    graphs.emplace_back(GraphPath{"vae_decoder", hf_graph::vae_decoder}, decoder_graph(), GraphLowering::attention);
    return graphs;
  }
  Conv3d* post_quant_conv;
  WanVaeDecoder* decoder;

 private:
  Model decoder_graph() const {
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
