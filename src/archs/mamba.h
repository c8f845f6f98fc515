// Mamba causal LMs (transformers/models/mamba/modeling_mamba.py MambaForCausalLM; FalconMamba,
// models/falcon_mamba, and Mamba-2, models/mamba2 Mamba2ForCausalLM, share the model and change
// the mixer, archs/falcon_mamba.cpp, archs/mamba2.cpp):
//   backbone.embeddings -> backbone.layers.{i}: h = h + mixer(norm(h)) (RMSNorm; blocks/mamba.h,
//   blocks/mamba2.h) -> backbone.norm_f -> lm_head (tied to the embeddings where configured)
// Every layer carries its mixer's {conv_state, recurrent_state}, named
// past_key_values.{i}.conv_state|recurrent_state and present.{i}.* (tasks/text_generation.h);
// position_ids is an input of the contract that the model does not read. onnxruntime-genai 0.18
// has no model type for it: build with --runtime none.
// Mamba's residual_in_fp32 (the residual stream in float32 under a float16 model) is not
// reproduced: the stream is in the model dtype.
// Nemotron-H (archs/nemotron_h.cpp) is the same model whose layers hold, as their
// mixer, a Mamba-2 mixer, a self-attention without position encoding (the layers' causal mask,
// past_key_values.{i}.key|value) or a feed-forward block (an MLP or a mixture of experts; no state).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "blocks/linear.h"
#include "blocks/mlp.h"
#include "blocks/mamba.h"
#include "blocks/mamba2.h"
#include "config/hf_config.h"
#include "tasks/text_generation.h"

namespace mobius {

// The token mixer of layer `layer` (backbone.layers.{layer}.mixer); it checks its own sizes.
using MixerFactory = std::function<std::unique_ptr<TokenMixer>(int64_t layer)>;
// The feed-forward block that layer `layer` holds as its mixer instead of a token mixer (Nemotron-H's
// "mlp" / "moe" layers: no state); null where the layer holds make_mixer's.
using MixerFeedForwardFactory = std::function<std::unique_ptr<FeedForward>(int64_t layer)>;

struct MambaSpec {
  int64_t vocab_size;
  int64_t hidden_size;
  int64_t num_hidden_layers;
  float layer_norm_epsilon = 1e-5f;
  bool tie_word_embeddings = true;
  MixerFactory make_mixer = {};
  MixerFeedForwardFactory make_feed_forward = {};  // empty: every layer holds make_mixer's
  DataType dtype = DataType::FLOAT;
};

// The fields of the model around the mixers (vocab_size, hidden_size, num_hidden_layers,
// layer_norm_epsilon, tie_word_embeddings); make_mixer is left to the caller.
MambaSpec mamba_backbone_spec(const HfConfig& c, DataType dtype);
// MambaConfig's mixer fields (configuration_mamba.py: state_size, expand, conv_kernel, use_bias,
// use_conv_bias, hidden_act, time_step_rank "auto" = ceil(hidden_size / 16); FalconMambaConfig
// adds mixer_rms_eps). Throws mobius::Error naming the field.
MambaOptions mamba_options(const HfConfig& c, DataType dtype);

// The config fields of a Mamba-2 mixer's sizes, as a type spells them (Mamba2Config: num_heads,
// head_dim, ...; Bamba: mamba_n_heads, mamba_d_head, ...).
struct Mamba2FieldNames {
  std::string num_heads, head_dim, n_groups, state_size, conv_kernel, chunk_size, expand;
};
// The sizes of `m` (read from `c` under `names`; `expand` its expand field) checked under the
// config's own names: each within its cap, n_groups dividing num_heads, conv_kernel at least 2,
// num_heads * head_dim = hidden_size * expand (transformers' validate_architecture), so that
// Mamba2Mixer's own check (blocks/spec_check.h) never fires. An empty names.expand: the type has
// no expand relation (Nemotron-H: the intermediate size is mamba_num_heads * mamba_head_dim).
// Throws mobius::Error naming the field.
void check_mamba2_fields(const HfConfig& c, const Mamba2Options& m, int64_t expand, const Mamba2FieldNames& names);
// time_step_limit ([min, max], transformers writing an infinite max as {"__float__": "Infinity"})
// into m.time_step_min / time_step_max; unchanged when config.json has none. Throws mobius::Error
// naming the field.
void read_time_step_limit(const HfConfig& c, Mamba2Options& m);

class MambaCausalLM : public CausalLM {
 public:
  // Throws mobius::FieldError for vocab_size or num_hidden_layers out of range, and what the
  // mixers throw.
  explicit MambaCausalLM(const MambaSpec& s);
  DataType dtype() const override { return s_.dtype; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> layer_states() const override;
  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override;

 private:
  class Layer;
  class Backbone;
  MambaSpec s_;
  Backbone* backbone_;
  LMHead* lm_head_;
};

}  // namespace mobius
