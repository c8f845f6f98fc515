// MiniMax-M3's text decoder (transformers/models/minimax_m3_vl/modular_minimax_m3_vl.py,
// MiniMaxM3VLTextConfig, MiniMaxM3VLForCausalLM, 5.23): Mixtral's pre-norm layer with Gemma's
// RMSNorms (1 + weight) everywhere; attention without bias, per-head q_norm / k_norm (Gemma's)
// before RoPE (rope_parameters, default_theta 5e6; the whole head unless rope_parameters gives
// partial_rotary_factor: unlike MiniMax-M2, the legacy rotary_dim is not read); the
// "minimax_m3_sparse" layers of layer_types (legacy: sparse_attention_config.sparse_attention_freq)
// masked by their block indexer (blocks/block_sparse_attention.h: index_* sizes, legacy
// sparse_attention_config names). Feed-forward per mlp_layer_types (legacy: moe_layer_freq;
// default every layer "sparse"):
//   dense   MiniMaxM3VLDenseMLP: gate_up_proj of dense_intermediate_size, GPT-OSS's clamped
//           SwiGLU (swiglu_limit, swiglu_alpha; hidden_act is not read)
//   sparse  MiniMaxM3VLSparseMoeBlock: the MiniMax-M2 router (sigmoid, + gate.e_score_correction_bias
//           for the choice, top-k renormalized) times routed_scaling_factor, DeepSeek-V4's stacked
//           experts (experts.gate_up_proj [E, 2 * intermediate_size, hidden] gate | up halves,
//           experts.down_proj) with the clamped SwiGLU, plus shared_experts (the dense MLP of
//           shared_intermediate_size)
// onnxruntime-genai has no model type for the indexer keys (registry: none).
#include <algorithm>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/block_sparse_attention.h"

