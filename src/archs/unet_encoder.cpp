#include "archs/unet_encoder.h"

namespace mobius {

UNetEncoderSpec unet_encoder_spec(const HfConfig& c, DataType dtype, const std::string& what) {
  diffusers_require(c, "num_attention_heads", nullptr, what);
  diffusers_require(c, "class_embed_type", nullptr, what);
  diffusers_require(c, "num_class_embeds", nullptr, what);
  diffusers_require(c, "encoder_hid_dim_type", nullptr, what);
  diffusers_require(c, "encoder_hid_dim", nullptr, what);
  diffusers_require(c, "only_cross_attention", false, what);
  diffusers_require(c, "resnet_time_scale_shift", "default", what);
  diffusers_require(c, "mid_block_type", "UNetMidBlock2DCrossAttn", what);
  if (c.json().contains("mid_block_type") && c.json()["mid_block_type"].is_null())
    c.fail("mid_block_type", "null (no mid block) is not supported (mobius builds " + what + ")");
  UNetEncoderSpec s;
  s.dtype = dtype;
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxSmallSize);
  s.groups = diffusers_int(c, "norm_num_groups", 1, kMaxSmallSize);
  s.cross_attention_dim = diffusers_int(c, "cross_attention_dim", 1, kMaxHiddenSize);
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
  if (down.size() != n) c.fail("down_block_types", "expected one entry per block_out_channels entry");
  for (const std::string& t : down) {
    if (t != "CrossAttnDownBlock2D" && t != "DownBlock2D")
      c.fail("down_block_types", "unsupported block '" + t + "' (expected CrossAttnDownBlock2D or DownBlock2D)");
    s.cross.push_back(t == "CrossAttnDownBlock2D");
  }
  s.act = diffusers_activation(c, "act_fn");
  s.flip_sin_to_cos = c.bool_or("flip_sin_to_cos", true);
  s.linear_projection = c.bool_or("use_linear_projection", false);
  s.freq_shift = c.float_or("freq_shift", 0.0);
  s.eps = static_cast<float>(c.float_or("norm_eps", 1e-5));
  if (!(s.eps > 0.0f && s.eps <= 1.0f)) c.fail("norm_eps", "expected a value in (0, 1]");
  s.mid_scale = static_cast<float>(c.float_or("mid_block_scale_factor", 1.0));
  if (s.mid_scale == 0.0f) c.fail("mid_block_scale_factor", "expected a non-zero value (the resnets divide by it)");
  s.time_embed_dim = 4 * s.channels[0];
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

ResnetBlock2DOptions unet_resnet(const UNetEncoderSpec& s, int64_t in, int64_t out, float scale) {
  return {.in_channels = in, .out_channels = out, .temb_channels = s.time_embed_dim, .groups = s.groups,
          .eps = s.eps, .act = s.act, .output_scale_factor = scale, .dtype = s.dtype};
}

Transformer2DOptions unet_transformer(const UNetEncoderSpec& s, size_t block, int64_t channels) {
  return {.channels = channels, .heads = s.heads[block], .num_layers = s.transformer_layers[block],
          .cross_attention_dim = s.cross_attention_dim, .groups = s.groups,
          .use_linear_projection = s.linear_projection, .dtype = s.dtype};
}

Value* UNetLayer::forward(Ops& op, Value* x, Value* emb, Value* states) const {
  x = resnet->forward(op, x, emb);
  return attention ? attention->forward(op, x, states) : x;
}

UNetEncoder::UNetEncoder(const UNetEncoderSpec& s) : s_(s) {
  const size_t n = s_.channels.size();
  const DataType dtype = s_.dtype;
  conv_in = child<Conv2d>("conv_in", Conv2dOptions{.in_channels = s_.in_channels, .out_channels = s_.channels[0],
                                                   .kernel_size = s_.conv_in_kernel,
                                                   .padding = (s_.conv_in_kernel - 1) / 2, .dtype = dtype});
  time_embedding = child<TimestepEmbedding>("time_embedding", TimestepEmbeddingOptions{s_.channels[0], s_.time_embed_dim,
                                                                                       s_.act, dtype});
  if (s_.text_time)
    add_embedding = child<TimestepEmbedding>("add_embedding", TimestepEmbeddingOptions{s_.projection_input_dim,
                                                                                       s_.time_embed_dim, "silu", dtype});
  int64_t ch = s_.channels[0];
  skip_channels_ = {ch};
  skip_levels_ = {0};
  for (size_t i = 0; i < n; ++i) {
    const std::string block = "down_blocks." + std::to_string(i);
    for (int64_t j = 0; j < s_.layers[i]; ++j) {
      const std::string index = "." + std::to_string(j);
      UNetLayer l{child<ResnetBlock2D>(block + ".resnets" + index, unet_resnet(s_, ch, s_.channels[i], s_.resnet_scale)),
                  nullptr};
      ch = s_.channels[i];
      if (s_.cross[i]) l.attention = child<Transformer2D>(block + ".attentions" + index, unet_transformer(s_, i, ch));
      down_layers.push_back(l);
      skip_channels_.push_back(ch);
      skip_levels_.push_back(static_cast<int64_t>(i));
    }
    if (i + 1 < n) {
      downsamplers.push_back(child<Downsample2D>(block + ".downsamplers.0",
                                                 Resample2DOptions{.channels = ch, .out_channels = ch,
                                                                   .padding = s_.downsample_padding, .dtype = dtype}));
      skip_channels_.push_back(ch);
      skip_levels_.push_back(static_cast<int64_t>(i + 1));
    }
  }
  mid_first = child<ResnetBlock2D>("mid_block.resnets.0", unet_resnet(s_, ch, ch, s_.mid_scale));
  mid_attention = child<Transformer2D>("mid_block.attentions.0", unet_transformer(s_, n - 1, ch));
  mid_second = child<ResnetBlock2D>("mid_block.resnets.1", unet_resnet(s_, ch, ch, s_.mid_scale));
}

Shape UNetEncoder::level_shape(int64_t channels, int64_t level) {
  const std::string suffix = level == 0 ? "" : "_down" + std::to_string(level);
  return {"batch_size", channels, "height" + suffix, "width" + suffix};
}

UNetEncoder::Inputs UNetEncoder::inputs(GraphBuilder& b) const {
  return {b.input("sample", s_.dtype, {"batch_size", s_.in_channels, "height", "width"}),
          b.input("timestep", s_.dtype, {"timestep_batch"}),
          b.input("encoder_hidden_states", s_.dtype, {"batch_size", "sequence_length", s_.cross_attention_dim})};
}

Value* UNetEncoder::embedding(Ops& op, Value* sample, Value* timestep) const {
  GraphBuilder& b = op.builder();
  const DataType dt = s_.dtype;
  Value* batch = op.Shape(sample, {.end = 1});
  Value* t = timestep_sinusoids(op, op.Expand(timestep, batch),
                                {.dim = s_.channels[0], .flip_sin_to_cos = s_.flip_sin_to_cos,
                                 .downscale_freq_shift = s_.freq_shift, .dtype = dt});
  Value* emb = time_embedding->forward(op, t);
  if (!add_embedding) return emb;
  Value* text_embeds = b.input("text_embeds", dt, {"batch_size", "text_embeds_dim"});
  Value* time_ids = b.input("time_ids", dt, {"batch_size", "num_time_ids"});
  Value* ids = timestep_sinusoids(op, op.Reshape(time_ids, {-1}),
                                  {.dim = s_.addition_time_embed_dim, .flip_sin_to_cos = s_.flip_sin_to_cos,
                                   .downscale_freq_shift = s_.freq_shift, .dtype = dt});
  Value* add = op.Concat({text_embeds, op.Reshape(ids, op.Concat({batch, b.ints({-1})}, {.axis = 0}))}, {.axis = 1});
  return op.Add(emb, add_embedding->forward(op, add));
}

std::vector<Value*> UNetEncoder::down(Ops& op, Value* x, Value* emb, Value* states,
                                      const std::vector<Value*>& intrablock) const {
  std::vector<Value*> skips = {x};
  size_t next = 0;
  for (size_t i = 0; i < s_.channels.size(); ++i) {
    Value* residual = i < intrablock.size() ? intrablock[i] : nullptr;
    const bool after_downsampler = residual && unet_intrablock_level(s_, i) != static_cast<int64_t>(i);
    for (int64_t j = 0; j < s_.layers[i]; ++j) {
      x = down_layers[next++].forward(op, x, emb, states);
      if (residual && !after_downsampler && j + 1 == s_.layers[i]) x = op.Add(x, residual);
      skips.push_back(x);
    }
    if (i < downsamplers.size()) {
      x = downsamplers[i]->forward(op, x);
      if (after_downsampler) x = op.Add(x, residual);
      skips.push_back(x);
    }
  }
  return skips;
}

int64_t unet_intrablock_level(const UNetEncoderSpec& s, size_t block) {
  const bool after_downsampler = !s.cross[block] && block + 1 < s.channels.size();
  return static_cast<int64_t>(block) + (after_downsampler ? 1 : 0);
}

Value* UNetEncoder::mid(Ops& op, Value* x, Value* emb, Value* states) const {
  return mid_second->forward(op, mid_attention->forward(op, mid_first->forward(op, x, emb), states), emb);
}

}  // namespace mobius
