// UNet2DConditionModel (diffusers/models/unets/unet_2d_condition.py; blocks CrossAttnDownBlock2D,
// DownBlock2D, UNetMidBlock2DCrossAttn, UpBlock2D, CrossAttnUpBlock2D in unets/unet_2d_blocks.py):
// the denoiser of Stable Diffusion 1.x / 2.x (positional timestep embedding, cross-attention to the
// text encoder's states) and SDXL (addition_embed_type "text_time": the pooled text embedding and
// the six size / crop conditioning ids added to the time embedding).
//   emb, the down blocks and the mid block: archs/unet_encoder.h (shared with ControlNetModel), on
//     x = conv_in(sample) (center_input_sample: 2 * sample - 1 first); skips = [x, the down blocks']
//   up block i: layers_per_block[n-1-i] + 1 x (concat(x, skips.pop()) on channels -> ResnetBlock2D
//     [, Transformer2D]); an Upsample2D to the size of the next skip but on the last block
//   out_sample = conv_out(act(conv_norm_out(x)))
// The up blocks' heads and transformer layers are those of the mirrored down block.
// The other mechanisms of the class (class / image / text embeddings, fourier time projection,
// time_cond_proj_dim, scale-shift or spatial resnets, dual or only-cross attention, GLIGEN) are
// refused by field.
// Graph "unet", with the I/O of Optimum's UNetOnnxConfig (optimum/exporters/onnx/model_configs.py):
//   sample [batch_size, in_channels, height, width], timestep [timestep_batch] (float, the model
//   dtype; 1 or batch_size entries: diffusers' timesteps.expand(batch)), encoder_hidden_states
//   [batch_size, sequence_length, cross_attention_dim]; "text_time": text_embeds
//   [batch_size, text_embeds_dim], time_ids [batch_size, num_time_ids]
//   -> out_sample [batch_size, out_channels, height, width]
// Built for a pipeline with a ControlNetModel (create_unet_2d_condition_controlled), the graph also
// takes UNet2DConditionModel.forward's ControlNet residuals, the ControlNet graph's outputs:
//   down_block_additional_residuals.{i} [batch_size, channels of skip i, height_down{k}, width_down{k}]
//   (one per skip, added to it after the down blocks) and mid_block_additional_residual [batch_size,
//   block_out_channels[-1], height_down{n-1}, width_down{n-1}] (added to the mid block's output).
// Built for a pipeline with a T2IAdapter (StableDiffusion[XL]AdapterPipeline), the graph also takes
// its feature maps (adapter_state.{k} times adapter_conditioning_scale, as the pipeline passes them):
//   down_intrablock_additional_residuals.{k} [batch_size, block_out_channels[k], ...], added in down
//   block k (archs/unet_encoder.h unet_intrablock_level), for k below the number of maps and of
//   blocks; and the next map after the mid block when it has the mid block's shape (T2I-Adapter-XL's
//   fourth), as UNet2DConditionModel.forward pops them. Shapes are compared as the adapter's
//   resolution relative to the UNet's: one ratio for every map that is added.
#include <algorithm>

#include "archs/diffusers_component.h"
#include "archs/unet_encoder.h"
#include "blocks/activation.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct UnetSpec {
  UNetEncoderSpec encoder;
  int64_t out_channels, conv_out_kernel;
  std::vector<bool> up_cross;
  bool center_input_sample;
  bool controlnet_residuals = false;  // the ControlNet residual inputs (above)
  size_t adapter_down = 0;            // the down blocks that add a T2IAdapter's map (above)
  bool adapter_mid = false;           // the mid block adds the next one
};

