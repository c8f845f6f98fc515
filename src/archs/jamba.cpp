// Jamba (transformers/models/jamba/modular_jamba.py JambaForCausalLM; configuration_jamba.py): a
// hybrid of Mamba (selective-scan) and attention layers, each followed by a dense SwiGLU MLP or a
// mixture of experts:
//   model.embed_tokens -> model.layers.{i}: h = x + mixer(input_layernorm(x));
//     out = h + feed_forward(pre_ff_layernorm(h)) -> model.final_layernorm -> lm_head
// The mixer of layer i is self_attn (JambaAttention: Llama's projections without bias and without
// any position encoding) where i % attn_layer_period == attn_layer_offset, else mamba
// (JambaMambaMixer: blocks/mamba.h MambaMixer with RMS norms, with weights, of epsilon
// rms_norm_eps on dt, B and C; mamba_d_state, mamba_d_conv, mamba_expand, mamba_dt_rank ("auto":
// ceil(hidden_size / 16)), mamba_conv_bias, mamba_proj_bias; activation hidden_act).
// feed_forward is JambaSparseMoeBlock (router: softmax top num_experts_per_tok, not renormalized;
// experts.{e}.gate_proj / up_proj / down_proj as save_pretrained writes them) where
// i % expert_layer_period == expert_layer_offset and num_experts > 1, else JambaMLP (MistralMLP).
// An attention layer carries past_key_values.{i}.key|value, a Mamba layer
// past_key_values.{i}.conv_state|recurrent_state (docs/design.md "The state model"); onnxruntime-genai
// 0.18 runs it as its generic "decoder" type (layer_types "full_attention" / "linear_attention").
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/mamba.h"

namespace mobius {

std::unique_ptr<Architecture> create_jamba(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);  // rms_norm_eps: JambaConfig's default 1e-6 (config_defaults)
  s.attention.qkv_bias = s.attention.o_bias = false;  // JambaAttention's projections have none
  s.mlp.bias = false;                                 // MistralMLP
  s.names.norm = "final_layernorm";
  s.names.post_attention_layernorm = "pre_ff_layernorm";
  s.names.mlp = "feed_forward";
  s.layer_uses_rope.assign(s.layer_types.size(), false);  // no position encoding

  auto check_period = [&](const char* period_key, int64_t period, const char* offset_key, int64_t offset) {
    if (period < 1 || period > kMaxLayers) c.fail(period_key, "expected 1 to " + std::to_string(kMaxLayers));
    if (offset < 0 || offset >= period) c.fail(offset_key, "expected 0 to " + std::string(period_key) + " - 1");
  };
  const int64_t attn_period = c.int_or("attn_layer_period", 8), attn_offset = c.int_or("attn_layer_offset", 4);
  const int64_t expert_period = c.int_or("expert_layer_period", 2), expert_offset = c.int_or("expert_layer_offset", 1);
  check_period("attn_layer_period", attn_period, "attn_layer_offset", attn_offset);
  check_period("expert_layer_period", expert_period, "expert_layer_offset", expert_offset);

  // JambaConfig.layers_block_type: "attention" at i % attn_layer_period == attn_layer_offset
  for (size_t i = 0; i < s.layer_types.size(); ++i)
    s.layer_types[i] = static_cast<int64_t>(i) % attn_period == attn_offset ? "full_attention" : "linear_attention";

  const int64_t hidden = s.hidden_size, expand = c.int_or("mamba_expand", 2);
  if (expand < 1 || expand > kMaxSmallSize) c.fail("mamba_expand", "expected 1 to " + std::to_string(kMaxSmallSize));
  const nlohmann::json* rank = c.json().contains("mamba_dt_rank") ? &c.json()["mamba_dt_rank"] : nullptr;
  const bool auto_rank = !rank || rank->is_null() || (rank->is_string() && rank->get<std::string>() == "auto");
  const MambaOptions m{.hidden_size = hidden,
                       .intermediate_size = expand * hidden,  // both bounded: no overflow
                       .state_size = c.int_or("mamba_d_state", 16),
                       .conv_kernel = c.int_or("mamba_d_conv", 4),
                       .time_step_rank = auto_rank ? (hidden + 15) / 16 : c.get_int("mamba_dt_rank"),
                       .use_bias = c.bool_or("mamba_proj_bias", false),
                       .use_conv_bias = c.bool_or("mamba_conv_bias", true),
                       .hidden_act = s.mlp.hidden_act,
                       .dt_b_c_rms_eps = s.norm_eps,
                       .dt_b_c_norm_weights = true,
                       .dtype = dtype};
  s.make_mixer = [m, types = s.layer_types](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "linear_attention") return LayerMixer{};
    return LayerMixer{"mamba", std::make_unique<MambaMixer>(m)};
  };

  // JambaConfig.layers_num_experts: num_experts at i % expert_layer_period == expert_layer_offset;
  // one expert: JambaMLP on every layer
  if (c.int_or("num_experts", 16) < 2) return make_decoder(s);
  MoEOptions moe = read_moe_options(c, s, "num_experts", "intermediate_size");
  moe.router_name = "router";  // JambaTopKRouter: softmax top-k, not renormalized
  std::vector<bool> sparse;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i) sparse.push_back(i % expert_period == expert_offset);
  s.make_feed_forward = sparse_moe(moe, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
