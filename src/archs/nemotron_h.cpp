// Nemotron-H (transformers/models/nemotron_h/modeling_nemotron_h.py NemotronHForCausalLM;
// configuration_nemotron_h.py): the Mamba model (archs/mamba.h) whose layer i holds, as its
// mixer, the block its layers_block_type entry names, under the checkpoint's names (save_pretrained
// writes backbone.* and one tensor per expert: transformers' conversion_mapping "nemotron_h"):
//   backbone.embeddings -> backbone.layers.{i}: h = h + mixer(norm(h)) -> backbone.norm_f -> lm_head
//   "linear_attention": the Mamba-2 mixer (blocks/mamba2.h; mamba_num_heads heads of mamba_head_dim,
//     n_groups, ssm_state_size, conv_kernel, chunk_size, use_bias, use_conv_bias,
//     mamba_hidden_act; dt clamped below at time_step_min: NemotronHMamba2Mixer's time_step_limit)
//   "full_attention": NemotronHAttention, causal self-attention without position encoding or bias
//     (num_attention_heads, num_key_value_heads, head_dim)
//   "mlp": NemotronHMLP, down_proj(mlp_hidden_act(up_proj(x))) with mlp_bias
//   "moe": NemotronHMoE (blocks/moe.h SparseMoE): router gate (DeepSeek-V3's sigmoid scores +
//     e_score_correction_bias over n_group groups, topk_group kept, num_experts_per_tok,
//     norm_topk_prob, routed_scaling_factor), n_routed_experts ungated experts
//     (experts.{e}.up_proj / down_proj of moe_intermediate_size, mlp_hidden_act), through
//     fc1_latent_proj / fc2_latent_proj when moe_latent_size is set, plus shared_experts
//     (NemotronHMLP of moe_shared_expert_intermediate_size)
// layers_block_type (alias layer_types) or the legacy hybrid_override_pattern ("M", "*", "-", "E")
// gives the layers (num_hidden_layers is its length); the legacy mamba_* aliases NemotronHConfig
// pops (mamba_n_groups, mamba_d_conv, mamba_dt_min, mamba_conv_bias, mamba_chunk_size) are read.
// lm_head is its own even with tie_word_embeddings: NemotronHForCausalLM ties nothing
// (_tied_weights_keys {}).
// An attention layer carries past_key_values.{i}.key|value, a Mamba layer
// past_key_values.{i}.conv_state|recurrent_state, an MLP layer nothing; onnxruntime-genai 0.18
// has no model type for it: build with --runtime none.
// transformers' decode step (mamba2_selective_state_update) does not clamp dt at time_step_min
// while its prefill does; the graph clamps both.
#include <algorithm>
#include <cmath>
#include <optional>

#include "archs/archs.h"
#include "archs/mamba.h"
#include "archs/moe_config.h"
#include "blocks/attention.h"
#include "blocks/spec_check.h"