UnetSpec unet_spec(const HfConfig& c, DataType dtype) {
  const std::string what = "UNet2DConditionModel with positional time embedding, cross-attention blocks and "
                           "addition_embed_type null or text_time";
  diffusers_require(c, "time_embedding_type", "positional", what);
  diffusers_require(c, "time_cond_proj_dim", nullptr, what);
  diffusers_require(c, "timestep_post_act", nullptr, what);
  diffusers_require(c, "time_embedding_act_fn", nullptr, what);
  diffusers_require(c, "mid_block_only_cross_attention", nullptr, what);
  diffusers_require(c, "dual_cross_attention", false, what);
  diffusers_require(c, "attention_type", "default", what);
  diffusers_require(c, "resnet_skip_time_act", false, what);
  diffusers_require(c, "cross_attention_norm", nullptr, what);
  diffusers_require(c, "class_embeddings_concat", false, what);
  diffusers_require(c, "reverse_transformer_layers_per_block", nullptr, what);
  UnetSpec s;
  s.encoder = unet_encoder_spec(c, dtype, what);
  UNetEncoderSpec& e = s.encoder;
  s.out_channels = diffusers_int(c, "out_channels", 1, kMaxSmallSize);
  e.conv_in_kernel = diffusers_int(c, "conv_in_kernel", 1, kMaxSmallSize);
  s.conv_out_kernel = diffusers_int(c, "conv_out_kernel", 1, kMaxSmallSize);
  if (e.conv_in_kernel % 2 == 0) c.fail("conv_in_kernel", "expected an odd kernel (padding (k - 1) / 2 keeps the size)");
  if (s.conv_out_kernel % 2 == 0) c.fail("conv_out_kernel", "expected an odd kernel (padding (k - 1) / 2 keeps the size)");
  const std::vector<std::string> up = diffusers_string_list(c, "up_block_types");
  if (up.size() != e.channels.size()) c.fail("up_block_types", "expected one entry per block_out_channels entry");
  for (const std::string& t : up) {
    if (t != "CrossAttnUpBlock2D" && t != "UpBlock2D")
      c.fail("up_block_types", "unsupported block '" + t + "' (expected CrossAttnUpBlock2D or UpBlock2D)");
    s.up_cross.push_back(t == "CrossAttnUpBlock2D");
  }
  s.center_input_sample = c.bool_or("center_input_sample", false);
  e.resnet_scale = static_cast<float>(c.float_or("resnet_out_scale_factor", 1.0));
  if (e.resnet_scale == 0.0f) c.fail("resnet_out_scale_factor", "expected a non-zero value (the resnets divide by it)");
  if (c.has("time_embedding_dim")) e.time_embed_dim = diffusers_int(c, "time_embedding_dim", 1, kMaxHiddenSize);
  return s;
}

class UNet2DConditionModel : public OneGraphComponent {
 public:
  explicit UNet2DConditionModel(const UnetSpec& s) : OneGraphComponent("diffusion-denoiser", GraphPath{"unet", hf_graph::unet}), s_(s) {
    const UNetEncoderSpec& e = s_.encoder;
    encoder = child<UNetEncoder>("", e);
    const size_t n = e.channels.size();
    int64_t ch = e.channels.back();
    std::vector<int64_t> skip_channels = encoder->skip_channels();
    for (size_t i = 0; i < n; ++i) {
      const std::string block = "up_blocks." + std::to_string(i);
      const size_t r = n - 1 - i;  // the reversed lists' entry
      const int64_t out = e.channels[r];
      for (int64_t j = 0; j <= e.layers[r]; ++j) {
        const std::string index = "." + std::to_string(j);
        const int64_t skip = skip_channels.back();
        skip_channels.pop_back();
        UNetLayer l{child<ResnetBlock2D>(block + ".resnets" + index, unet_resnet(e, ch + skip, out, e.resnet_scale)),
                    nullptr};
        ch = out;
        if (s_.up_cross[i]) l.attention = child<Transformer2D>(block + ".attentions" + index, unet_transformer(e, r, ch));
        up_layers.push_back(l);
      }
      if (i + 1 < n)
        upsamplers.push_back(child<Upsample2D>(block + ".upsamplers.0",
                                               Resample2DOptions{.channels = ch, .out_channels = ch, .dtype = e.dtype}));
    }
    conv_norm_out = child<GroupNorm>("conv_norm_out", GroupNormOptions{e.groups, ch, e.eps, e.dtype});
    conv_out = child<Conv2d>("conv_out", Conv2dOptions{.in_channels = ch, .out_channels = s_.out_channels,
                                                       .kernel_size = s_.conv_out_kernel,
                                                       .padding = (s_.conv_out_kernel - 1) / 2, .dtype = e.dtype});
  }

