// The Pixtral vision tower (archs/pixtral.h).
#include "archs/pixtral.h"

#include <cmath>

#include "blocks/activation.h"
#include "config/rope_config.h"
#include "registry/config_defaults.h"

namespace mobius {

PixtralVisionTower::PixtralVisionTower(const HfConfig& vision_config, DataType dtype) : dtype_(dtype) {
  const HfConfig c = with_class_defaults(vision_config, "pixtral");
  hidden_ = c.get_int("hidden_size");
  patch_ = c.int_or("patch_size", 16);
  if (patch_ < 1 || patch_ > 4096) c.fail("patch_size", "expected an integer in [1, 4096]");
  channels_ = c.int_or("num_channels", 3);
  if (channels_ < 1 || channels_ > 64) c.fail("num_channels", "expected a value in [1, 64]");
  const int64_t heads = c.get_int("num_attention_heads");
  if (heads < 1 || hidden_ % heads != 0 || (hidden_ / heads) % 4 != 0)
    c.fail("num_attention_heads", "must divide hidden_size into heads whose size is a multiple of 4 (2-D RoPE)");
  head_dim_ = hidden_ / heads;  // PixtralVisionConfig.__post_init__: config.json's head_dim is not read
  theta_ = 10000.0;
  if (std::optional<HfConfig> p = c.sub("rope_parameters")) {
    const std::string type = p->string_or("rope_type", "axial");
    if (type != "axial") p->fail("rope_type", "Pixtral's vision RoPE is \"axial\", got \"" + type + "\"");
    theta_ = p->float_or("rope_theta", 10000.0);
  }
  const std::string act = c.string_or("hidden_act", "gelu");
  if (!is_known_activation(act)) c.fail("hidden_act", "unsupported activation '" + act + "'");

  DecoderSpec s;  // PixtralAttentionLayer: a pre-norm layer with RMSNorm (eps 1e-5) and a gated MLP
  s.hidden_size = hidden_;
  s.dtype = dtype;
  s.norm_eps = 1e-5f;
  s.norm_kind = NormKind::RMSNorm;
  s.names.input_layernorm = "attention_norm";
  s.names.post_attention_layernorm = "ffn_norm";
  s.names.self_attn = "attention";
  s.names.mlp = "feed_forward";
  AttentionOptions& a = s.attention;
  a.hidden_size = hidden_;
  a.num_attention_heads = a.num_key_value_heads = heads;
  a.head_dim = head_dim_;
  a.qkv_bias = a.o_bias = false;
  a.dtype = dtype;
  s.mlp = {.hidden_size = hidden_, .intermediate_size = c.get_int("intermediate_size"), .hidden_act = act,
           .bias = false, .dtype = dtype, .gated = true};
  patch_conv = child<PatchEmbedding>("patch_conv", channels_, hidden_, patch_, false, dtype);
  ln_pre = child<RMSNorm>("ln_pre", NormOptions{.dim = hidden_, .eps = 1e-5f, .dtype = dtype});
  const int64_t n = c.get_int("num_hidden_layers");
  if (n < 0) c.fail("num_hidden_layers", "must not be negative");
  for (int64_t i = 0; i < n; ++i)
    layers_.push_back(child<DecoderLayer>("transformer.layers." + std::to_string(i), s, i));
}

RopeTables PixtralVisionTower::rope(Ops& op, Value* pixel_values) const {
  auto s = op.builder().scope("patch_positional_embedding");
  GraphBuilder& b = op.builder();
  // the patch grid: rows = height / patch, cols = width / patch (the Conv's output size)
  Value* hw = op.Div(op.Shape(pixel_values, {.start = 2, .end = 4}), static_cast<double>(patch_));
  Value* cols = op.Gather(hw, b.scalar_i64(1));
  Value* idx = op.Range(b.scalar_i64(0), op.Mul(op.Gather(hw, b.scalar_i64(0)), cols), b.scalar_i64(1));
  auto column = [&](Value* v) { return op.Unsqueeze(op.Cast(v, {.to = DataType::FLOAT}), {1}); };
  Value* h = column(op.Div(idx, cols));
  Value* w = column(op.Sub(idx, op.Mul(op.Div(idx, cols), cols)));
  // inv_freq[j] = theta^(-2j / head_dim): rows take the even j, columns the odd j
  std::vector<float> even, odd;
  for (int64_t j = 0; j < head_dim_ / 2; ++j)
    (j % 2 == 0 ? even : odd)
        .push_back(static_cast<float>(1.0 / std::pow(theta_, 2.0 * static_cast<double>(j) / static_cast<double>(head_dim_))));
  const int64_t quarter = head_dim_ / 4;
  Value* freqs = op.Concat({op.Mul(h, b.constant_f32(even, {quarter})), op.Mul(w, b.constant_f32(odd, {quarter}))},
                           {.axis = 1});
  // [num_images, patches, head_dim / 2]: RotaryEmbedding takes one table row per batch row
  Value* images = op.Shape(pixel_values, {.start = 0, .end = 1});
  freqs = op.Expand(op.Unsqueeze(freqs, {0}), op.Concat({images, b.ints({1, 1})}, {.axis = 0}));
  Value* cos = op.Cos(freqs);
  Value* sin = op.Sin(freqs);
  if (dtype_ != DataType::FLOAT) {
    cos = op.Cast(cos, {.to = dtype_});
    sin = op.Cast(sin, {.to = dtype_});
  }
  return {cos, sin, 0};
}

std::vector<Value*> PixtralVisionTower::forward(Ops& op, Value* pixel_values, int64_t layers) const {
  auto scope = enter(op);
  const int64_t n = layers < 0 ? num_hidden_layers() : layers;
  Value* x = ln_pre->forward(op, patch_conv->forward(op, pixel_values));  // [images, patches, hidden]
  const AttentionContext ctx{nullptr, rope(op, pixel_values)};
  std::vector<Value*> hidden_states = {x};
  for (int64_t i = 0; i < n; ++i) {
    x = layers_[static_cast<size_t>(i)]->forward(op, x, ctx, nullptr, nullptr).hidden;
    hidden_states.push_back(x);
  }
  return hidden_states;
}

}  // namespace mobius
