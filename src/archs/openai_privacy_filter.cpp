// OpenAI Privacy Filter (transformers/models/openai_privacy_filter/modeling_openai_privacy_filter.py,
// configuration_openai_privacy_filter.py; OpenAIPrivacyFilterModel and
// OpenAIPrivacyFilterForTokenClassification): GPT-OSS' layers (archs/gpt_oss.cpp) run as a
// bidirectional encoder (archs/bidirectional_decoder.h):
//   attention  q/k/v/o bias (attention_bias, default true), a learned per-head sink logit
//              (blocks/attention_sinks.h), q and k each scaled by head_dim**-0.25 (= the usual
//              head_dim**-0.5 on the scores); RoPE interleaved (pairs 2i, 2i+1) at positions
//              0..seq-1, without rope_parameters the config's yarn dict (factor 32, beta_fast 32,
//              beta_slow 1, truncate false, original_max_position_embeddings 4096; theta 150000)
//   mask       every layer: create_bidirectional_sliding_window_mask, the tokens j of attention_mask
//              with |i - j| <= sliding_window (default 128; the attention's sliding_window + 1 is
//              read only by the flash kernels)
//   mlp        router (weight + bias): top-k logits, softmax over the k, / top_k; experts stored
//              stacked [E, in, out] with biases, gate | up halves (not GPT-OSS' interleaving),
//              clamped SwiGLU (swiglu_limit, swiglu_alpha) with (up + 1); the sum * top_k (the
//              two scalings cancel: the graph has neither)
//   norms      RMSNorm (rms_norm_eps) before attention and MLP, the final `norm`
// Heads: token-classification only (GenericForTokenClassification: `score`, base_model_prefix
// "model").
#include "archs/archs.h"
#include "archs/bidirectional_decoder.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_openai_privacy_filter(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype, {.rope_parameters = R"({
      "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": false,
      "original_max_position_embeddings": 4096})"});
  s.attention.qkv_bias = s.attention.o_bias = c.bool_or("attention_bias", true);
  s.attention.sinks = true;
  s.attention.rope_interleaved = true;
  const int64_t window = c.int_or("sliding_window", 128);
  if (window < 0 || window > kMaxPositions)
    c.fail("sliding_window", "must be within 0.." + std::to_string(kMaxPositions));
  s.sliding_window = window;
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "sliding_attention");
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.kind = RouterKind::topk_softmax;
  m.router.bias = true;
  m.router_name = "router";
  m.layout = ExpertLayout::stacked_in_out_biased;
  m.swiglu_limit = static_cast<float>(c.float_or("swiglu_limit", 7.0));
  m.swiglu_alpha = static_cast<float>(c.float_or("swiglu_alpha", 1.702));
  if (m.swiglu_limit <= 0) c.fail("swiglu_limit", "must be positive");
  s.make_feed_forward = sparse_moe(m, s.mlp);
  TextHeadLayout heads{.base_model_prefix = "model", .base_model_class = "OpenAIPrivacyFilterModel",
                       .missing = {"fill-mask", "text-classification", "question-answering", "multiple-choice"},
                       .token_classification = {.out = "score"}};
  return std::make_unique<BidirectionalDecoder>(s, window, std::move(heads));
}

}  // namespace mobius
