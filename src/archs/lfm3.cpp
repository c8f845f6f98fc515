// LFM3 (transformers/models/lfm3/modular_lfm3.py Lfm3ForCausalLM; configuration_lfm3.py): LFM2's
// hybrid of gated short convolutions and attention (archs/lfm2.h) with sliding-window attention
// layers beside the full ones and sandwich norms:
//   model.embed_tokens -> model.layers.{i}:
//     h = x + post_operator_norm(op(operator_norm(x)));  out = h + post_ffn_norm(feed_forward(ffn_norm(h)))
//   -> model.embedding_norm -> lm_head (tied unless tie_word_embeddings is false)
// (use_sandwich_norm false: no post_operator_norm / post_ffn_norm). op is conv (Lfm2ShortConv,
// kernel conv_L_cache, default 7) on the "conv" layers, else self_attn (Lfm3Attention: Qwen3's,
// q_norm / k_norm RMSNorm over head_dim before RoPE, q/k/v/o bias per attention_bias; with
// use_attention_gate each head's output times sigmoid(g_proj(x)), g_proj hidden_size -> heads, saved
// as gate_proj;
// "sliding_attention" layers see the last sliding_window keys). feed_forward: w1 gate, w3 up, w2
// down, silu, intermediate_size as is. Every RMSNorm's eps is norm_eps (alias rms_norm_eps).
// Lfm3Config.__post_init__: layer_types, else "full_attention" at i % 4 == 2, "sliding_attention"
// at i % 4 == 0 (i > 0), "conv" elsewhere; rope_parameters per layer type, else sliding
// {default, 1e4} and full {proportional, partial_rotary_factor 0.5, 1e6}; head_dim 128.
// States as LFM2's: past_key_values.{i}.key|value on attention layers (a sliding layer's cache is
// whole, its window a mask), past_key_values.{i}.conv_state [batch_size, hidden_size,
// conv_L_cache - 1] on conv layers. onnxruntime-genai 0.18's "lfm2" type has no sliding layers:
// the package runs in its generic "decoder", as the other hybrids.
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/lfm2.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_lfm3(const HfConfig& c, DataType dtype) {
  const int64_t layers = c.get_int("num_hidden_layers");
  if (layers < 1 || layers > kMaxLayers) c.fail("num_hidden_layers", "expected 1 to " + std::to_string(kMaxLayers));
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < layers; ++i)
    fallback.push_back(i % 4 == 2 ? "full_attention" : i % 4 == 0 && i > 0 ? "sliding_attention" : "conv");

  DecoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = layers;
  // attribute_map {"rms_norm_eps": "norm_eps"}: the alias wins where config.json has both
  s.norm_eps = static_cast<float>(c.has("rms_norm_eps") ? c.get_float("rms_norm_eps") : c.float_or("norm_eps", 1e-5));
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.names.norm = "embedding_norm";
  s.names.input_layernorm = "operator_norm";
  s.names.post_attention_layernorm = "ffn_norm";
  s.names.mlp = "feed_forward";
  if (c.bool_or("use_sandwich_norm", true)) {
    s.topology = LayerTopology::sandwich;
    s.names.attn_output_norm = "post_operator_norm";
    s.names.mlp_output_norm = "post_ffn_norm";
  }
  s.layer_types = read_layer_list(c, "layer_types", layers, {"full_attention", "sliding_attention", "conv"}, fallback);

  AttentionOptions& a = s.attention;
  a.hidden_size = s.hidden_size;
  a.num_attention_heads = c.get_int("num_attention_heads");
  if (a.num_attention_heads < 1 || a.num_attention_heads > kMaxHeads)
    c.fail("num_attention_heads", "expected 1 to " + std::to_string(kMaxHeads));
  a.num_key_value_heads = c.int_or("num_key_value_heads", 4);
  if (a.num_key_value_heads < 1 || a.num_attention_heads % a.num_key_value_heads != 0)
    c.fail("num_key_value_heads", std::to_string(a.num_key_value_heads) + " must divide num_attention_heads " +
                                       std::to_string(a.num_attention_heads));
  a.head_dim = c.int_or("head_dim", 128);
  if (a.head_dim < 2 || a.head_dim > kMaxHeadDim) c.fail("head_dim", "expected 2 to " + std::to_string(kMaxHeadDim));
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", false);
  a.qk_norm = QKNorm{};
  a.norm_eps = s.norm_eps;
  if (c.bool_or("use_attention_gate", true)) {
    a.output_gate = "gate_proj";  // g_proj in the model, gate_proj in checkpoints (conversion_mapping.py "lfm3")
    a.output_gate_per_head = true;
  }
  a.dtype = dtype;
  // Lfm3RotaryEmbedding: a RoPE for each attention layer type the model has
  const auto has_type = [&](const char* t) { return std::find(s.layer_types.begin(), s.layer_types.end(), t) != s.layer_types.end(); };
  if (has_type("full_attention"))
    s.rope = layer_type_rope_or_default(c, "full_attention", a.head_dim,
                                        R"({"rope_type": "proportional", "partial_rotary_factor": 0.5, "rope_theta": 1000000.0})");
  if (has_type("sliding_attention")) {
    s.sliding_window = c.int_or("sliding_window", 256);
    if (s.sliding_window < 1) c.fail("sliding_window", "expected a positive window for the sliding_attention layers");
    s.layer_type_rope["sliding_attention"] =
        layer_type_rope_or_default(c, "sliding_attention", a.head_dim, R"({"rope_type": "default", "rope_theta": 10000.0})");
  }

  set_short_conv_layers(c, s, 7);
  s.mlp = {.hidden_size = s.hidden_size, .intermediate_size = c.int_or("intermediate_size", 7680), .hidden_act = "silu",
           .dtype = dtype, .gate_name = "w1", .gated_up_name = "w3", .gated_down_name = "w2"};
  if (s.mlp.intermediate_size < 1 || s.mlp.intermediate_size > kMaxFfnSize)
    c.fail("intermediate_size", "expected 1 to " + std::to_string(kMaxFfnSize));
  return make_decoder(s);
}

}  // namespace mobius
