#include "blocks/short_conv.h"

#include "blocks/mamba.h"
#include "config/hf_config.h"
#include "util/error.h"

namespace mobius {

ShortConvMixer::ShortConvMixer(const ShortConvOptions& o) : o_(o) {
  if (o.hidden_size < 1 || o.hidden_size > kMaxHiddenSize)
    throw FieldError("field 'hidden_size': expected 1 to " + std::to_string(kMaxHiddenSize));
  if (o.kernel < 2 || o.kernel > kMaxSmallSize)
    throw FieldError("field 'conv_L_cache': expected 2 to " + std::to_string(kMaxSmallSize));
  const int64_t h = o.hidden_size;
  in_proj = child<Linear>("in_proj", LinearOptions{.in_features = h, .out_features = 3 * h, .bias = o.bias,
                                                   .dtype = o.dtype});
  conv_weight = param("conv.weight", {h, 1, o.kernel}, o.dtype);
  if (o.bias) conv_bias = param("conv.bias", {h}, o.dtype);
  out_proj = child<Linear>("out_proj", LinearOptions{.in_features = h, .out_features = h, .bias = o.bias,
                                                     .dtype = o.dtype});
}

LayerStates ShortConvMixer::states() const {
  return {{.kind = StateKind::recurrent,
          .tensors = {{.name = "conv_state", .shape = {"batch_size", o_.hidden_size, o_.kernel - 1}}}}};
}

MixerResult ShortConvMixer::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.size() == 1 && ctx.token_mask, "a short convolution takes {conv_state} and a token mask");
  auto s = enter(op);
  const int64_t h = o_.hidden_size;
  Value* mask = op.Unsqueeze(ctx.token_mask, {2});  // [batch, seq, 1]
  std::vector<Value*> bcx = op.Split(in_proj->forward(op, op.Mul(x, mask)), {h, h, h}, {.axis = 2});
  auto [conv, conv_state] = causal_conv1d(op, op.Mul(bcx[0], bcx[2]), past[0], conv_weight->value(op),
                                          conv_bias ? conv_bias->value(op) : nullptr, h, o_.kernel, "");
  return {out_proj->forward(op, op.Mul(bcx[1], conv)), {conv_state}};
}

}  // namespace mobius
