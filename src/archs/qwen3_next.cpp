// Qwen3-Next (transformers/models/qwen3_next/modeling_qwen3_next.py Qwen3NextForCausalLM;
// configuration_qwen3_next.py): a hybrid of gated DeltaNet linear-attention layers
// (blocks/gated_delta_net.h) and gated full-attention layers, each followed by a sparse MoE with a
// gated shared expert (or a dense MLP):
//   model.embed_tokens -> model.layers.{i}: h = x + mixer(input_layernorm(x));
//     out = h + mlp(post_attention_layernorm(h)) -> model.norm -> lm_head
// Every RMSNorm (the layers', model.norm, q_norm / k_norm) scales by (1 + weight)
// (Qwen3NextRMSNorm); the gated DeltaNet's own norm by weight.
// mixer: linear_attn (Qwen3NextGatedDeltaNet) on the layers whose layer_types entry is
// "linear_attention", else self_attn (Qwen3NextAttention): q_proj gives each head's query and
// gate (heads * 2 * head_dim), q_norm / k_norm per head before RoPE on partial_rotary_factor
// (default 0.25) of head_dim, the output times sigmoid(gate) before o_proj; attention_bias on all
// four projections.
// mlp: Qwen3NextSparseMoeBlock (softmax top-k, norm_topk_prob; experts saved as qwen2_moe's
// experts.{e}.gate_proj / up_proj / down_proj; shared_expert scaled by sigmoid(shared_expert_gate))
// on the layers not in mlp_only_layers where num_experts > 0 and (i + 1) % decoder_sparse_step == 0,
// else Qwen3NextMLP of intermediate_size.
// Qwen3NextConfig.__post_init__: without layer_types, "full_attention" every
// full_attention_interval (default 4) layers (i + 1 divisible), "linear_attention" elsewhere.
// States: an attention layer past_key_values.{i}.key|value; a linear-attention layer
// past_key_values.{i}.conv_state [batch_size, 2 * key heads * key_head_dim + value heads *
// value_head_dim, linear_conv_kernel_dim - 1] and past_key_values.{i}.recurrent_state [batch_size,
// value heads, key_head_dim, value_head_dim] (transformers' conv_states / recurrent_states;
// docs/design.md "The state model"). onnxruntime-genai 0.18 has no model type for it.
#include "archs/qwen3_next.h"

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

DecoderSpec qwen3_next_layers_spec(const HfConfig& c, DataType dtype, const std::string& intermediate_key,
                                   double partial_rotary_factor) {
  DecoderSpec s = llama_spec(c, dtype, {.partial_rotary_factor = partial_rotary_factor}, intermediate_key);
  s.mlp.bias = false;  // Qwen3NextMLP / Qwen3_5MLP (mlp_bias not read)
  s.norm_weight_offset_one = true;
  s.attention.qk_norm = QKNorm{.weight_offset_one = true};
  s.attention.gate_in_q_proj = true;
  return s;
}

GatedDeltaNetOptions qwen3_next_delta(const HfConfig& c, const DecoderSpec& s, GatedDeltaNetProjections projections) {
  return GatedDeltaNetOptions{.hidden_size = s.hidden_size,
                              .num_key_heads = c.int_or("linear_num_key_heads", 16),
                              .num_value_heads = c.int_or("linear_num_value_heads", 32),
                              .key_head_dim = c.int_or("linear_key_head_dim", 128),
                              .value_head_dim = c.int_or("linear_value_head_dim", 128),
                              .conv_kernel = c.int_or("linear_conv_kernel_dim", 4),
                              .hidden_act = s.mlp.hidden_act,
                              .norm_eps = s.norm_eps,
                              .dtype = s.dtype,
                              .projections = projections};
}

DecoderSpec qwen3_next_spec(const HfConfig& c, DataType dtype, GatedDeltaNetProjections projections,
                            const std::string& intermediate_key) {
  DecoderSpec s = qwen3_next_layers_spec(c, dtype, intermediate_key, 0.25);
  const int64_t interval = c.int_or("full_attention_interval", 4);
  if (interval < 1) c.fail("full_attention_interval", "must be positive");
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    fallback.push_back((i + 1) % interval != 0 ? "linear_attention" : "full_attention");
  s.layer_types = read_layer_list(c, "layer_types", s.num_hidden_layers, {"linear_attention", "full_attention"},
                                  fallback);
  const GatedDeltaNetOptions delta = qwen3_next_delta(c, s, projections);
  s.make_mixer = [delta, types = s.layer_types](int64_t layer) {
    if (types.at(static_cast<size_t>(layer)) != "linear_attention") return LayerMixer{};
    return LayerMixer{"linear_attn", std::make_unique<GatedDeltaNetMixer>(delta)};
  };
  return s;
}

MoEOptions qwen3_next_moe(const HfConfig& c, const DecoderSpec& s) {
  MoEOptions m = read_moe_options(c, s, "num_experts", "moe_intermediate_size");
  set_shared_expert(c, m, s.mlp, 512);
  m.shared_expert_gate = true;
  return m;
}

std::unique_ptr<Architecture> create_qwen3_next(const HfConfig& c, DataType dtype) {
  DecoderSpec s = qwen3_next_spec(c, dtype, GatedDeltaNetProjections::per_key_head);
  if (c.int_or("num_experts", 512) == 0) return make_decoder(s);  // every layer Qwen3NextMLP
  MoEOptions m = qwen3_next_moe(c, s);
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  s.make_feed_forward = sparse_moe(m, s.mlp, read_sparse_layers(c, s.num_hidden_layers));
  return make_decoder(s);
}

}  // namespace mobius
