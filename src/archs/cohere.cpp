// Cohere and Cohere2 (transformers/models/{cohere,cohere2}/modeling_*.py, CohereConfig /
// Cohere2Config): attention and gated MLP in parallel on one input_layernorm,
// h = x + attn(ln(x)) + mlp(ln(x)); LayerNorm without bias (layer_norm_eps); q/k/v/o bias per
// attention_bias; interleaved rotary over the whole head (the default rope ignores
// partial_rotary_factor, a scaled one fails on it: refused); logits * logit_scale (0.0625); tied embeddings by default.
//   cohere   use_qk_norm: LayerNorm without bias over head_dim with a [heads, head_dim] weight;
//            rope_theta 500000 by default
//   cohere2  layer_types (default: every 4th layer full attention, the others sliding with
//            sliding_window 4096); RoPE only on the sliding layers (none if sliding_window is null)
//   cohere2_moe  cohere2 (transformers/models/cohere2_moe/modular_cohere2_moe.py) whose layers
//            mlp_layer_types calls "sparse" hold a MoE (Cohere2MoeSparseMoeBlock: top-k of the
//            logits weighted by their softmax, or by their sigmoid (renormalized when
//            norm_topk_prob) per expert_selection_fn; Mixtral experts of intermediate_size;
//            shared_experts of intermediate_size * num_shared_experts summed or averaged with them
//            per shared_expert_combination_strategy); the "dense" ones a gated MLP of
//            prefix_dense_intermediate_size (default intermediate_size), with RoPE whatever their
//            attention type when prefix_dense_sliding_window_pattern is 1. Without layer_types /
//            mlp_layer_types: the first first_k_dense_replace layers dense, sliding unless
//            (i + 1) % prefix_dense_sliding_window_pattern == 0, the others sparse, sliding unless
//            (i - first_k_dense_replace + 1) % sliding_window_pattern == 0 (Cohere2MoeConfig).
//            Norms: RMSNorm when rms_norm_eps is set, else LayerNorm without bias.
//   cohere_compass_text  the text decoder of Cohere's Compass (North) vision-language models
//            (transformers/models/cohere_compass/modular_cohere_compass.py, CohereCompassTextConfig,
//            CohereForCausalLM over CohereCompassTextModel): cohere2's layer with the rotary on
//            halves (Qwen3's apply_rotary_pos_emb), head_dim always hidden_size / heads, logit_scale
//            1 when null (its default); layer_types default all full attention, sliding_window 4096;
//            rope_parameters nested by layer type, an entry for each type in use, null for a NoPE
//            type (CohereCompassRotaryEmbedding). Text positions are equal on the three M-RoPE axes,
//            which leaves the plain rotation.
#include <algorithm>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "archs/layer_types.h"
#include "archs/moe_config.h"
#include "blocks/decoder.h"

namespace mobius {
namespace {

// The Cohere layer without its RoPE: parallel attention and MLP on one bias-free LayerNorm,
// interleaved rotary, logits * logit_scale (default `logit_scale`); `heads` names the head fields.
DecoderSpec cohere_layers(const HfConfig& c, DataType dtype, const HeadFields& heads, double logit_scale) {
  DecoderSpec s = layernorm_decoder_sizes(c, dtype);
  s.norm_bias = false;
  s.topology = LayerTopology::parallel_shared_norm;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.logit_scale = static_cast<float>(c.float_or("logit_scale", logit_scale));
  AttentionOptions& a = s.attention = read_attention(c, s.hidden_size, dtype, heads);
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", false);
  a.rope_interleaved = true;
  a.norm_eps = s.norm_eps;
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "silu"),
           false, dtype};
  return s;
}

