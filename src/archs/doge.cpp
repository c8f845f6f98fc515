// Doge (transformers/models/doge/{modeling,configuration}_doge.py, DogeConfig, 5.23): the Llama
// pre-norm layer with learned per-channel residual weights (h = input_residual * x +
// attn(input_layernorm(x)); out = post_attention_residual * h + mlp(post_attention_layernorm(h))) and
//   attention: DogeAttention, q/k/v/o bias per attention_bias, per-head q_norm / k_norm RMSNorms
//     before RoPE, and the dynamic mask (prepare_dynamic_mask: the bias exp(A * softplus(dt_proj(v)))
//     of every key, keep_window_size largest per query; blocks/attention.h); every layer slides by
//     sliding_window when it is set (create_sliding_window_causal_mask)
//   mlp: LlamaMLP (mlp_bias); is_moe (DogeCDMoE) is refused, see below.
// The dynamic mask's top keep_window_size keys: ties at the boundary (keys with equal values, e.g.
// the same token twice in layer 0) resolve to the lower key index (ONNX TopK); transformers'
// torch.topk(sorted=False) leaves their order unspecified.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_doge(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.names.input_residual = "input_residual";
  s.names.post_attention_residual = "post_attention_residual";
  s.attention.qk_norm = QKNorm{};  // DogeRMSNorm(head_dim) for q and k
  s.attention.dynamic_mask_keep_window = c.int_or("keep_window_size", 2048);
  if (*s.attention.dynamic_mask_keep_window < 1) c.fail("keep_window_size", "must be positive");
  if (c.has("sliding_window")) {
    s.sliding_window = c.get_int("sliding_window");
    if (s.sliding_window < 1) c.fail("sliding_window", "must be positive");
    s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "sliding_attention");
  }
  // DogeCDMoE views its router logits [tokens, 2 * num_keys] as [2, tokens, num_keys]: a token's
  // experts come from the logits of two other tokens of the batch (later ones and padding
  // included), which no causal decoder package reproduces step by step
  if (c.bool_or("is_moe", false))
    c.fail("is_moe", "DogeCDMoE routes each token by other tokens' router logits: not supported");
  return make_decoder(s);
}

}  // namespace mobius
