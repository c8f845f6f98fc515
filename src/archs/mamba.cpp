#include "archs/mamba.h"

#include "archs/archs.h"
#include "blocks/attention.h"
#include "util/error.h"

namespace mobius {

// backbone.layers.{i}: norm + mixer, with the residual around them (MambaBlock); the mixer a token
// mixer or a feed-forward block (MambaSpec::make_feed_forward).
class MambaCausalLM::Layer : public Module {
 public:
  Layer(const MambaSpec& s, int64_t i) {
    norm = child<RMSNorm>("norm", NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_epsilon, .dtype = s.dtype});
    if (std::unique_ptr<FeedForward> ff = s.make_feed_forward ? s.make_feed_forward(i) : nullptr)
      feed_forward = adopt("mixer", std::move(ff));
    else
      mixer = adopt("mixer", s.make_mixer(i));
  }
  // The layer's states: its token mixer's; none for a feed-forward block.
  LayerStates states() const { return mixer ? mixer->states() : LayerStates{}; }
  RMSNorm* norm;
  TokenMixer* mixer = nullptr;
  FeedForward* feed_forward = nullptr;
};

class MambaCausalLM::Backbone : public Module {
 public:
  explicit Backbone(const MambaSpec& s) {
    embeddings = child<Embedding>("embeddings", s.vocab_size, s.hidden_size, s.dtype);
    for (int64_t i = 0; i < s.num_hidden_layers; ++i) layers.push_back(child<Layer>("layers." + std::to_string(i), s, i));
    norm_f = child<RMSNorm>("norm_f", NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_epsilon, .dtype = s.dtype});
  }
  Embedding* embeddings;
  std::vector<Layer*> layers;
  RMSNorm* norm_f;
};

MambaSpec mamba_backbone_spec(const HfConfig& c, DataType dtype) {
  return {.vocab_size = c.get_int("vocab_size"), .hidden_size = c.get_int("hidden_size"),
          .num_hidden_layers = c.get_int("num_hidden_layers"),
          .layer_norm_epsilon = static_cast<float>(c.float_or("layer_norm_epsilon", 1e-5)),
          .tie_word_embeddings = c.bool_or("tie_word_embeddings", true), .dtype = dtype};
}

MambaOptions mamba_options(const HfConfig& c, DataType dtype) {
  const int64_t hidden = c.get_int("hidden_size"), expand = c.int_or("expand", 2);
  if (expand < 1 || expand > kMaxSmallSize) c.fail("expand", "expected 1 to " + std::to_string(kMaxSmallSize));
  const nlohmann::json* rank = c.json().contains("time_step_rank") ? &c.json()["time_step_rank"] : nullptr;
  const bool auto_rank = !rank || rank->is_null() || (rank->is_string() && rank->get<std::string>() == "auto");
  return {.hidden_size = hidden,
          .intermediate_size = expand * hidden,  // both bounded: no overflow
          .state_size = c.int_or("state_size", 16),
          .conv_kernel = c.int_or("conv_kernel", 4),
          .time_step_rank = auto_rank ? (hidden + 15) / 16 : c.get_int("time_step_rank"),  // math.ceil(hidden / 16)
          .use_bias = c.bool_or("use_bias", false),
          .use_conv_bias = c.bool_or("use_conv_bias", true),
          .hidden_act = c.string_or("hidden_act", "silu"),
          .dt_b_c_rms_eps = std::nullopt,
          .dtype = dtype};
}

MambaCausalLM::MambaCausalLM(const MambaSpec& s) : s_(s) {
  if (s.vocab_size < 1 || s.vocab_size > kMaxVocabSize)
    throw FieldError("field 'vocab_size': expected 1 to " + std::to_string(kMaxVocabSize));
  if (s.num_hidden_layers < 1 || s.num_hidden_layers > kMaxLayers)
    throw FieldError("field 'num_hidden_layers': expected 1 to " + std::to_string(kMaxLayers));
  backbone_ = child<Backbone>("backbone", s);
  lm_head_ = child<LMHead>("lm_head", LMHeadOptions{s.hidden_size, s.vocab_size, false, s.dtype},
                           s.tie_word_embeddings ? backbone_->embeddings : nullptr);
}

std::vector<LayerStates> MambaCausalLM::layer_states() const {
  std::vector<LayerStates> states;
  for (const Layer* l : backbone_->layers) states.push_back(l->states());
  return states;
}

CausalLMOutputs MambaCausalLM::forward(Ops& op, const CausalLMInputs& in) const {
  CausalLMOutputs out;
  Value* tokens = in.inputs_embeds ? in.inputs_embeds : in.input_ids;
  Value* h;
  AttentionContext ctx{nullptr};
  // which contexts the layers read: a self-attention's causal mask, a state mixer's token mask
  bool attention = false, state_mixer = false;
  for (const Layer* l : backbone_->layers) {
    for (const LayerState& state : l->states()) (is_self_attention_cache(state) ? attention : state_mixer) = true;
  }
  {
    auto s = op.builder().scope("backbone");
    h = in.inputs_embeds ? in.inputs_embeds : backbone_->embeddings->forward(op, in.input_ids);
    if (state_mixer) ctx.token_mask = step_token_mask(op, in.attention_mask, tokens, s_.dtype);  // 0 at (left) padding
    if (attention) ctx.mask = causal_mask(op, in.attention_mask, tokens, s_.dtype, 0, in.attention_overlay);
    for (size_t i = 0; i < backbone_->layers.size(); ++i) {
      const Layer* l = backbone_->layers[i];
      auto ls = op.builder().scope("layers." + std::to_string(i));
      Value* x = l->norm->forward(op, h);
      if (l->feed_forward) {
        h = op.Add(h, l->feed_forward->forward(op, x));
        out.present.emplace_back();
        continue;
      }
      MixerResult r = l->mixer->mix(op, x, ctx, in.past.at(i));
      h = op.Add(h, r.hidden);
      out.present.push_back(std::move(r.present));
    }
    h = backbone_->norm_f->forward(op, h);
  }
  out.logits = lm_head_->forward(op, h);
  return out;
}

std::unique_ptr<Architecture> create_mamba(const HfConfig& c, DataType dtype) {
  MambaSpec s = mamba_backbone_spec(c, dtype);
  s.make_mixer = [m = mamba_options(c, dtype)](int64_t) { return std::make_unique<MambaMixer>(m); };
  return std::make_unique<MambaCausalLM>(s);
}

}  // namespace mobius
