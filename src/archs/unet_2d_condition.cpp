// UNet2DConditionModel (diffusers/models/unets/unet_2d_condition.py; blocks CrossAttnDownBlock2D,
// DownBlock2D, UNetMidBlock2DCrossAttn, UpBlock2D, CrossAttnUpBlock2D in unets/unet_2d_blocks.py):
// the denoiser of Stable Diffusion 1.x / 2.x (positional timestep embedding, cross-attention to the
// text encoder's states) and SDXL (addition_embed_type "text_time": the pooled text embedding and
// the six size / crop conditioning ids added to the time embedding).
//   emb = time_embedding(Timesteps(block_out_channels[0])(timestep))
//         [+ add_embedding(concat(text_embeds, Timesteps(addition_time_embed_dim)(time_ids) flattened))]
//   x = conv_in(sample) (center_input_sample: 2 * sample - 1 first); skips = [x]
//   down block i: layers_per_block[i] x (ResnetBlock2D(x, emb) [, Transformer2D(x, states)]), each
//     output a skip; a Downsample2D (padding downsample_padding) but on the last block, also a skip
//   mid: resnets.0, attentions.0, resnets.1 (output_scale_factor mid_block_scale_factor)
//   up block i: layers_per_block[n-1-i] + 1 x (concat(x, skips.pop()) on channels -> ResnetBlock2D
//     [, Transformer2D]); an Upsample2D to the size of the next skip but on the last block
//   out_sample = conv_out(act(conv_norm_out(x)))
// Heads: diffusers passes attention_head_dim as the number of heads (its naming issue 2011):
// block i's Transformer2D has attention_head_dim[i] heads of block_out_channels[i] / heads.
// The other mechanisms of the class (class / image / text embeddings, fourier time projection,
// time_cond_proj_dim, scale-shift or spatial resnets, dual or only-cross attention, GLIGEN) are
// refused by field.
// Graph "unet", with the I/O of Optimum's UNetOnnxConfig (optimum/exporters/onnx/model_configs.py):
//   sample [batch_size, in_channels, height, width], timestep [timestep_batch] (float, the model
//   dtype; 1 or batch_size entries: diffusers' timesteps.expand(batch)), encoder_hidden_states
//   [batch_size, sequence_length, cross_attention_dim]; "text_time": text_embeds
//   [batch_size, text_embeds_dim], time_ids [batch_size, num_time_ids]
//   -> out_sample [batch_size, out_channels, height, width]
#include "archs/diffusers_config.h"
#include "blocks/activation.h"
#include "blocks/resample2d.h"
#include "blocks/resnet_block2d.h"
#include "blocks/timestep_embedding.h"
#include "blocks/transformer2d.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

struct UnetSpec {
  int64_t in_channels, out_channels, groups, cross_attention_dim, time_embed_dim, conv_in_kernel, conv_out_kernel;
  int64_t downsample_padding;
  std::vector<int64_t> channels, layers, heads, transformer_layers;
  std::vector<bool> cross;  // down block i has attentions (CrossAttnDownBlock2D)
  std::vector<bool> up_cross;
  std::string act;
  bool flip_sin_to_cos, center_input_sample, linear_projection;
  double freq_shift;
  float eps, mid_scale, resnet_scale;
  // addition_embed_type "text_time"
  bool text_time = false;
  int64_t addition_time_embed_dim = 0, projection_input_dim = 0;
  DataType dtype;
};