namespace mobius {
namespace {

// A legacy key of config.json's sparse_attention_config (MiniMaxM3VLTextConfig.__post_init__) when
// present, else the flat field `key` (default `fallback`).
int64_t m3_index_field(const HfConfig& c, const std::optional<HfConfig>& legacy, const char* key,
                       const char* legacy_key, int64_t fallback) {
  if (legacy && legacy->has(legacy_key)) return legacy->get_int(legacy_key);
  return c.int_or(key, fallback);
}

// A per-layer list of two names: `key`, else a legacy 0/1 list (`legacy` under `legacy_of`), else
// `fallback` on every layer.
std::vector<bool> m3_layer_flags(const HfConfig& c, const std::string& key, const std::vector<std::string>& names,
                                 const std::optional<HfConfig>& legacy_of, const char* legacy, int64_t layers,
                                 bool fallback) {
  std::vector<std::string> given;
  if (!c.has(key) && legacy_of && legacy_of->has(legacy)) {
    const auto& list = legacy_of->json()[legacy];
    if (!list.is_array()) legacy_of->fail(legacy, "expected a list");
    for (const auto& f : list) given.push_back(names[f.is_number() && f.get<double>() != 0 ? 1 : 0]);
  } else {
    given.assign(static_cast<size_t>(layers), names[fallback ? 1 : 0]);
  }
  given = read_layer_list(c, key, layers, names, given);
  if (static_cast<int64_t>(given.size()) != layers) c.fail(key, "expected one entry per layer");
  std::vector<bool> flags;
  for (const std::string& n : given) flags.push_back(n == names[1]);
  return flags;
}

}  // namespace

std::unique_ptr<Architecture> create_minimax_m3_vl_text(const HfConfig& c, DataType dtype) {
  DecoderSpec s = decoder_sizes(c, dtype);
  s.norm_weight_offset_one = true;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  AttentionOptions& a = s.attention = read_attention(c, s.hidden_size, dtype, {.default_num_key_value_heads = 4,
                                                                               .default_head_dim = 128});
  a.norm_eps = s.norm_eps;
  a.qk_norm = QKNorm{.weight_offset_one = true};
  s.rope = RopeConfig::from_hf(c, a.head_dim, {.rope_theta = 5000000.0, .partial_rotary_factor = 1.0});

  const SwigluClamp clamp{static_cast<float>(c.float_or("swiglu_limit", 7.0)),
                          static_cast<float>(c.float_or("swiglu_alpha", 1.702))};
  if (clamp.limit <= 0) c.fail("swiglu_limit", "must be positive");
  auto gated = [&](const char* key, int64_t fallback) {
    MLPOptions m{.hidden_size = s.hidden_size, .intermediate_size = c.int_or(key, fallback), .dtype = dtype,
                 .fused_gate_up = true, .swiglu_clamp = clamp};
    if (m.intermediate_size < 1 || m.intermediate_size > kMaxFfnSize)
      c.fail(key, "expected 1 to " + std::to_string(kMaxFfnSize));
    return m;
  };
  s.mlp = gated("dense_intermediate_size", 12288);

  const std::optional<HfConfig> legacy = c.sub("sparse_attention_config");
  const std::vector<bool> sparse_attention =
      m3_layer_flags(c, "layer_types", {"full_attention", "minimax_m3_sparse"}, legacy, "sparse_attention_freq",
                     s.num_hidden_layers, false);
  if (std::find(sparse_attention.begin(), sparse_attention.end(), true) != sparse_attention.end()) {
    BlockIndexerOptions i{
        .hidden_size = s.hidden_size,
        .num_heads = m3_index_field(c, legacy, "index_n_heads", "sparse_num_index_heads", 4),
        .head_dim = m3_index_field(c, legacy, "index_head_dim", "sparse_index_dim", 128),
        .block_size = m3_index_field(c, legacy, "index_block_size", "sparse_block_size", 128),
        .topk_blocks = m3_index_field(c, legacy, "index_topk_blocks", "sparse_topk_blocks", 16),
        .local_blocks = m3_index_field(c, legacy, "index_local_blocks", "sparse_local_block", 1),
        .rotary_dim = s.rope.rotary_dim(),
        .norm_eps = s.norm_eps,
        .dtype = dtype};
    if (i.num_heads != a.num_key_value_heads)
      c.fail("index_n_heads", "must equal num_key_value_heads (one block selection per key/value head)");
    if (i.head_dim < 2 || i.head_dim % 2 != 0 || i.head_dim > kMaxHeadDim)
      c.fail("index_head_dim", "must be even and between 2 and " + std::to_string(kMaxHeadDim));
    if (i.block_size < 1) c.fail("index_block_size", "must be positive");
    if (i.topk_blocks < 1) c.fail("index_topk_blocks", "must be positive");
    if (i.local_blocks < 0) c.fail("index_local_blocks", "must not be negative");
    s.make_attention = block_sparse_attention(a, i, sparse_attention);
  }

  const std::vector<bool> sparse_mlp =
      m3_layer_flags(c, "mlp_layer_types", {"dense", "sparse"}, c, "moe_layer_freq", s.num_hidden_layers, true);
  if (std::find(sparse_mlp.begin(), sparse_mlp.end(), true) == sparse_mlp.end()) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.kind = RouterKind::sigmoid_groups;  // one group: MiniMaxM3VLTopKRouter
  m.router.norm_topk_prob = true;
  m.router.routed_scaling_factor = static_cast<float>(c.float_or("routed_scaling_factor", 2.0));
  if (m.router.num_experts < 2) c.fail("num_local_experts", "the sigmoid router needs at least 2 experts");
  m.layout = ExpertLayout::stacked;
  m.stacked_gate_up_name = "experts.gate_up_proj";
  m.stacked_down_name = "experts.down_proj";
  m.swiglu_limit = clamp.limit;
  m.swiglu_alpha = clamp.alpha;
  m.shared_expert_name = "shared_experts";
  m.shared_expert = gated("shared_intermediate_size", 3072);
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse_mlp);
  return make_decoder(s);
}

}  // namespace mobius
