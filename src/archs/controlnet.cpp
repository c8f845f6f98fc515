// ControlNetModel (diffusers/models/controlnets/controlnet.py; configuration: its __init__): a copy
// of the UNet2DConditionModel's encoder half (archs/unet_encoder.h: conv_in, the time embedding [+
// SDXL's text_time add_embedding], the down blocks and the mid block) whose conv_in output is added
// the embedding of a conditioning image, each skip and the mid block's output through a 1x1 "zero
// convolution":
//   controlnet_cond_embedding (ControlNetConditioningEmbedding): conv_in (3x3, conditioning_channels
//     -> c[0]), silu; per step i of conditioning_embedding_out_channels c: blocks.{2i} (3x3, c[i] ->
//     c[i]), silu, blocks.{2i+1} (3x3 stride 2, c[i] -> c[i+1]), silu; conv_out (3x3, c[-1] ->
//     block_out_channels[0]). controlnet_conditioning_channel_order "bgr": the image's channels
//     reversed first.
//   x = conv_in(sample) + controlnet_cond_embedding(controlnet_cond); skips = [x, the down blocks']
//   down_block_res_samples.{i} = controlnet_down_blocks.{i}(skips[i]) * conditioning_scale
//   mid_block_res_sample = controlnet_mid_block(mid(skips[-1])) * conditioning_scale
// guess_mode (the pipeline's per-output logspace scales) is not part of the graph;
// global_pool_conditions and the mechanisms the UNet refuses are refused by field.
// Graph "controlnet" (the pipeline's controlnet/ folder). Inputs: sample [batch_size, in_channels,
// height, width], timestep [timestep_batch], encoder_hidden_states [batch_size, sequence_length,
// cross_attention_dim], controlnet_cond [batch_size, conditioning_channels, cond_height,
// cond_width] (cond_height = height x 2^(len(conditioning_embedding_out_channels) - 1)),
// conditioning_scale [] (the model dtype) [, text_embeds, time_ids as the UNet's] -> the outputs
// named as ControlNetOutput's fields: down_block_res_samples.{i} [batch_size, channels of skip i,
// height_down{k}, width_down{k}] (k: the skip's downsampling level; level 0 height, width) and
// mid_block_res_sample.
#include <limits>

#include "archs/diffusers_component.h"
#include "archs/unet_encoder.h"
#include "blocks/activation.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct ControlNetSpec {
  UNetEncoderSpec encoder;
  int64_t conditioning_channels;
  std::vector<int64_t> embedding_channels;  // conditioning_embedding_out_channels
  bool bgr;
};

ControlNetSpec controlnet_spec(const HfConfig& c, DataType dtype) {
  const std::string what = "ControlNetModel with cross-attention blocks, addition_embed_type null or text_time "
                           "and per-sample conditions";
  diffusers_require(c, "global_pool_conditions", false, what);
  ControlNetSpec s;
  s.encoder = unet_encoder_spec(c, dtype, what);
  s.conditioning_channels = diffusers_int(c, "conditioning_channels", 1, kMaxSmallSize);
  s.embedding_channels = diffusers_int_list(c, "conditioning_embedding_out_channels", 1, kMaxHiddenSize);
  const std::string order = c.string_or("controlnet_conditioning_channel_order", "rgb");
  if (order != "rgb" && order != "bgr")
    c.fail("controlnet_conditioning_channel_order", "expected \"rgb\" or \"bgr\", got \"" + order + "\"");
  s.bgr = order == "bgr";
  return s;
}

// ControlNetConditioningEmbedding: the conditioning image [batch, conditioning_channels, H, W] ->
// [batch, block_out_channels[0], H / 2^(steps), W / 2^(steps)] (each stride-2 convolution rounds up).
class ConditioningEmbedding : public Module {
 public:
  explicit ConditioningEmbedding(const ControlNetSpec& s) {
    const std::vector<int64_t>& c = s.embedding_channels;
    const DataType dt = s.encoder.dtype;
    auto conv = [&](int64_t in, int64_t out, int64_t stride) {
      return Conv2dOptions{.in_channels = in, .out_channels = out, .kernel_size = 3, .stride = stride, .padding = 1,
                           .dtype = dt};
    };
    conv_in = child<Conv2d>("conv_in", conv(s.conditioning_channels, c[0], 1));
    for (size_t i = 0; i + 1 < c.size(); ++i) {
      blocks.push_back(child<Conv2d>("blocks." + std::to_string(2 * i), conv(c[i], c[i], 1)));
      blocks.push_back(child<Conv2d>("blocks." + std::to_string(2 * i + 1), conv(c[i], c[i + 1], 2)));
    }
    conv_out = child<Conv2d>("conv_out", conv(c.back(), s.encoder.channels[0], 1));
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    x = activation(op, "silu", conv_in->forward(op, x));
    for (const Conv2d* block : blocks) x = activation(op, "silu", block->forward(op, x));
    return conv_out->forward(op, x);
  }

  Conv2d *conv_in, *conv_out;
  std::vector<Conv2d*> blocks;
};

class ControlNetModel : public OneGraphComponent {
 public:
  ControlNetModel(const HfConfig& c, DataType dtype) : OneGraphComponent("diffusion-controlnet", GraphPath{"controlnet", hf_graph::controlnet}), s_(controlnet_spec(c, dtype)) {
    encoder = child<UNetEncoder>("", s_.encoder);
    cond_embedding = child<ConditioningEmbedding>("controlnet_cond_embedding", s_);
    const std::vector<int64_t>& skips = encoder->skip_channels();
    for (size_t i = 0; i < skips.size(); ++i)
      down_convs.push_back(child<Conv2d>("controlnet_down_blocks." + std::to_string(i), zero_conv(skips[i])));
    mid_conv = child<Conv2d>("controlnet_mid_block", zero_conv(s_.encoder.channels.back()));
  }

  UNetEncoder* encoder;
  ConditioningEmbedding* cond_embedding;
  std::vector<Conv2d*> down_convs;
  Conv2d* mid_conv;

 private:
  Conv2dOptions zero_conv(int64_t channels) const {
    return {.in_channels = channels, .out_channels = channels, .kernel_size = 1, .dtype = s_.encoder.dtype};
  }
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const UNetEncoderSpec& e = s_.encoder;
    const DataType dt = e.dtype;
    auto [sample, timestep, states] = encoder->inputs(b);
    Value* cond = b.input("controlnet_cond", dt, {"batch_size", s_.conditioning_channels, "cond_height", "cond_width"});
    Value* scale = b.input("conditioning_scale", dt, {});
    Value* emb = encoder->embedding(op, sample, timestep);
    if (s_.bgr)  // torch.flip(controlnet_cond, dims=[1])
      cond = op.Slice(cond, b.ints({-1}), b.ints({std::numeric_limits<int64_t>::min()}), b.ints({1}), b.ints({-1}));
    Value* x = op.Add(encoder->conv_in->forward(op, sample), cond_embedding->forward(op, cond));
    std::vector<Value*> skips = encoder->down(op, x, emb, states);
    Value* mid = encoder->mid(op, skips.back(), emb, states);
    for (size_t i = 0; i < skips.size(); ++i)
      b.output(op.Mul(down_convs[i]->forward(op, skips[i]), scale), "down_block_res_samples." + std::to_string(i),
               encoder->skip_shape(i));
    b.output(op.Mul(mid_conv->forward(op, mid), scale), "mid_block_res_sample", encoder->mid_shape());
    return model;
  }
  ControlNetSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_controlnet(const HfConfig& c, DataType dtype) {
  return std::make_unique<ControlNetModel>(c, dtype);
}

}  // namespace mobius
