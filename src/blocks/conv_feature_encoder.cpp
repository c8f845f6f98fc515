#include "blocks/conv_feature_encoder.h"

#include "blocks/activation.h"
#include "util/error.h"

namespace mobius {

FeatureConvLayer::FeatureConvLayer(const Conv1dOptions& conv_options, std::optional<FeatExtractNorm> norm,
                                   std::string activation)
    : norm_(norm), activation_(std::move(activation)) {
  conv = child<Conv1d>("conv", conv_options);
  if (norm) {
    norm_weight = param("layer_norm.weight", {conv_options.out_channels}, conv_options.dtype);
    norm_bias = param("layer_norm.bias", {conv_options.out_channels}, conv_options.dtype);
  }
}

Value* FeatureConvLayer::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* h = conv->forward(op, x);
  if (norm_ == FeatExtractNorm::group) {  // nn.GroupNorm(C, C): per channel over time
    h = op.InstanceNormalization(h, norm_weight->value(op), norm_bias->value(op), {.epsilon = 1e-5f});
  } else if (norm_ == FeatExtractNorm::layer) {  // nn.LayerNorm(C) over the channels of each frame
    h = op.Transpose(h, {.perm = {0, 2, 1}});
    h = op.LayerNormalization(h, norm_weight->value(op), norm_bias->value(op), {.axis = -1, .epsilon = 1e-5f});
    h = op.Transpose(h, {.perm = {0, 2, 1}});
  }
  return activation(op, activation_, h);
}

ConvFeatureEncoder::ConvFeatureEncoder(const ConvFeatureEncoderOptions& o) : o_(o) {
  MOBIUS_ASSERT(!o.conv_dim.empty() && o.conv_dim.size() == o.conv_kernel.size() &&
                    o.conv_dim.size() == o.conv_stride.size(),
                "conv feature encoder: one conv_dim, conv_kernel, conv_stride per layer");
  for (size_t i = 0; i < o.conv_dim.size(); ++i) {
    std::optional<FeatExtractNorm> norm;
    if (o.norm == FeatExtractNorm::layer || i == 0) norm = o.norm;
    Conv1dOptions c{.in_channels = i == 0 ? 1 : o.conv_dim[i - 1],
                    .out_channels = o.conv_dim[i],
                    .kernel_size = o.conv_kernel[i],
                    .stride = o.conv_stride[i],
                    .bias = o.conv_bias,
                    .dtype = o.dtype};
    layers_.push_back(child<FeatureConvLayer>("conv_layers." + std::to_string(i), c, norm, o.activation));
  }
}

Value* ConvFeatureEncoder::forward(Ops& op, Value* input_values) const {
  auto s = enter(op);
  Value* h = op.Unsqueeze(input_values, {1});  // [batch, 1, samples]
  for (const FeatureConvLayer* layer : layers_) h = layer->forward(op, h);
  return op.Transpose(h, {.perm = {0, 2, 1}});  // [batch, frames, channels]
}

Value* ConvFeatureEncoder::output_lengths(Ops& op, Value* lengths) const {
  auto s = op.builder().scope("output_lengths");
  Value* n = lengths;
  for (size_t i = 0; i < o_.conv_kernel.size(); ++i)  // int64 Div truncates; lengths >= kernel floor
    n = op.Add(op.Div(op.Sub(n, static_cast<double>(o_.conv_kernel[i])), static_cast<double>(o_.conv_stride[i])), 1);
  return n;
}

Value* ConvFeatureEncoder::frames_valid(Ops& op, Value* attention_mask, Value* features) const {
  auto s = op.builder().scope("frames_valid");
  Value* lengths = output_lengths(op, op.ReduceSum(attention_mask, {1}, {.keepdims = 0}));  // [batch]
  Value* frames = op.Squeeze(op.Shape(features, {.start = 1, .end = 2}), {0});
  Value* index = op.Unsqueeze(op.Range(0, frames, 1), {0});  // [1, frames]
  return op.Less(index, op.Unsqueeze(lengths, {1}));
}

}  // namespace mobius