namespace mobius {

namespace {

// NemotronHConfig.layers_block_type: the list (layers_block_type or its alias layer_types), else
// hybrid_override_pattern's letters, else the class default.
std::vector<std::string> nemotron_h_layer_types(const HfConfig& c) {
  const char* field = c.has("layers_block_type") ? "layers_block_type" : "layer_types";
  std::vector<std::string> types;
  if (c.has(field)) {
    const nlohmann::json& list = c.json()[field];
    if (!list.is_array() || list.size() > static_cast<size_t>(kMaxLayers)) c.fail(field, "expected a list of layer types");
    for (const nlohmann::json& t : list) {
      const std::string type = t.is_string() ? t.get<std::string>() : "";
      if (type != "linear_attention" && type != "full_attention" && type != "mlp" && type != "moe")
        c.fail(field, "unsupported layer type '" + type + "' (linear_attention, full_attention, mlp, moe)");
      types.push_back(type);
    }
  } else if (c.has("hybrid_override_pattern")) {
    const nlohmann::json& pattern = c.json()["hybrid_override_pattern"];
    if (!pattern.is_string() || pattern.get<std::string>().size() > static_cast<size_t>(kMaxLayers))
      c.fail("hybrid_override_pattern", "expected a string of M, *, - and E");
    for (char ch : pattern.get<std::string>()) {
      if (ch == 'M') types.push_back("linear_attention");
      else if (ch == '*') types.push_back("full_attention");
      else if (ch == '-') types.push_back("mlp");
      else if (ch == 'E') types.push_back("moe");
      else c.fail("hybrid_override_pattern", std::string("unknown layer letter '") + ch + "' (M, *, -, E)");
    }
  } else {
    types = {"linear_attention", "moe", "full_attention", "mlp"};
  }
  if (types.empty()) c.fail(field, "expected at least one layer");
  return types;
}

// An int field read as NemotronHConfig.__post_init__ does: its legacy alias when config.json has it.
const char* aliased(const HfConfig& c, const char* alias, const char* field) { return c.has(alias) ? alias : field; }

}  // namespace

std::unique_ptr<Architecture> create_nemotron_h(const HfConfig& c, DataType dtype) {
  const std::vector<std::string> types = nemotron_h_layer_types(c);

  MambaSpec s{.vocab_size = c.get_int("vocab_size"), .hidden_size = c.get_int("hidden_size"),
              .num_hidden_layers = static_cast<int64_t>(types.size()),
              .layer_norm_epsilon = static_cast<float>(c.float_or("layer_norm_epsilon", 1e-5)),
              .tie_word_embeddings = false, .dtype = dtype};

  const Mamba2FieldNames n{.num_heads = "mamba_num_heads", .head_dim = "mamba_head_dim",
                           .n_groups = aliased(c, "mamba_n_groups", "n_groups"), .state_size = "ssm_state_size",
                           .conv_kernel = aliased(c, "mamba_d_conv", "conv_kernel"),
                           .chunk_size = aliased(c, "mamba_chunk_size", "chunk_size"), .expand = ""};
  Mamba2Options m{.hidden_size = s.hidden_size, .num_heads = c.int_or("mamba_num_heads", 128),
                  .head_dim = c.int_or("mamba_head_dim", 64), .n_groups = c.int_or(n.n_groups, 8),
                  .state_size = c.int_or("ssm_state_size", 128), .conv_kernel = c.int_or(n.conv_kernel, 4),
                  .chunk_size = c.int_or(n.chunk_size, 128), .use_bias = c.bool_or("use_bias", false),
                  .use_conv_bias = c.has("mamba_conv_bias") ? c.get_bool("mamba_conv_bias")
                                                            : c.bool_or("use_conv_bias", true),
                  .hidden_act = c.string_or("mamba_hidden_act", "silu"),
                  .layer_norm_epsilon = s.layer_norm_epsilon, .dtype = dtype};
  check_mamba2_fields(c, m, 0, n);
  // NemotronHMamba2Mixer: time_step_limit = (time_step_min, inf)
  const char* dt_min = aliased(c, "mamba_dt_min", "time_step_min");
  m.time_step_min = static_cast<float>(c.has("mamba_dt_min") ? c.get_float("mamba_dt_min")
                                                             : c.float_or("time_step_min", 0.001));
  if (!std::isfinite(m.time_step_min) || m.time_step_min < 0.0f) c.fail(dt_min, "expected a finite value >= 0");

  // NemotronHAttention: head_dim as config.json gives it (declared, default 128); no bias, no RoPE
  AttentionOptions a;
  a.hidden_size = s.hidden_size;
  a.num_attention_heads = c.get_int("num_attention_heads");
  a.num_key_value_heads = c.int_or("num_key_value_heads", a.num_attention_heads);
  a.head_dim = c.int_or("head_dim", 128);
  a.dtype = dtype;
  check_attention(a);
  const MLPOptions mlp{.hidden_size = s.hidden_size, .intermediate_size = c.int_or("intermediate_size", 21504),
                       .hidden_act = c.string_or("mlp_hidden_act", "relu2"), .bias = c.bool_or("mlp_bias", false),
                       .dtype = dtype, .gated = false, .up_name = "up_proj", .down_name = "down_proj"};
  if (mlp.intermediate_size < 1 || mlp.intermediate_size > kMaxFfnSize)
    c.fail("intermediate_size", "expected 1 to " + std::to_string(kMaxFfnSize));

  std::optional<MoEOptions> moe;
  if (std::find(types.begin(), types.end(), "moe") != types.end()) {
    moe.emplace();
    moe->hidden_size = s.hidden_size;
    moe->intermediate_size = c.int_or("moe_intermediate_size", 7688);
    moe->hidden_act = mlp.hidden_act;
    moe->layout = ExpertLayout::per_expert_ungated;
    moe->shared_expert_name = "shared_experts";
    moe->dtype = dtype;
    if (moe->intermediate_size < 1 || moe->intermediate_size > kMaxFfnSize)
      c.fail("moe_intermediate_size", "expected 1 to " + std::to_string(kMaxFfnSize));
    RouterOptions& r = moe->router;
    const char* experts = c.has("n_routed_experts") ? "n_routed_experts" : "num_local_experts";
    r.num_experts = c.int_or(experts, 8);
    r.top_k = c.int_or("num_experts_per_tok", 2);
    if (r.num_experts < 1 || r.num_experts > kMaxHeads) c.fail(experts, "expected 1 to " + std::to_string(kMaxHeads));
    if (r.top_k < 1 || r.top_k > r.num_experts) c.fail("num_experts_per_tok", "expected 1 to " + std::string(experts));
    r.routed_scaling_factor = static_cast<float>(c.float_or("routed_scaling_factor", 1.0));
    read_v3_router(c, *moe, true);  // NemotronHTopkRouter is DeepseekV3TopkRouter's "noaux_tc"
    moe->shared_expert = mlp;       // NemotronHMLP of its own width, with mlp_bias
    moe->shared_expert.intermediate_size = c.int_or("moe_shared_expert_intermediate_size", 7688);
    if (moe->shared_expert.intermediate_size < 1 || moe->shared_expert.intermediate_size > kMaxFfnSize)
      c.fail("moe_shared_expert_intermediate_size", "expected 1 to " + std::to_string(kMaxFfnSize));
    if (const std::optional<int64_t> latent = c.opt_int("moe_latent_size")) {
      if (*latent < 1 || *latent > kMaxHiddenSize) c.fail("moe_latent_size", "expected 1 to " + std::to_string(kMaxHiddenSize));
      moe->latent_size = *latent;
      moe->latent_bias = mlp.bias;
    }
  }

  s.make_mixer = [m, a, types](int64_t layer) -> std::unique_ptr<TokenMixer> {
    if (types.at(static_cast<size_t>(layer)) == "full_attention") return std::make_unique<Attention>(a);
    return std::make_unique<Mamba2Mixer>(m);
  };
  s.make_feed_forward = [mlp, moe, types](int64_t layer) -> std::unique_ptr<FeedForward> {
    const std::string& type = types.at(static_cast<size_t>(layer));
    if (type == "moe") return std::make_unique<SparseMoE>(*moe);
    return type == "mlp" ? make_mlp(mlp) : nullptr;
  };
  return std::make_unique<MambaCausalLM>(s);
}

}  // namespace mobius
