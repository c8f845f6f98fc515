// Token mixers side by side on one input, their outputs summed: a layer that runs self-attention
// and a state-space mixer in parallel, each scaled on its way in and out. Falcon-H1
// (transformers/models/falcon_h1/modeling_falcon_h1.py FalconH1DecoderLayer):
//   mamba(x) * ssm_out_multiplier + self_attn(x * attention_in_multiplier) * attention_out_multiplier
// Adopted under the name "" by a decoder layer (blocks/decoder.h LayerMixer), each mixer binds at
// the layer's level under its own name (model.layers.{i}.mamba, model.layers.{i}.self_attn).
// Its states are its mixers' states in the order added (tasks/layer_state.h: a layer then carries
// e.g. past_key_values.{i}.conv_state, .recurrent_state, .key and .value); mix() hands each mixer
// its own tensors of `past` and returns their presents in the same order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "blocks/token_mixer.h"

namespace mobius {

// A mixer's input and output multipliers (1: no node).
struct MixerScales {
  float input = 1.0f;
  float output = 1.0f;
};

class ParallelMixers : public TokenMixer {
 public:
  // Registers `mixer` as the child `name`; outputs are summed in the order added. At most one of
  // the mixers carries a self-attention cache (TokenMixer::states).
  void add(const std::string& name, std::unique_ptr<TokenMixer> mixer, MixerScales scales = {});
  LayerStates states() const override;
  // x: [batch, seq, hidden]; ctx: what each mixer reads (the attention's mask and RoPE tables, a
  // state mixer's token mask); past: the mixers' state tensors in turn. Returns the sum
  // [batch, seq, hidden] and the presents in the order of past.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

 private:
  struct Part {
    TokenMixer* mixer;
    MixerScales scales;
  };
  std::vector<Part> parts_;
};

}  // namespace mobius
