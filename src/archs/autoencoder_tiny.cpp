// AutoencoderTiny (diffusers/models/autoencoders/autoencoder_tiny.py; EncoderTiny and DecoderTiny in
// autoencoders/vae.py, AutoencoderTinyBlock in unets/unet_2d_blocks.py): TAESD, a VAE of plain
// convolutions, each module an entry of an nn.Sequential (the state-dict keys count every entry,
// the parameter-free activations and upsamplings too):
//   encoder.layers: x -> (x + 1) / 2; per block i a Conv2d (3x3; stride 2 without bias but for
//     i = 0) then num_encoder_blocks[i] AutoencoderTinyBlock; a last Conv2d to latent_channels
//   decoder.layers: x -> tanh(x / 3) * 3; Conv2d, act; per block i num_decoder_blocks[i]
//     AutoencoderTinyBlock, an nn.Upsample(upsampling_scaling_factor, nearest) and a Conv2d (3x3,
//     without bias) but for the last block, whose Conv2d (with bias) gives out_channels; y * 2 - 1
//   AutoencoderTinyBlock: relu(conv.4(act(conv.2(act(conv.0(x))))) + x) (in = out channels: no skip
//     convolution)
// latent_magnitude, latent_shift, scaling_factor are the pipeline's (scale_latents): the encode and
// decode forwards do not read them.
// Graphs: "vae_encoder": sample [batch_size, in_channels, height, width] -> latents [batch_size,
// latent_channels, height_latent, width_latent] (AutoencoderTinyOutput.latents: the latent itself,
// no distribution; Optimum has no AutoencoderTiny export); "vae_decoder": latent_sample -> sample,
// as Optimum's VaeDecoderOnnxConfig.
#include <algorithm>
#include <functional>

#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/activation.h"
#include "blocks/conv2d.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct TinySpec {
  int64_t in_channels, out_channels, latent_channels, upsampling;
  std::vector<int64_t> encoder_channels, decoder_channels, encoder_blocks, decoder_blocks;
  std::string act;
  DataType dtype;
};

TinySpec tiny_spec(const HfConfig& c, DataType dtype) {
  TinySpec s;
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxSmallSize);
  s.out_channels = diffusers_int(c, "out_channels", 1, kMaxSmallSize);
  s.latent_channels = diffusers_int(c, "latent_channels", 1, kMaxSmallSize);
  s.upsampling = diffusers_int(c, "upsampling_scaling_factor", 1, kMaxSmallSize);
  s.encoder_channels = diffusers_int_list(c, "encoder_block_out_channels", 1, kMaxHiddenSize);
  s.decoder_channels = diffusers_int_list(c, "decoder_block_out_channels", 1, kMaxHiddenSize);
  s.encoder_blocks = diffusers_int_list(c, "num_encoder_blocks", 0, kMaxLayers);
  s.decoder_blocks = diffusers_int_list(c, "num_decoder_blocks", 0, kMaxLayers);
  if (s.encoder_blocks.size() != s.encoder_channels.size())
    c.fail("num_encoder_blocks", "expected one entry per encoder_block_out_channels entry");
  if (s.decoder_blocks.size() != s.decoder_channels.size())
    c.fail("num_decoder_blocks", "expected one entry per decoder_block_out_channels entry");
  // EncoderTiny / DecoderTiny chain block i's convolutions at block i's width: a width change
  // between blocks does not run in diffusers either
  for (const char* key : {"encoder_block_out_channels", "decoder_block_out_channels"}) {
    const std::vector<int64_t>& w = std::string(key)[0] == 'e' ? s.encoder_channels : s.decoder_channels;
    if (std::adjacent_find(w.begin(), w.end(), std::not_equal_to<>()) != w.end())
      c.fail(key, "expected one width for every block (EncoderTiny and DecoderTiny chain the blocks at block i's width)");
  }
  s.act = diffusers_activation(c, "act_fn");
  if (const std::string up = c.get_string("upsample_fn"); up != "nearest")
    c.fail("upsample_fn", "unsupported upsampling '" + up + "' (expected nearest)");
  s.dtype = dtype;
  return s;
}

// AutoencoderTinyBlock with in = out channels.
class TinyBlock : public Module {
 public:
  TinyBlock(const TinySpec& s, int64_t ch) : act_(s.act) {
    const Conv2dOptions o{.in_channels = ch, .out_channels = ch, .kernel_size = 3, .padding = 1, .dtype = s.dtype};
    conv0 = child<Conv2d>("conv.0", o);
    conv2 = child<Conv2d>("conv.2", o);
    conv4 = child<Conv2d>("conv.4", o);
  }
  Value* forward(Ops& op, Value* x) const {
    auto sc = enter(op);
    Value* h = activation(op, act_, conv0->forward(op, x));
    h = conv4->forward(op, activation(op, act_, conv2->forward(op, h)));
    return op.Relu(op.Add(h, x));
  }
  Conv2d *conv0, *conv2, *conv4;