UnetSpec unet_spec(const HfConfig& c, DataType dtype) {
  const std::string what = "UNet2DConditionModel with positional time embedding, cross-attention blocks and "
                           "addition_embed_type null or text_time";
  diffusers_require(c, "num_attention_heads", nullptr, what);
  diffusers_require(c, "time_embedding_type", "positional", what);
  diffusers_require(c, "class_embed_type", nullptr, what);
  diffusers_require(c, "num_class_embeds", nullptr, what);
  diffusers_require(c, "encoder_hid_dim_type", nullptr, what);
  diffusers_require(c, "encoder_hid_dim", nullptr, what);
  diffusers_require(c, "time_cond_proj_dim", nullptr, what);
  diffusers_require(c, "timestep_post_act", nullptr, what);
  diffusers_require(c, "time_embedding_act_fn", nullptr, what);
  diffusers_require(c, "only_cross_attention", false, what);
  diffusers_require(c, "mid_block_only_cross_attention", nullptr, what);
  diffusers_require(c, "dual_cross_attention", false, what);
  diffusers_require(c, "attention_type", "default", what);
  diffusers_require(c, "resnet_time_scale_shift", "default", what);
  diffusers_require(c, "resnet_skip_time_act", false, what);
  diffusers_require(c, "cross_attention_norm", nullptr, what);
  diffusers_require(c, "class_embeddings_concat", false, what);
  diffusers_require(c, "reverse_transformer_layers_per_block", nullptr, what);
  diffusers_require(c, "mid_block_type", "UNetMidBlock2DCrossAttn", what);
  if (c.json().contains("mid_block_type") && c.json()["mid_block_type"].is_null())
    c.fail("mid_block_type", "null (no mid block) is not supported (mobius builds " + what + ")");
  UnetSpec s;
  s.dtype = dtype;
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxSmallSize);
  s.out_channels = diffusers_int(c, "out_channels", 1, kMaxSmallSize);
  s.groups = diffusers_int(c, "norm_num_groups", 1, kMaxSmallSize);
  s.cross_attention_dim = diffusers_int(c, "cross_attention_dim", 1, kMaxHiddenSize);
  s.conv_in_kernel = diffusers_int(c, "conv_in_kernel", 1, kMaxSmallSize);
  s.conv_out_kernel = diffusers_int(c, "conv_out_kernel", 1, kMaxSmallSize);
  if (s.conv_in_kernel % 2 == 0) c.fail("conv_in_kernel", "expected an odd kernel (padding (k - 1) / 2 keeps the size)");
  if (s.conv_out_kernel % 2 == 0) c.fail("conv_out_kernel", "expected an odd kernel (padding (k - 1) / 2 keeps the size)");
  s.downsample_padding = diffusers_int(c, "downsample_padding", 0, 1);
  s.channels = diffusers_int_list(c, "block_out_channels", 1, kMaxHiddenSize);
  const size_t n = s.channels.size();
  s.layers = diffusers_per_block(c, "layers_per_block", n, 1, kMaxLayers);
  s.heads = diffusers_per_block(c, "attention_head_dim", n, 1, kMaxHeads);
  s.transformer_layers = diffusers_per_block(c, "transformer_layers_per_block", n, 1, kMaxLayers);
  for (size_t i = 0; i < n; ++i) {
    if (s.channels[i] % s.groups != 0)
      c.fail("block_out_channels", std::to_string(s.channels[i]) + " channels do not split into norm_num_groups " +
                                       std::to_string(s.groups) + " groups");
    if (s.channels[i] % s.heads[i] != 0)
      c.fail("attention_head_dim", "block " + std::to_string(i) + ": " + std::to_string(s.channels[i]) +
                                       " channels do not split into " + std::to_string(s.heads[i]) + " heads");
  }
  const std::vector<std::string> down = diffusers_string_list(c, "down_block_types");
  const std::vector<std::string> up = diffusers_string_list(c, "up_block_types");
  if (down.size() != n) c.fail("down_block_types", "expected one entry per block_out_channels entry");
  if (up.size() != n) c.fail("up_block_types", "expected one entry per block_out_channels entry");
  for (const std::string& t : down) {
    if (t != "CrossAttnDownBlock2D" && t != "DownBlock2D")
      c.fail("down_block_types", "unsupported block '" + t + "' (expected CrossAttnDownBlock2D or DownBlock2D)");
    s.cross.push_back(t == "CrossAttnDownBlock2D");
  }
  for (const std::string& t : up) {
    if (t != "CrossAttnUpBlock2D" && t != "UpBlock2D")
      c.fail("up_block_types", "unsupported block '" + t + "' (expected CrossAttnUpBlock2D or UpBlock2D)");
    s.up_cross.push_back(t == "CrossAttnUpBlock2D");
  }
  s.act = diffusers_activation(c, "act_fn");
  s.flip_sin_to_cos = c.bool_or("flip_sin_to_cos", true);
  s.center_input_sample = c.bool_or("center_input_sample", false);
  s.linear_projection = c.bool_or("use_linear_projection", false);
  s.freq_shift = c.float_or("freq_shift", 0.0);
  s.eps = static_cast<float>(c.float_or("norm_eps", 1e-5));
  if (!(s.eps > 0.0f && s.eps <= 1.0f)) c.fail("norm_eps", "expected a value in (0, 1]");
  s.mid_scale = static_cast<float>(c.float_or("mid_block_scale_factor", 1.0));
  s.resnet_scale = static_cast<float>(c.float_or("resnet_out_scale_factor", 1.0));
  if (s.mid_scale == 0.0f) c.fail("mid_block_scale_factor", "expected a non-zero value (the resnets divide by it)");
  if (s.resnet_scale == 0.0f) c.fail("resnet_out_scale_factor", "expected a non-zero value (the resnets divide by it)");
  s.time_embed_dim = c.has("time_embedding_dim") ? diffusers_int(c, "time_embedding_dim", 1, kMaxHiddenSize)
                                                 : 4 * s.channels[0];
  if (c.has("addition_embed_type")) {
    diffusers_require(c, "addition_embed_type", "text_time", what);
    s.text_time = true;
    s.addition_time_embed_dim = diffusers_int(c, "addition_time_embed_dim", 1, kMaxHiddenSize);
    s.projection_input_dim = diffusers_int(c, "projection_class_embeddings_input_dim", 1, kMaxHiddenSize);
  } else {
    diffusers_require(c, "projection_class_embeddings_input_dim", nullptr, what);
  }
  return s;
}