  UNetEncoder* encoder;
  std::vector<UNetLayer> up_layers;
  std::vector<Upsample2D*> upsamplers;
  GroupNorm* conv_norm_out;
  Conv2d* conv_out;

 private:
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const UNetEncoderSpec& e = s_.encoder;
    auto [sample, timestep, states] = encoder->inputs(b);
    Value* emb = encoder->embedding(op, sample, timestep);
    Value* x = s_.center_input_sample ? op.Sub(op.Mul(sample, 2.0), 1.0) : sample;
    auto adapter_input = [&](size_t k, Shape shape) {
      return b.input("down_intrablock_additional_residuals." + std::to_string(k), e.dtype, std::move(shape));
    };
    std::vector<Value*> intrablock;
    for (size_t k = 0; k < s_.adapter_down; ++k) intrablock.push_back(adapter_input(k, encoder->intrablock_shape(k)));
    std::vector<Value*> skips = encoder->down(op, encoder->conv_in->forward(op, x), emb, states, intrablock);
    x = encoder->mid(op, skips.back(), emb, states);
    if (s_.adapter_mid) x = op.Add(x, adapter_input(s_.adapter_down, encoder->mid_shape()));
    if (s_.controlnet_residuals) {
      for (size_t i = 0; i < skips.size(); ++i)
        skips[i] = op.Add(skips[i], b.input("down_block_additional_residuals." + std::to_string(i), e.dtype,
                                            encoder->skip_shape(i)));
      x = op.Add(x, b.input("mid_block_additional_residual", e.dtype, encoder->mid_shape()));
    }
    size_t next = 0;
    for (size_t i = 0; i < e.channels.size(); ++i) {
      for (int64_t j = 0; j <= e.layers[e.channels.size() - 1 - i]; ++j) {
        x = op.Concat({x, skips.back()}, {.axis = 1});
        skips.pop_back();
        x = up_layers[next++].forward(op, x, emb, states);
      }
      if (i < upsamplers.size()) x = upsamplers[i]->forward(op, x, skips.back());
    }
    x = conv_out->forward(op, activation(op, e.act, conv_norm_out->forward(op, x)));
    b.output(x, "out_sample", {"batch_size", s_.out_channels, "height", "width"});
    return model;
  }
  UnetSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_unet_2d_condition(const HfConfig& c, DataType dtype) {
  return std::make_unique<UNet2DConditionModel>(unet_spec(c, dtype));
}

std::unique_ptr<Architecture> create_unet_2d_condition_conditioned(const HfConfig& c, DataType dtype,
                                                                   const PipelineConditioning& p) {
  UnetSpec s = unet_spec(c, dtype);
  s.controlnet_residuals = p.controlnet;
  const UNetEncoderSpec& e = s.encoder;
  const size_t n = e.channels.size();
  s.adapter_down = std::min(p.adapter.size(), n);
  if (s.adapter_down == 0) return std::make_unique<UNet2DConditionModel>(s);
  // the adapter's maps are at 1 / 2^pools of its input, the UNet's points at 1 / 2^level of the latent:
  // pools - level is one constant where they fit
  const int64_t offset = p.adapter[0].pools - unet_intrablock_level(e, 0);
  for (size_t k = 0; k < s.adapter_down; ++k) {
    const AdapterState& a = p.adapter[k];
    const int64_t level = unet_intrablock_level(e, k);
    if (a.channels != e.channels[k] || a.pools - level != offset)
      c.fail("block_out_channels", "down block " + std::to_string(k) + " (" + std::to_string(e.channels[k]) +
                                       " channels at 1/2^" + std::to_string(level) +
                                       " of the latent) cannot add the pipeline's T2IAdapter map " + std::to_string(k) +
                                       " (" + std::to_string(a.channels) + " channels at 1/2^" +
                                       std::to_string(a.pools) +
                                       " of its downscaled input): the adapter does not fit this UNet");
  }
  if (p.adapter.size() > n) {
    const AdapterState& next = p.adapter[n];
    s.adapter_mid = next.channels == e.channels.back() && next.pools - static_cast<int64_t>(n - 1) == offset;
  }
  return std::make_unique<UNet2DConditionModel>(s);
}

}  // namespace mobius
