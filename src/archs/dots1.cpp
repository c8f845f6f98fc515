// dots.llm1 (transformers/models/dots1/modeling_dots1.py, Dots1Config, 5.23): Qwen3's attention
// (per-head q_norm / k_norm RMSNorms, q/k/v/o bias per attention_bias) and DeepSeek-V3's layer plan
// (archs/moe_config.h read_deepseek_moe): dense mlp before first_k_dense_replace, then the MoE with
// shared_experts and DeepseekV3TopkRouter (sigmoid + e_score_correction_bias over n_group groups;
// norm_topk_prob false by default); no mlp bias. Without layer_types, the layers from
// max_window_layers (62) on slide by sliding_window (4096) when it is set (Dots1Config.__post_init__).
#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_dots1(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qk_norm = QKNorm{};
  s.mlp.bias = false;  // DeepseekV3MLP (mlp_bias is not read)
  const bool window = !(c.json().contains("sliding_window") && c.json()["sliding_window"].is_null());
  if (window && !c.has("layer_types")) {
    const int64_t first = c.int_or("max_window_layers", 62);
    if (first < 0) c.fail("max_window_layers", "must not be negative");
    for (int64_t i = first; i < s.num_hidden_layers; ++i) s.layer_types[static_cast<size_t>(i)] = "sliding_attention";
  }
  read_layer_types(c, s, 4096);
  return make_v3_moe_decoder(c, s, false);
}

}  // namespace mobius
