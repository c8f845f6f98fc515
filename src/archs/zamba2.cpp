// Zamba2 (transformers/models/zamba2/modeling_zamba2.py Zamba2ForCausalLM; configuration_zamba2.py):
// the Zamba model (archs/zamba.h) with Mamba-2 mixers (blocks/mamba2.h) and num_mem_blocks shared
// blocks (model.layers.{i}.shared_transformer; one copy per hybrid layer without
// tie_word_embeddings, archs/zamba.h) applied in turn by the "hybrid" layers of
// layers_block_type (alias layer_types; Zamba2Config's default pattern of 54 layers when absent).
// Zamba2Config.__post_init__ derives the sizes, whatever config.json says:
//   attention_head_dim = 2 * hidden_size // num_attention_heads; mamba_headdim =
//   mamba_expand * hidden_size // n_mamba_heads; intermediate_size null -> 4 * hidden_size.
// Mamba-2 mixer (Zamba2MambaMixer): n_mamba_heads heads, mamba_ngroups groups, mamba_d_state,
// mamba_d_conv, chunk_size, in_proj / out_proj bias add_bias_linear, conv1d always with bias
// (use_conv_bias is not read), silu, gated norm after the gate with epsilon 1e-5, dt clamped below at
// time_step_min (time_step_limit (time_step_min, inf); transformers' decode step does not clamp,
// its prefill does; the graph clamps both).
// Shared block (Zamba2AttentionDecoderLayer): attention of num_attention_heads (num_key_value_heads)
// heads of attention_head_dim, RoPE with use_mem_rope (rope_parameters over attention_head_dim;
// use_long_context only sets max_position_embeddings to 16384); Zamba2MLP: gate_up_proj with
// add_bias_linear, act hidden_act. Each application a (the a-th hybrid layer) of block a %
// num_mem_blocks adds its low-rank adapters of adapter_rank (blocks/low_rank_adapter.h):
// gate_up_proj_adapter_list.{a} always, linear_{q,k,v}_adapter_list.{a} with
// use_shared_attention_adapter (their 2 H outputs: q and k/v of 2 H, so num_key_value_heads =
// num_attention_heads and 2 H divisible by the heads).
#include <algorithm>
#include <cmath>

#include "archs/archs.h"
#include "archs/mamba.h"
#include "archs/zamba.h"
#include "blocks/mamba2.h"

