// AutoencoderKL (diffusers/models/autoencoders/autoencoder_kl.py, its Encoder and Decoder in
// autoencoders/vae.py; blocks DownEncoderBlock2D, UpDecoderBlock2D and UNetMidBlock2D in
// unets/unet_2d_blocks.py): the VAE of Stable Diffusion 1.x/2.x/XL (4 latent channels, quant_conv
// and post_quant_conv) and of SD3 / Flux (16 latent channels, use_quant_conv and
// use_post_quant_conv false). scaling_factor, shift_factor, latents_mean/std are the pipeline's:
// the model's forward does not read them, and neither do these graphs.
//   encoder: conv_in (3x3) -> down_blocks[i] (layers_per_block ResnetBlock2D, then a Downsample2D
//            of padding 0 but on the last) -> mid_block (resnet, attention, resnet) ->
//            conv_norm_out, SiLU, conv_out (3x3, 2 * latent_channels) -> quant_conv (1x1)
//   decoder: post_quant_conv (1x1) -> conv_in -> mid_block -> up_blocks[i] (layers_per_block + 1
//            resnets over the reversed block_out_channels, an Upsample2D but on the last) ->
//            conv_norm_out, SiLU, conv_out
// act_fn is the resnets' activation; the SiLU before conv_out is fixed. Every GroupNorm and resnet
// has eps 1e-6; the mid-block attention one head of all the channels.
// Graphs, with the names and I/O of Optimum's diffusers export (optimum/exporters/onnx/model_configs.py
// VaeEncoderOnnxConfig, VaeDecoderOnnxConfig):
//   "vae_encoder": sample [batch_size, in_channels, height, width]
//                  -> latent_parameters [batch_size, 2 * latent_channels, height_latent, width_latent]
//                  (the DiagonalGaussianDistribution's parameters: mean, then logvar, on axis 1)
//   "vae_decoder": latent_sample [batch_size, latent_channels, height_latent, width_latent]
//                  -> sample [batch_size, out_channels, height, width]
// height_latent = height / 2^(len(block_out_channels) - 1) for a height divisible by it.
#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/activation.h"
#include "blocks/resample2d.h"
#include "blocks/resnet_block2d.h"
#include "blocks/spatial_attention.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct VaeSpec : VaeSizes {
  std::string act;
  bool quant_conv, post_quant_conv, mid_attention;
  DataType dtype;
};

VaeSpec vae_spec(const HfConfig& c, DataType dtype) {
  VaeSpec s;
  static_cast<VaeSizes&>(s) = read_vae_sizes(c, "DownEncoderBlock2D", "UpDecoderBlock2D");
  s.act = diffusers_activation(c, "act_fn");
  s.quant_conv = c.bool_or("use_quant_conv", true);
  s.post_quant_conv = c.bool_or("use_post_quant_conv", true);
  s.mid_attention = c.bool_or("mid_block_add_attention", true);
  s.dtype = dtype;
  return s;
}

ResnetBlock2DOptions resnet(const VaeSpec& s, int64_t in, int64_t out) {
  return {.in_channels = in, .out_channels = out, .groups = s.groups, .act = s.act, .dtype = s.dtype};
}

// UNetMidBlock2D without a time embedding: resnets.0, attentions.0 (or none), resnets.1.
class VaeMidBlock : public Module {
 public:
  VaeMidBlock(const VaeSpec& s, int64_t ch) {
    first = child<ResnetBlock2D>("resnets.0", resnet(s, ch, ch));
    if (s.mid_attention)
      attention = child<SpatialAttention>("attentions.0", SpatialAttentionOptions{.channels = ch, .heads = 1,
                                                                                  .groups = s.groups, .dtype = s.dtype});
    second = child<ResnetBlock2D>("resnets.1", resnet(s, ch, ch));
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    x = first->forward(op, x, nullptr);
    if (attention) x = attention->forward(op, x);
    return second->forward(op, x, nullptr);
  }
  ResnetBlock2D *first, *second;
  SpatialAttention* attention = nullptr;
};

// conv_norm_out, conv_act, conv_out: conv_act is nn.SiLU() whatever act_fn (vae.py Encoder and
// Decoder)
class VaeOut : public Module {
 public:
  VaeOut(const VaeSpec& s, int64_t in, int64_t out) {
    norm = child<GroupNorm>("conv_norm_out", GroupNormOptions{s.groups, in, 1e-6f, s.dtype});
    conv = child<Conv2d>("conv_out", Conv2dOptions{.in_channels = in, .out_channels = out, .kernel_size = 3,
                                                   .padding = 1, .dtype = s.dtype});
  }
  Value* forward(Ops& op, Value* x) const { return conv->forward(op, activation(op, "silu", norm->forward(op, x))); }
  GroupNorm* norm;
  Conv2d* conv;
};

