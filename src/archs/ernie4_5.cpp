// ERNIE 4.5 (transformers/models/ernie4_5/modeling_ernie4_5.py, ernie4_5_moe/modular_ernie4_5_moe.py,
// 5.23).
//   ernie4_5      Llama with interleaved RoPE (rotate_half on channel pairs (2i, 2i+1)) and use_bias
//                 on every q/k/v/o and MLP projection.
//   ernie4_5_moe  the same layers (rope_theta: default_theta 500000) and lm_head bias per use_bias;
//                 layer i holds the MoE when (i + 1) % moe_layer_interval == 0 and
//                 moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer): moe_k of
//                 moe_num_experts bias-free experts of moe_intermediate_size picked on softmax +
//                 moe_statics.e_score_correction_bias ([1, E], held by the block), weighted by the
//                 softmax, renormalized (RouterKind::softmax_correction), plus shared_experts
//                 (moe_num_shared_experts * moe_intermediate_size, use_bias) when there are any.
#include <algorithm>

#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "registry/config_defaults.h"

namespace mobius {
namespace {

DecoderSpec ernie4_5_spec(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.attention.rope_interleaved = true;
  const bool bias = c.bool_or("use_bias", false);
  s.attention.qkv_bias = s.attention.o_bias = bias;
  s.mlp.bias = bias;
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_ernie4_5(const HfConfig& c, DataType dtype) {
  return make_decoder(ernie4_5_spec(c, dtype));
}

std::unique_ptr<Architecture> create_ernie4_5_moe(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig c = with_attribute_map(config, {{"num_experts", "moe_num_experts"},
                                                  {"num_experts_per_tok", "moe_k"}});
  DecoderSpec s = ernie4_5_spec(c, dtype);
  s.lm_head_bias = s.mlp.bias;  // Ernie4_5_MoeForCausalLM: lm_head bias=use_bias
  const int64_t start = c.int_or("moe_layer_start_index", 1);
  int64_t end = c.int_or("moe_layer_end_index", -1);
  if (end == -1) end = s.num_hidden_layers - 1;  // Ernie4_5_MoeConfig.__post_init__
  const int64_t interval = c.int_or("moe_layer_interval", 1);
  if (interval < 1) c.fail("moe_layer_interval", "must be positive");
  std::vector<bool> sparse;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i) sparse.push_back((i + 1) % interval == 0 && i >= start && i <= end);
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m;
  m.hidden_size = s.hidden_size;
  m.hidden_act = s.mlp.hidden_act;
  m.dtype = dtype;
  m.intermediate_size = c.get_int("moe_intermediate_size");
  if (m.intermediate_size <= 0) c.fail("moe_intermediate_size", "must be positive");
  RouterOptions& r = m.router;
  r.kind = RouterKind::softmax_correction;
  r.norm_topk_prob = true;
  r.num_experts = c.get_int("moe_num_experts");
  if (r.num_experts < 1) c.fail("moe_num_experts", "must be positive");
  r.top_k = c.get_int("moe_k");
  if (r.top_k > r.num_experts) c.fail("moe_k", "must be at most moe_num_experts");
  const double norm_min = c.float_or("moe_norm_min", 1e-12);
  if (norm_min > static_cast<double>(r.top_k) / static_cast<double>(r.num_experts))
    c.fail("moe_norm_min", "a clamp of the top-k sum above moe_k / moe_num_experts is not supported");
  m.score_bias_name = "moe_statics.e_score_correction_bias";
  m.score_bias_row = true;
  const int64_t shared = c.int_or("moe_num_shared_experts", 0);
  if (shared > 0) add_shared_experts(m, s.mlp, shared);  // Ernie4_5_MoeSparseMoeBlock: only when > 0
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