namespace mobius {

std::unique_ptr<Architecture> create_zamba2(const HfConfig& c, DataType dtype) {
  const int64_t hidden = c.get_int("hidden_size");
  ZambaSpec s{.vocab_size = c.get_int("vocab_size"), .hidden_size = hidden,
              .layer_types = zamba_layer_types(c, {}),
              .rms_norm_eps = static_cast<float>(c.float_or("rms_norm_eps", 1e-5)),
              .tie_word_embeddings = c.bool_or("tie_word_embeddings", true), .shared_name = "shared_transformer",
              .num_mem_blocks = c.int_or("num_mem_blocks", 1), .dtype = dtype};
  s.share_blocks = s.tie_word_embeddings;
  if (s.layer_types.empty()) {  // Zamba2Config's default layers_block_type
    s.layer_types = {"linear_attention"};
    for (int k = 0; k < 7; ++k) {
      s.layer_types.insert(s.layer_types.end(), 5, "linear_attention");
      s.layer_types.push_back("hybrid");
    }
    for (int run : {4, 3, 2}) {
      s.layer_types.insert(s.layer_types.end(), static_cast<size_t>(run), "linear_attention");
      if (run != 2) s.layer_types.push_back("hybrid");
    }
  }
  if (s.num_mem_blocks < 1 || s.num_mem_blocks > kMaxLayers)
    c.fail("num_mem_blocks", "expected 1 to " + std::to_string(kMaxLayers));

  const int64_t expand = c.int_or("mamba_expand", 2), heads = c.int_or("n_mamba_heads", 8);
  if (expand < 1 || expand > kMaxSmallSize) c.fail("mamba_expand", "expected 1 to " + std::to_string(kMaxSmallSize));
  if (heads < 1 || heads > kMaxHeads) c.fail("n_mamba_heads", "expected 1 to " + std::to_string(kMaxHeads));
  Mamba2Options m{.hidden_size = hidden, .num_heads = heads, .head_dim = expand * hidden / heads,
                  .n_groups = c.int_or("mamba_ngroups", 1), .state_size = c.int_or("mamba_d_state", 64),
                  .conv_kernel = c.int_or("mamba_d_conv", 4), .chunk_size = c.int_or("chunk_size", 256),
                  .use_bias = c.bool_or("add_bias_linear", false), .use_conv_bias = true, .hidden_act = "silu",
                  .layer_norm_epsilon = 1e-5f, .dtype = dtype};
  check_mamba2_fields(c, m, expand,
                      {.num_heads = "n_mamba_heads", .head_dim = "mamba_headdim", .n_groups = "mamba_ngroups",
                       .state_size = "mamba_d_state", .conv_kernel = "mamba_d_conv", .chunk_size = "chunk_size",
                       .expand = "mamba_expand"});
  m.time_step_min = static_cast<float>(c.float_or("time_step_min", 0.001));
  if (!std::isfinite(m.time_step_min) || m.time_step_min < 0.0f) c.fail("time_step_min", "expected a finite value >= 0");
  s.make_mixer = [m](int64_t) { return std::make_unique<Mamba2Mixer>(m); };

  const int64_t attention_heads = c.get_int("num_attention_heads");
  if (attention_heads < 1 || attention_heads > kMaxHeads)
    c.fail("num_attention_heads", "expected 1 to " + std::to_string(kMaxHeads));
  ZambaSharedOptions shared{.hidden_size = hidden, .num_attention_heads = attention_heads,
                            .num_key_value_heads = c.int_or("num_key_value_heads", attention_heads),
                            .head_dim = 2 * hidden / attention_heads,
                            .intermediate_size = c.opt_int("intermediate_size").value_or(4 * hidden),
                            .hidden_act = c.string_or("hidden_act", "gelu"), .rms_norm_eps = s.rms_norm_eps,
                            .mlp_bias = m.use_bias, .fused_gate_up = true,
                            .attention_adapters = c.bool_or("use_shared_attention_adapter", false),
                            .adapter_rank = c.int_or("adapter_rank", 128), .dtype = dtype};
  if (shared.num_key_value_heads < 1 || shared.num_key_value_heads > attention_heads ||
      attention_heads % shared.num_key_value_heads != 0)
    c.fail("num_key_value_heads", "expected a divisor of num_attention_heads");
  if (shared.head_dim < 1) c.fail("num_attention_heads", "expected at most 2 * hidden_size heads");
  if (shared.attention_adapters &&
      (shared.num_key_value_heads != attention_heads || attention_heads * shared.head_dim != 2 * hidden))
    c.fail("use_shared_attention_adapter", "the q/k/v adapters (2 * hidden_size wide) need num_key_value_heads = "
                                           "num_attention_heads dividing 2 * hidden_size");
  if (shared.adapter_rank < 1 || shared.adapter_rank > kMaxHiddenSize)
    c.fail("adapter_rank", "expected 1 to " + std::to_string(kMaxHiddenSize));
  const int64_t applications = std::count(s.layer_types.begin(), s.layer_types.end(), "hybrid");
  s.make_shared_block = [shared, applications, blocks = s.num_mem_blocks](int64_t block) {
    ZambaSharedOptions o = shared;
    for (int64_t a = block; a < applications; a += blocks) o.adapted_applications.push_back(a);
    return std::make_unique<ZambaSharedBlock>(o);
  };

  if (c.bool_or("use_mem_rope", false)) {
    s.rope = RopeConfig::from_hf(c, shared.head_dim);
    if (c.bool_or("use_long_context", false)) s.rope->max_position_embeddings = 16384;
  }
  return std::make_unique<ZambaCausalLM>(s);
}

}  // namespace mobius