class VaeEncoder : public Module {
 public:
  explicit VaeEncoder(const VaeSpec& s) {
    conv_in = child<Conv2d>("conv_in", Conv2dOptions{.in_channels = s.in_channels, .out_channels = s.channels[0],
                                                     .kernel_size = 3, .padding = 1, .dtype = s.dtype});
    int64_t in = s.channels[0];
    for (size_t i = 0; i < s.channels.size(); ++i) {
      const std::string block = "down_blocks." + std::to_string(i);
      for (int64_t j = 0; j < s.layers_per_block; ++j) {
        resnets.push_back(child<ResnetBlock2D>(block + ".resnets." + std::to_string(j), resnet(s, in, s.channels[i])));
        in = s.channels[i];
      }
      if (i + 1 < s.channels.size())
        downsamplers.push_back(child<Downsample2D>(block + ".downsamplers.0",
                                                   Resample2DOptions{.channels = in, .out_channels = in, .padding = 0,
                                                                     .dtype = s.dtype}));
    }
    mid_block = child<VaeMidBlock>("mid_block", s, in);
    out = adopt("", std::make_unique<VaeOut>(s, in, 2 * s.latent_channels));
    layers_per_block_ = s.layers_per_block;
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    x = conv_in->forward(op, x);
    for (size_t r = 0; r < resnets.size(); ++r) {
      x = resnets[r]->forward(op, x, nullptr);
      const size_t block = r / layers_per_block_;
      if ((r + 1) % layers_per_block_ == 0 && block < downsamplers.size()) x = downsamplers[block]->forward(op, x);
    }
    return out->forward(op, mid_block->forward(op, x));
  }
  Conv2d* conv_in;
  std::vector<ResnetBlock2D*> resnets;
  std::vector<Downsample2D*> downsamplers;
  VaeMidBlock* mid_block;
  VaeOut* out;

 private:
  size_t layers_per_block_;
};

class VaeDecoder : public Module {
 public:
  explicit VaeDecoder(const VaeSpec& s) {
    const int64_t top = s.channels.back();
    conv_in = child<Conv2d>("conv_in", Conv2dOptions{.in_channels = s.latent_channels, .out_channels = top,
                                                     .kernel_size = 3, .padding = 1, .dtype = s.dtype});
    mid_block = child<VaeMidBlock>("mid_block", s, top);
    int64_t in = top;
    const size_t n = s.channels.size();
    for (size_t i = 0; i < n; ++i) {
      const std::string block = "up_blocks." + std::to_string(i);
      const int64_t ch = s.channels[n - 1 - i];
      for (int64_t j = 0; j <= s.layers_per_block; ++j) {
        resnets.push_back(child<ResnetBlock2D>(block + ".resnets." + std::to_string(j), resnet(s, in, ch)));
        in = ch;
      }
      if (i + 1 < n)
        upsamplers.push_back(child<Upsample2D>(block + ".upsamplers.0",
                                               Resample2DOptions{.channels = ch, .out_channels = ch, .dtype = s.dtype}));
    }
    out = adopt("", std::make_unique<VaeOut>(s, in, s.out_channels));
    per_block_ = static_cast<size_t>(s.layers_per_block + 1);
  }
  Value* forward(Ops& op, Value* z) const {
    auto sc = enter(op);
    Value* x = mid_block->forward(op, conv_in->forward(op, z));
    for (size_t r = 0; r < resnets.size(); ++r) {
      x = resnets[r]->forward(op, x, nullptr);
      const size_t block = r / per_block_;
      if ((r + 1) % per_block_ == 0 && block < upsamplers.size()) x = upsamplers[block]->forward(op, x);
    }
    return out->forward(op, x);
  }
  Conv2d* conv_in;
  VaeMidBlock* mid_block;
  std::vector<ResnetBlock2D*> resnets;
  std::vector<Upsample2D*> upsamplers;
  VaeOut* out;

 private:
  size_t per_block_;
};

class AutoencoderKL : public VaeArchitecture {
 public:
  AutoencoderKL(const HfConfig& c, DataType dtype) : s_(vae_spec(c, dtype)) {
    encoder = child<VaeEncoder>("encoder", s_);
    decoder = child<VaeDecoder>("decoder", s_);
    const int64_t lat = s_.latent_channels;
    if (s_.quant_conv)
      quant_conv = child<Conv2d>("quant_conv", Conv2dOptions{.in_channels = 2 * lat, .out_channels = 2 * lat,
                                                             .kernel_size = 1, .dtype = dtype});
    if (s_.post_quant_conv)
      post_quant_conv = child<Conv2d>("post_quant_conv", Conv2dOptions{.in_channels = lat, .out_channels = lat,
                                                                       .kernel_size = 1, .dtype = dtype});
  }

  VaeEncoder* encoder;
  VaeDecoder* decoder;
  Conv2d* quant_conv = nullptr;
  Conv2d* post_quant_conv = nullptr;

 private:
  Model encoder_graph() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* h = encoder->forward(op, b.input("sample", s_.dtype, {"batch_size", s_.in_channels, "height", "width"}));
    if (quant_conv) h = quant_conv->forward(op, h);
    b.output(h, "latent_parameters", {"batch_size", 2 * s_.latent_channels, "height_latent", "width_latent"});
    return model;
  }
  Model decoder_graph() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* z = b.input("latent_sample", s_.dtype, {"batch_size", s_.latent_channels, "height_latent", "width_latent"});
    if (post_quant_conv) z = post_quant_conv->forward(op, z);
    b.output(decoder->forward(op, z), "sample", {"batch_size", s_.out_channels, "height", "width"});
    return model;
  }
  VaeSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_autoencoder_kl(const HfConfig& c, DataType dtype) {
  return std::make_unique<AutoencoderKL>(c, dtype);
}

}  // namespace mobius