ResnetBlock2DOptions unet_resnet(const UnetSpec& s, int64_t in, int64_t out, float scale) {
  return {.in_channels = in, .out_channels = out, .temb_channels = s.time_embed_dim, .groups = s.groups,
          .eps = s.eps, .act = s.act, .output_scale_factor = scale, .dtype = s.dtype};
}

Transformer2DOptions unet_transformer(const UnetSpec& s, size_t block, int64_t channels) {
  return {.channels = channels, .heads = s.heads[block], .num_layers = s.transformer_layers[block],
          .cross_attention_dim = s.cross_attention_dim, .groups = s.groups,
          .use_linear_projection = s.linear_projection, .dtype = s.dtype};
}

// One resnet of a block and its Transformer2D (null in DownBlock2D / UpBlock2D).
struct UnetLayer {
  ResnetBlock2D* resnet;
  Transformer2D* attention;
};

class UNet2DConditionModel : public Architecture {
 public:
  UNet2DConditionModel(const HfConfig& c, DataType dtype) : s_(unet_spec(c, dtype)) {
    const size_t n = s_.channels.size();
    conv_in = child<Conv2d>("conv_in", Conv2dOptions{.in_channels = s_.in_channels, .out_channels = s_.channels[0],
                                                     .kernel_size = s_.conv_in_kernel,
                                                     .padding = (s_.conv_in_kernel - 1) / 2, .dtype = dtype});
    time_embedding = child<TimestepEmbedding>("time_embedding", TimestepEmbeddingOptions{s_.channels[0], s_.time_embed_dim,
                                                                                         s_.act, dtype});
    if (s_.text_time)
      add_embedding = child<TimestepEmbedding>("add_embedding", TimestepEmbeddingOptions{s_.projection_input_dim,
                                                                                         s_.time_embed_dim, "silu", dtype});
    int64_t ch = s_.channels[0];
    std::vector<int64_t> skip_channels = {ch};
    for (size_t i = 0; i < n; ++i) {
      const std::string block = "down_blocks." + std::to_string(i);
      for (int64_t j = 0; j < s_.layers[i]; ++j) {
        const std::string index = "." + std::to_string(j);
        UnetLayer l{child<ResnetBlock2D>(block + ".resnets" + index, unet_resnet(s_, ch, s_.channels[i], s_.resnet_scale)),
                    nullptr};
        ch = s_.channels[i];
        if (s_.cross[i]) l.attention = child<Transformer2D>(block + ".attentions" + index, unet_transformer(s_, i, ch));
        down_layers.push_back(l);
        skip_channels.push_back(ch);
      }
      if (i + 1 < n) {
        downsamplers.push_back(child<Downsample2D>(block + ".downsamplers.0",
                                                   Resample2DOptions{.channels = ch, .out_channels = ch,
                                                                     .padding = s_.downsample_padding, .dtype = dtype}));
        skip_channels.push_back(ch);
      }
    }
    mid_first = child<ResnetBlock2D>("mid_block.resnets.0", unet_resnet(s_, ch, ch, s_.mid_scale));
    mid_attention = child<Transformer2D>("mid_block.attentions.0", unet_transformer(s_, n - 1, ch));
    mid_second = child<ResnetBlock2D>("mid_block.resnets.1", unet_resnet(s_, ch, ch, s_.mid_scale));
    for (size_t i = 0; i < n; ++i) {
      const std::string block = "up_blocks." + std::to_string(i);
      const size_t r = n - 1 - i;  // the reversed lists' entry
      const int64_t out = s_.channels[r];
      for (int64_t j = 0; j <= s_.layers[r]; ++j) {
        const std::string index = "." + std::to_string(j);
        const int64_t skip = skip_channels.back();
        skip_channels.pop_back();
        UnetLayer l{child<ResnetBlock2D>(block + ".resnets" + index, unet_resnet(s_, ch + skip, out, s_.resnet_scale)),
                    nullptr};
        ch = out;
        if (s_.up_cross[i]) l.attention = child<Transformer2D>(block + ".attentions" + index, unet_transformer(s_, r, ch));
        up_layers.push_back(l);
      }
      if (i + 1 < n)
        upsamplers.push_back(child<Upsample2D>(block + ".upsamplers.0",
                                               Resample2DOptions{.channels = ch, .out_channels = ch, .dtype = dtype}));
    }
    conv_norm_out = child<GroupNorm>("conv_norm_out", GroupNormOptions{s_.groups, ch, s_.eps, dtype});
    conv_out = child<Conv2d>("conv_out", Conv2dOptions{.in_channels = ch, .out_channels = s_.out_channels,
                                                       .kernel_size = s_.conv_out_kernel,
                                                       .padding = (s_.conv_out_kernel - 1) / 2, .dtype = dtype});
  }
  std::string task() const override { return "diffusion-denoiser"; }
  std::vector<NamedGraph> build_graphs() const override {
    std::vector<NamedGraph> graphs;
    graphs.emplace_back(GraphPath{"unet", hf_graph::unet}, build_model(), GraphLowering::attention);
    return graphs;
  }