 private:
  std::string act_;
};

// One entry of a layers Sequential: a convolution, a block, an activation or an upsampling.
struct TinyLayer {
  Conv2d* conv = nullptr;
  TinyBlock* block = nullptr;
  bool act = false, upsample = false;
};

class TinyLayers : public Module {
 public:
  void conv(const TinySpec& s, int64_t in, int64_t out, int64_t stride, bool bias) {
    layers_.push_back({.conv = child<Conv2d>(std::to_string(layers_.size()),
                                             Conv2dOptions{.in_channels = in, .out_channels = out, .kernel_size = 3,
                                                           .stride = stride, .padding = 1, .bias = bias,
                                                           .dtype = s.dtype})});
  }
  void block(const TinySpec& s, int64_t ch) {
    layers_.push_back({.block = child<TinyBlock>(std::to_string(layers_.size()), s, ch)});
  }
  void act() { layers_.push_back({.act = true}); }
  void upsample() { layers_.push_back({.upsample = true}); }
  Value* forward(Ops& op, Value* x, const std::string& act, int64_t factor) const {
    auto sc = enter(op);
    for (const TinyLayer& l : layers_) {
      if (l.conv) x = l.conv->forward(op, x);
      else if (l.block) x = l.block->forward(op, x);
      else if (l.act) x = activation(op, act, x);
      else {
        Value* spatial = op.Mul(op.Shape(x, {.start = 2}), op.builder().ints({factor, factor}));
        x = op.Resize(x, op.Concat({op.Shape(x, {.end = 2}), spatial}, {.axis = 0}));
      }
    }
    return x;
  }

 private:
  std::vector<TinyLayer> layers_;
};

class AutoencoderTiny : public VaeArchitecture {
 public:
  AutoencoderTiny(const HfConfig& c, DataType dtype) : s_(tiny_spec(c, dtype)) {
    encoder = child<TinyLayers>("encoder.layers");
    for (size_t i = 0; i < s_.encoder_channels.size(); ++i) {
      const int64_t ch = s_.encoder_channels[i];
      if (i == 0) encoder->conv(s_, s_.in_channels, ch, 1, true);
      else encoder->conv(s_, ch, ch, 2, false);  // EncoderTiny: block i's own width in and out
      for (int64_t j = 0; j < s_.encoder_blocks[i]; ++j) encoder->block(s_, ch);
    }
    encoder->conv(s_, s_.encoder_channels.back(), s_.latent_channels, 1, true);
    decoder = child<TinyLayers>("decoder.layers");
    decoder->conv(s_, s_.latent_channels, s_.decoder_channels[0], 1, true);
    decoder->act();
    for (size_t i = 0; i < s_.decoder_channels.size(); ++i) {
      const int64_t ch = s_.decoder_channels[i];
      const bool last = i + 1 == s_.decoder_channels.size();
      for (int64_t j = 0; j < s_.decoder_blocks[i]; ++j) decoder->block(s_, ch);
      if (!last) decoder->upsample();
      decoder->conv(s_, ch, last ? s_.out_channels : ch, 1, last);
    }
  }

  TinyLayers *encoder, *decoder;

 private:
  Model encoder_graph() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* x = b.input("sample", s_.dtype, {"batch_size", s_.in_channels, "height", "width"});
    Value* h = encoder->forward(op, op.Div(op.Add(x, 1.0), 2.0), s_.act, s_.upsampling);
    b.output(h, "latents", {"batch_size", s_.latent_channels, "height_latent", "width_latent"});
    return model;
  }
  Model decoder_graph() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* z = b.input("latent_sample", s_.dtype, {"batch_size", s_.latent_channels, "height_latent", "width_latent"});
    Value* h = decoder->forward(op, op.Mul(op.Tanh(op.Div(z, 3.0)), 3.0), s_.act, s_.upsampling);
    b.output(op.Sub(op.Mul(h, 2.0), 1.0), "sample", {"batch_size", s_.out_channels, "height", "width"});
    return model;
  }
  TinySpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_autoencoder_tiny(const HfConfig& c, DataType dtype) {
  return std::make_unique<AutoencoderTiny>(c, dtype);
}

}  // namespace mobius
