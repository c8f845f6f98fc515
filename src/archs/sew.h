// SEW's parts (archs/sew.cpp), which SEW-D (archs/sew_d.cpp) composes with its own layers: the
// wav2vec2 skeleton (archs/wav2vec2.h) with SEWModel's feature projection and SEWEncoder's
// squeeze / upsample around an injected layer stack.
#pragma once

#include <memory>
#include <string>

#include "archs/wav2vec2.h"

namespace mobius {

// SEWConfig's / SEWDConfig's default 13 conv layers (64 .. 512 channels, kernels 10 3 1 3 1 3 1
// 3 1 2 1 2 1, strides 5 2 1 2 1 2 1 2 1 2 1 2 1).
ConvLayout sew_conv_layout();

// squeeze_factor (default 2), checked: throws mobius::Error naming the field outside [1, 2^24].
int64_t sew_squeeze_factor(const HfConfig& c);

// The model of `s`: SEWModel's layer_norm over conv_dim[-1] (eps `feature_layer_norm_eps`) and
// feature_projection (a Linear, only when conv_dim[-1] != hidden_size), then SEWEncoder (`encoder`):
//   pos = pos_conv_embed(h): the weight-norm position conv with stride squeeze_factor
//   h = AvgPool1d(squeeze_factor)(h) + pos, cut to the pooled length n (frames / squeeze, floor)
//   h = layers(h, squeezed frame mask)   registered as `layers_name` under "encoder"
//   h = upsample: act(projection(h)) viewed [.., n * squeeze_factor, hidden], zero-padded at the
//       end back to the encoder's input frames
// With an attention mask the padded frames are zeroed first and the squeezed frame j is valid
// when any frame of its window is (max_pool1d of the frame mask: j * squeeze_factor < length).
std::unique_ptr<Architecture> make_sew_family(const Wav2Vec2Sizes& s, int64_t squeeze_factor,
                                              float feature_layer_norm_eps, const std::string& layers_name,
                                              std::unique_ptr<SpeechEncoderBody> layers);

}  // namespace mobius