  Conv2d *conv_in, *conv_out;
  TimestepEmbedding *time_embedding, *add_embedding = nullptr;
  std::vector<UnetLayer> down_layers, up_layers;
  std::vector<Downsample2D*> downsamplers;
  std::vector<Upsample2D*> upsamplers;
  ResnetBlock2D *mid_first, *mid_second;
  Transformer2D* mid_attention;
  GroupNorm* conv_norm_out;

 private:
  Value* layer(Ops& op, const UnetLayer& l, Value* x, Value* emb, Value* states) const {
    x = l.resnet->forward(op, x, emb);
    return l.attention ? l.attention->forward(op, x, states) : x;
  }
  Model build_model() const {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const DataType dt = s_.dtype;
    Value* sample = b.input("sample", dt, {"batch_size", s_.in_channels, "height", "width"});
    Value* timestep = b.input("timestep", dt, {"timestep_batch"});
    Value* states = b.input("encoder_hidden_states", dt, {"batch_size", "sequence_length", s_.cross_attention_dim});
    Value* batch = op.Shape(sample, {.end = 1});
    Value* t = timestep_sinusoids(op, op.Expand(timestep, batch),
                                  {.dim = s_.channels[0], .flip_sin_to_cos = s_.flip_sin_to_cos,
                                   .downscale_freq_shift = s_.freq_shift, .dtype = dt});
    Value* emb = time_embedding->forward(op, t);
    if (add_embedding) {
      Value* text_embeds = b.input("text_embeds", dt, {"batch_size", "text_embeds_dim"});
      Value* time_ids = b.input("time_ids", dt, {"batch_size", "num_time_ids"});
      Value* ids = timestep_sinusoids(op, op.Reshape(time_ids, {-1}),
                                      {.dim = s_.addition_time_embed_dim, .flip_sin_to_cos = s_.flip_sin_to_cos,
                                       .downscale_freq_shift = s_.freq_shift, .dtype = dt});
      Value* add = op.Concat({text_embeds, op.Reshape(ids, op.Concat({batch, b.ints({-1})}, {.axis = 0}))}, {.axis = 1});
      emb = op.Add(emb, add_embedding->forward(op, add));
    }
    Value* x = s_.center_input_sample ? op.Sub(op.Mul(sample, 2.0), 1.0) : sample;
    x = conv_in->forward(op, x);
    std::vector<Value*> skips = {x};
    size_t next = 0;
    for (size_t i = 0; i < s_.channels.size(); ++i) {
      for (int64_t j = 0; j < s_.layers[i]; ++j) skips.push_back(x = layer(op, down_layers[next++], x, emb, states));
      if (i < downsamplers.size()) skips.push_back(x = downsamplers[i]->forward(op, x));
    }
    x = mid_second->forward(op, mid_attention->forward(op, mid_first->forward(op, x, emb), states), emb);
    next = 0;
    for (size_t i = 0; i < s_.channels.size(); ++i) {
      for (int64_t j = 0; j <= s_.layers[s_.channels.size() - 1 - i]; ++j) {
        x = op.Concat({x, skips.back()}, {.axis = 1});
        skips.pop_back();
        x = layer(op, up_layers[next++], x, emb, states);
      }
      if (i < upsamplers.size()) x = upsamplers[i]->forward(op, x, skips.back());
    }
    x = conv_out->forward(op, activation(op, s_.act, conv_norm_out->forward(op, x)));
    b.output(x, "out_sample", {"batch_size", s_.out_channels, "height", "width"});
    return model;
  }
  UnetSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_unet_2d_condition(const HfConfig& c, DataType dtype) {
  return std::make_unique<UNet2DConditionModel>(c, dtype);
}

}  // namespace mobius
