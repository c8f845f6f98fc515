// GraniteMoeHybrid (transformers/models/granitemoehybrid/modular_granitemoehybrid.py
// GraniteMoeHybridForCausalLM, Granite 4.0): GraniteMoeShared's decoder (archs/mixtral.cpp: the
// µP multipliers, block_sparse_moe + shared_mlp) whose "linear_attention" layers (layer_types;
// the legacy "mamba" / "attention" are remapped as transformers' remap_legacy_layer_types) hold
// Bamba's Mamba-2 mixer (archs/bamba.h) under "mamba" instead of self_attn:
//   h = x + mixer(input_layernorm(x)) * residual_multiplier;
//   out = h + (block_sparse_moe(n2(h)) + shared_mlp(n2(h))) * residual_multiplier
// num_local_experts 0: shared_mlp alone. RoPE only with position_embedding_type "rope" (default
// none: the attention layers have no position encoding). An attention layer carries
// past_key_values.{i}.key|value, a Mamba layer past_key_values.{i}.conv_state|recurrent_state.
#include "archs/archs.h"
#include "archs/bamba.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_granitemoehybrid(const HfConfig& c, DataType dtype) {
  DecoderSpec s = granitemoe_spec(c, dtype);
  // GraniteMoeHybridConfig.__post_init__: every layer "linear_attention" without layer_types
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "linear_attention");
  if (c.has("layer_types")) {
    const nlohmann::json& types = c.json()["layer_types"];
    if (!types.is_array() || types.size() != s.layer_types.size())
      c.fail("layer_types", "expected a list of num_hidden_layers layer types");
    for (size_t i = 0; i < types.size(); ++i) {
      const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
      if (t == "mamba" || t == "linear_attention") continue;
      if (t != "attention" && t != "full_attention")
        c.fail("layer_types", "unsupported layer type '" + t + "' (mamba, attention, linear_attention, full_attention)");
      s.layer_types[i] = "full_attention";
    }
  }
  // GraniteMoeHybridModel: a rotary embedding only for position_embedding_type "rope"
  if (c.string_or("position_embedding_type", "") != "rope") s.layer_uses_rope.assign(s.layer_types.size(), false);
  // GraniteMoeHybridDecoderLayer: block_sparse_moe only when num_local_experts > 0; shared_mlp always
  // (num_local_experts is read as GraniteMoE reads it: required, or its alias num_experts)
  std::optional<MoEOptions> experts;
  if (!c.has("num_local_experts") || c.get_int("num_local_experts") > 0) experts = granitemoe_experts(c, s);
  const int64_t shared = c.int_or("shared_intermediate_size", 1024);
  if (shared < 1) c.fail("shared_intermediate_size", "must be positive");
  add_granite_shared_mlp(s, shared, experts);
  s.make_mixer = mamba_on_linear_attention(s.layer_types, bamba_mamba_options(c, s));
  return make_decoder(s);
}

}  // namespace mobius