DecoderSpec cohere_spec(const HfConfig& c, DataType dtype, double default_theta) {
  DecoderSpec s = cohere_layers(c, dtype, {}, 0.0625);
  s.rope = RopeConfig::from_hf(c, s.attention.head_dim, {.rope_theta = default_theta});
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_cohere(const HfConfig& c, DataType dtype) {
  DecoderSpec s = cohere_spec(c, dtype, 500000.0);
  if (c.bool_or("use_qk_norm", false))
    s.attention.qk_norm = QKNorm{.kind = NormKind::LayerNorm, .layout = QKNormLayout::weight_per_head};
  return std::make_unique<DecoderCausalLM>(s);
}

std::unique_ptr<Architecture> create_cohere2(const HfConfig& c, DataType dtype) {
  DecoderSpec s = cohere_spec(c, dtype, 10000.0);
  std::vector<std::string> pattern;
  const int64_t every = c.int_or("sliding_window_pattern", 4);
  if (every <= 0) c.fail("sliding_window_pattern", "must be positive");
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    pattern.push_back((i + 1) % every ? "sliding_attention" : "full_attention");
  s.layer_types = read_layer_types(c, s.num_hidden_layers, pattern);
  // Cohere2Attention: sliding_window = config.sliding_window on sliding layers, else None; RoPE
  // only where it is not None (so nowhere when config.json sets it to null)
  const bool absent = !c.json().contains("sliding_window");
  s.sliding_window = absent ? 4096 : c.int_or("sliding_window", 0);
  for (const std::string& t : s.layer_types)
    s.layer_uses_rope.push_back(t == "sliding_attention" && s.sliding_window > 0);
  return std::make_unique<DecoderCausalLM>(s);
}

std::unique_ptr<Architecture> create_cohere_compass_text(const HfConfig& c, DataType dtype) {
  // CohereCompassTextConfig.__post_init__: head_dim = hidden_size // num_attention_heads (a
  // head_dim in config.json is overwritten); logit_scale null by default (CausalLM: 1.0)
  DecoderSpec s = cohere_layers(c, dtype, {.head_dim = nullptr}, 1.0);
  // CohereCompassAttention rotates with Qwen3's apply_rotary_pos_emb (halves, not pairs)
  s.attention.rope_interleaved = false;
  s.layer_types = read_layer_types(c, s.num_hidden_layers,
                                   std::vector<std::string>(s.num_hidden_layers, "full_attention"));
  // the model builds the sliding-window mask whatever the layer types: a null window fails there
  s.sliding_window = c.json().contains("sliding_window") ? c.int_or("sliding_window", 0) : 4096;
  if (s.sliding_window < 1) c.fail("sliding_window", "expected a positive window");
  // CohereCompassRotaryEmbedding: rope_parameters[layer_type] for each layer type, null for NoPE
  // layers; default rope over the whole head at the entry's rope_theta. Text-only positions are
  // the same on the three M-RoPE axes, so mrope_section leaves the plain rotation.
  const std::optional<HfConfig> rope = c.sub("rope_parameters");
  for (const std::string& t : s.layer_types) {
    if (!rope || !rope->json().contains(t))
      c.fail("rope_parameters", "expected an entry (a dict or null) for layer type \"" + t + "\"");
    const std::optional<HfConfig> params = rope->sub(t);
    s.layer_uses_rope.push_back(params.has_value());
    if (!params) continue;
    if (!params->has("rope_theta")) c.fail("rope_parameters", "the \"" + t + "\" entry has no rope_theta");
    RopeConfig r = RopeConfig::from_params(c, params, s.attention.head_dim, {});
    if (t == "full_attention") s.rope = r;
    else s.layer_type_rope[t] = r;
  }
  return std::make_unique<DecoderCausalLM>(s);
}

std::unique_ptr<Architecture> create_cohere2_moe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = cohere_spec(c, dtype, 10000.0);
  // Cohere2MoeConfig declares rope_theta and rope_scaling as plain fields: its
  // standardize_rope_params reads config.json's rope_parameters, else the default rope at rope_theta,
  // and never the legacy rope_scaling (which other types' configs convert)
  const bool given = c.json().contains("rope_parameters");
  s.rope = RopeConfig::from_params(c, given ? c.sub("rope_parameters") : std::nullopt, s.attention.head_dim,
                                   {.rope_theta = c.float_or("rope_theta", 10000.0)});
  if (c.has("rms_norm_eps")) {
    s.norm_kind = NormKind::RMSNorm;
    s.norm_eps = static_cast<float>(c.get_float("rms_norm_eps"));
  }
  const int64_t first_dense = c.int_or("first_k_dense_replace", 0);
  if (first_dense < 0 || first_dense > s.num_hidden_layers)
    c.fail("first_k_dense_replace", "must be between 0 and num_hidden_layers");
  const int64_t prefix_every = c.int_or("prefix_dense_sliding_window_pattern", 1);
  if (prefix_every <= 0) c.fail("prefix_dense_sliding_window_pattern", "must be positive");
  const int64_t every = c.int_or("sliding_window_pattern", 4);
  if (every <= 0) c.fail("sliding_window_pattern", "must be positive");
  std::vector<std::string> attention, mlp;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i) {
    const bool prefix = i < first_dense;
    const bool full = prefix ? (i + 1) % prefix_every == 0 : (i - first_dense + 1) % every == 0;
    attention.push_back(full ? "full_attention" : "sliding_attention");
    mlp.push_back(prefix ? "dense" : "sparse");
  }
  s.layer_types = read_layer_types(c, s.num_hidden_layers, attention);
  mlp = read_layer_list(c, "mlp_layer_types", s.num_hidden_layers, {"dense", "sparse"}, mlp);
  const bool absent = !c.json().contains("sliding_window");
  s.sliding_window = absent ? 4096 : c.int_or("sliding_window", 0);
  std::vector<bool> sparse;
  for (size_t i = 0; i < mlp.size(); ++i) {
    sparse.push_back(mlp[i] == "sparse");
    // Cohere2MoeAttention.force_rope: a dense layer rotates when the prefix pattern is 1
    s.layer_uses_rope.push_back((s.layer_types[i] == "sliding_attention" && s.sliding_window > 0) ||
                                (mlp[i] == "dense" && prefix_every == 1));
  }
  MLPOptions routed = s.mlp;  // the experts' and shared experts' width: intermediate_size
  if (c.has("prefix_dense_intermediate_size")) {
    s.mlp.intermediate_size = c.get_int("prefix_dense_intermediate_size");
    if (s.mlp.intermediate_size <= 0 || s.mlp.intermediate_size > kMaxFfnSize)
      c.fail("prefix_dense_intermediate_size", "must be in [1, " + std::to_string(kMaxFfnSize) + "]");
  }
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return std::make_unique<DecoderCausalLM>(s);
  MoEOptions m = read_moe_options(c, s, "num_experts", "intermediate_size");
  const std::string selection = c.string_or("expert_selection_fn", "softmax");
  if (selection == "softmax") {
    m.router.kind = RouterKind::topk_softmax;
  } else if (selection == "sigmoid") {
    m.router.kind = RouterKind::topk_sigmoid;
    m.router.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  } else {
    c.fail("expert_selection_fn", "must be 'softmax' or 'sigmoid', got '" + selection + "'");
  }
  const int64_t shared = c.int_or("num_shared_experts", 0);
  if (shared < 0) c.fail("num_shared_experts", "must not be negative");
  if (shared > 0) {
    m.shared_expert_name = "shared_experts";
    m.shared_expert = routed;
    m.shared_expert.intermediate_size = routed.intermediate_size * shared;
    const std::string combine = c.string_or("shared_expert_combination_strategy", "average");
    if (combine != "sum" && combine != "average")
      c.fail("shared_expert_combination_strategy", "must be 'sum' or 'average', got '" + combine + "'");
    m.shared_expert_average = combine == "average";
  }
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
