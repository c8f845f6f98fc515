// JetMoE (transformers/models/jetmoe/modeling_jetmoe.py, 5.23): a Llama-like decoder whose
// attention is a mixture of attention heads (blocks/moa.h, module self_attention) and whose mlp is
// a sparse MoE with stacked input_linear / output_linear experts and an output bias (blocks/moe.h);
// both route with top-k logits then softmax over num_local_experts. num_attention_heads =
// num_key_value_heads * num_experts_per_tok; head size kv_channels; activation_function; the
// layers' RMSNorms use eps 1e-6 (JetMoeRMSNorm's default), the final norm rms_norm_eps; embeddings
// tied by default.
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/activation.h"

namespace mobius {

std::unique_ptr<Architecture> create_jetmoe(const HfConfig& config, DataType dtype) {
  const int64_t kv_heads = config.get_int("num_key_value_heads");
  const int64_t top_k = config.get_int("num_experts_per_tok");
  if (kv_heads <= 0) config.fail("num_key_value_heads", "must be positive");
  // JetMoeConfig derives num_attention_heads; llama_spec reads it
  nlohmann::json j = config.json();
  j["num_attention_heads"] = kv_heads * top_k;
  const HfConfig c(j, config.file());
  DecoderSpec s = llama_spec(c, dtype);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.layer_norm_eps = 1e-6f;
  s.names.self_attn = "self_attention";
  const int64_t head_dim = c.get_int("kv_channels");
  if (head_dim != s.rope.head_dim)
    c.fail("kv_channels", "must equal hidden_size / num_attention_heads (" + std::to_string(s.rope.head_dim) +
                              "), the RoPE size");
  s.mlp.hidden_act = c.string_or("activation_function", "silu");
  if (!is_known_activation(s.mlp.hidden_act))
    c.fail("activation_function", "unsupported activation '" + s.mlp.hidden_act + "'");
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.kind = RouterKind::topk_softmax;
  m.router_name = "router.layer";
  m.layout = ExpertLayout::stacked;
  m.bias = true;
  s.make_feed_forward = sparse_moe(m, s.mlp);
  s.make_attention = mixture_of_attention_heads(MoAOptions{s.hidden_size, kv_heads, head_dim, m.router, dtype});
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
