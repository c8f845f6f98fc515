// DeepSeek-V2 and DeepSeek-V3 (transformers/models/deepseek_v{2,3}/modeling_deepseek_v{2,3}.py,
// 5.23): multi-head latent attention (blocks/mla.h) and, from layer first_k_dense_replace on, a
// routed MoE (blocks/moe.h) plus shared_experts (n_shared_experts * moe_intermediate_size);
// the first layers keep a dense mlp (intermediate_size).
//   deepseek_v2  softmax top-k (topk_method "greedy", or "group_limited_greedy" over n_group
//                groups), * routed_scaling_factor, not renormalized; RoPE on interleaved pairs
//   deepseek_v3  sigmoid scores + e_score_correction_bias, group-limited (n_group, topk_group),
//                norm_topk_prob, * routed_scaling_factor; rope_interleave
//   glm4_moe_lite  (glm4_moe_lite/modular_glm4_moe_lite.py) deepseek_v3's layers, the MoE on the
//                layers mlp_layer_types calls "sparse" (default: all but layer 0; the config class
//                has no first_k_dense_replace); its Glm4MoeRotaryEmbedding would rotate
//                qk_rope_head_dim * partial_rotary_factor channels, which only 1 makes consistent
//   axk1         (axk1/modular_axk1.py) deepseek_v3's layers with an RMSNorm (post_mlp_layernorm,
//                rms_norm_eps) over the MoE output on the layers mlp_layer_types calls "sparse"
//                (default: from first_k_dense_replace on, where i % moe_layer_freq == 0; both 1);
//                the norm is a layer-level checkpoint key beside mlp (NormedFeedForward adopted
//                under ""); the dense layers' stored post_mlp_layernorm is not used; q_lora_rank
//                (always Q-LoRA) is an int in AXK1Config: null is refused by the config defaults
//   axk2         (axk2/modular_axk2.py) deepseek_v32's sparse attention with q_gate_proj over
//                [q_a_layernorm(c) | c] (c = q_a_proj(x)) giving each head's query and an output
//                gate (blocks/mla.h q_gate), gated RMSNorms (blocks/norms.h GatedNorm,
//                gated_norm_rank) as input_layernorm and, on the sparse layers,
//                post_attention_layernorm; AXK1's MLP plan; the V3 router without groups when
//                n_group / topk_group are null, its masked groups' scores 0 (not -inf)
//   youtu        (youtu/modular_youtu.py) deepseek_v3's attention in Llama's layer with a dense
//                bias-free MLP on every layer (no MoE field is read); tied embeddings by default
//   minicpm3     (minicpm3/modular_minicpm3.py) deepseek_v2's attention with Llama's RoPE (halves,
//                not pairs) in Llama's layer (LlamaMLP, mlp_bias), muP scales: embeddings *
//                scale_emb, each residual branch * scale_depth / sqrt(num_hidden_layers), the final
//                hidden states / (hidden_size / dim_model_base) before lm_head (here: the logits);
//                v_head_dim null: hidden_size / num_attention_heads; scale_depth or
//                dim_model_base null: no scaling (MiniCPM3Config.__post_init__)
// Softmax scale: (qk_nope_head_dim + qk_rope_head_dim) ** -0.5, times mscale ** 2 for a scaled
// RoPE with mscale_all_dim (mscale = 0.1 * mscale_all_dim * ln(factor) + 1 when factor > 1).
#include <algorithm>
#include <cmath>

#include "archs/archs.h"
#include "archs/deepseek.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/spec_check.h"
#include "registry/config_defaults.h"

namespace mobius {

MLAOptions read_mla_options(const HfConfig& c, const DecoderSpec& s) {
  MLAOptions a;
  a.hidden_size = s.hidden_size;
  a.num_heads = s.attention.num_attention_heads;
  if (s.attention.num_key_value_heads != a.num_heads)
    c.fail("num_key_value_heads", "must equal num_attention_heads: MLA expands keys and values per head");
  a.q_lora_rank = c.opt_int("q_lora_rank");
  a.kv_lora_rank = c.get_int("kv_lora_rank");
  a.qk_nope_head_dim = c.get_int("qk_nope_head_dim");
  a.qk_rope_head_dim = c.get_int("qk_rope_head_dim");
  a.v_head_dim = c.get_int("v_head_dim");
  for (const char* key : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
    if (c.get_int(key) <= 0) c.fail(key, "must be positive");
  if (a.q_lora_rank && *a.q_lora_rank <= 0) c.fail("q_lora_rank", "must be positive or null");
  a.attention_bias = c.bool_or("attention_bias", false);
  a.dtype = s.dtype;
  return a;
}

namespace {

// The decoder and its parts before the version's own options (RoPE layout, router) are set.
struct DeepseekParts {
  DecoderSpec spec;
  MLAOptions mla;
  std::optional<MoEOptions> moe;  // none when every layer is dense
  std::vector<bool> sparse;       // per layer: the MoE (from first_k_dense_replace on)
  std::optional<IndexerOptions> indexer;  // DeepSeek sparse attention's (blocks/dsa.h); none: dense MLA
  std::vector<bool> shared_selection;     // per layer: reuses the last indexer's selection (empty: none)

  std::unique_ptr<Architecture> make() {
    spec.make_attention = indexer ? sparse_latent_attention(mla, *indexer, shared_selection) : latent_attention(mla);
    if (moe) spec.make_feed_forward = sparse_moe(*moe, spec.mlp, sparse);
    return std::make_unique<DecoderCausalLM>(spec);
  }
};

DeepseekParts deepseek_parts(const HfConfig& c, DataType dtype) {
  DeepseekParts parts{llama_spec(c, dtype), {}, std::nullopt, {}};
  DecoderSpec& s = parts.spec;
  parts.mla = read_mla_options(c, s);
  MLAOptions& a = parts.mla;
  if (a.qk_rope_head_dim % 2 != 0) c.fail("qk_rope_head_dim", "must be even");
  s.rope = RopeConfig::from_hf(c, a.qk_rope_head_dim);
  a.scale = mla_softmax_scale(a, s.rope);
  return parts;
}

// DeepseekV{2,3}DecoderLayer: the MoE from layer first_k_dense_replace on.
void read_moe(const HfConfig& c, DeepseekParts& p) {
  if (std::optional<DeepseekMoE> m = read_deepseek_moe(c, p.spec)) {
    p.moe = m->moe;
    p.sparse = m->sparse;
  }
}

}  // namespace

std::unique_ptr<Architecture> create_deepseek_v2(const HfConfig& c, DataType dtype) {
  DeepseekParts p = deepseek_parts(c, dtype);
  read_moe(c, p);
  p.mla.rope_interleave = true;  // DeepseekV2's apply_rotary_emb: complex pairs
  if (!p.moe) return p.make();
  RouterOptions& r = p.moe->router;  // softmax_topk; the V2 router ignores norm_topk_prob
  const std::string method = c.string_or("topk_method", "greedy");
  if (method == "group_limited_greedy")
    read_groups(c, r);
  else if (method != "greedy")
    c.fail("topk_method", "unsupported '" + method + "' (greedy, group_limited_greedy)");
  return p.make();
}

float mla_softmax_scale(const MLAOptions& a, const RopeConfig& rope) {
  double scale = 1.0 / std::sqrt(static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim));
  if (rope.rope_type != "default" && rope.mscale_all_dim != 0.0 && rope.factor > 1.0) {
    const double mscale = 0.1 * rope.mscale_all_dim * std::log(rope.factor) + 1.0;
    scale *= mscale * mscale;
  }
  return static_cast<float>(scale);
}

namespace {

// DeepSeek-V3's interleaved rope, bias-free MLP and router on `p`.
void set_v3(const HfConfig& c, DeepseekParts& p) {
  p.mla.rope_interleave = c.bool_or("rope_interleave", true);
  p.spec.mlp.bias = false;  // DeepseekV3MLP: no mlp_bias
  if (p.moe) read_v3_router(c, *p.moe, true);
}

std::unique_ptr<Architecture> make_v3(const HfConfig& c, DeepseekParts& p) {
  set_v3(c, p);
  return p.make();
}

}  // namespace

std::unique_ptr<Architecture> create_deepseek_v3(const HfConfig& c, DataType dtype) {
  DeepseekParts p = deepseek_parts(c, dtype);
  read_moe(c, p);
  return make_v3(c, p);
}

std::unique_ptr<Architecture> create_glm4_moe_lite(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig c = with_attribute_map(config, {{"num_local_experts", "n_routed_experts"},
                                                  {"head_dim", "qk_rope_head_dim"}});
  DeepseekParts p = deepseek_parts(c, dtype);
  std::vector<std::string> plan(static_cast<size_t>(p.spec.num_hidden_layers), "sparse");
  plan.front() = "dense";  // Glm4MoeLiteConfig.__post_init__
  plan = read_layer_list(c, "mlp_layer_types", p.spec.num_hidden_layers, {"dense", "sparse"}, plan);
  for (const auto& t : plan) p.sparse.push_back(t == "sparse");
  if (std::find(p.sparse.begin(), p.sparse.end(), true) != p.sparse.end())
    p.moe = read_deepseek_experts(c, p.spec);
  return make_v3(c, p);
}

namespace {

// DeepseekV32Config.__post_init__'s MLP plan without mlp_layer_types: the first
// first_k_dense_replace (3) of the n layers "dense", the others "sparse".
std::vector<std::string> v32_mlp_plan(const HfConfig& c, int64_t n) {
  const int64_t dense = std::min(c.int_or("first_k_dense_replace", 3), n);
  if (dense < 0) c.fail("first_k_dense_replace", "must not be negative");
  std::vector<std::string> plan(static_cast<size_t>(n), "sparse");
  std::fill_n(plan.begin(), dense, "dense");
  return plan;
}

// AXK1Config's and AXK2Config's: layer i "sparse" when i >= first_k_dense_replace and
// i % moe_layer_freq == 0 (both legacy kwargs, 1 by default), else "dense".
std::vector<std::string> axk_mlp_plan(const HfConfig& c, int64_t n) {
  const int64_t first_dense = c.int_or("first_k_dense_replace", 1);
  const int64_t freq = c.int_or("moe_layer_freq", 1);
  if (first_dense < 0) c.fail("first_k_dense_replace", "must not be negative");
  if (freq < 1) c.fail("moe_layer_freq", "must be positive");
  std::vector<std::string> plan;
  for (int64_t i = 0; i < n; ++i) plan.push_back(i >= first_dense && i % freq == 0 ? "sparse" : "dense");
  return plan;
}

// The MLP plan (mlp_layer_types, default `plan`) and the MoE on its sparse layers.
void read_mlp_layer_types(const HfConfig& c, DeepseekParts& p, std::vector<std::string> plan) {
  plan = read_layer_list(c, "mlp_layer_types", p.spec.num_hidden_layers, {"dense", "sparse"}, plan);
  for (const auto& t : plan) p.sparse.push_back(t == "sparse");
  if (std::find(p.sparse.begin(), p.sparse.end(), true) != p.sparse.end())
    p.moe = read_deepseek_experts(c, p.spec);
}

// DeepseekV32Indexer's options (index_n_heads, index_head_dim, index_topk) over the MLA of `p`.
IndexerOptions read_indexer(const HfConfig& c, const DeepseekParts& p) {
  if (!p.mla.q_lora_rank) c.fail("q_lora_rank", "must be set: the indexer reads the query latent");
  IndexerOptions i{.hidden_size = p.mla.hidden_size, .q_lora_rank = *p.mla.q_lora_rank,
                   .num_heads = c.int_or("index_n_heads", 64), .head_dim = c.int_or("index_head_dim", 128),
                   .rope_dim = p.mla.qk_rope_head_dim, .topk = c.int_or("index_topk", 2048), .dtype = p.mla.dtype};
  if (i.num_heads <= 0) c.fail("index_n_heads", "must be positive");
  if (i.head_dim <= 0) c.fail("index_head_dim", "must be positive");
  if (i.topk <= 0) c.fail("index_topk", "must be positive");
  if (i.head_dim < i.rope_dim) c.fail("index_head_dim", "must be at least qk_rope_head_dim (its rotary channels)");
  return i;
}

// The config as DeepseekV32Config (and GlmMoeDsaConfig) resolve it: the attribute_map, then
// __post_init__'s re-routing of a non-null num_experts to n_routed_experts.
HfConfig dsa_config(const HfConfig& config) {
  nlohmann::json j = with_attribute_map(config, {{"num_local_experts", "n_routed_experts"}}).json();
  if (j.contains("num_experts") && !j["num_experts"].is_null()) j["n_routed_experts"] = j["num_experts"];
  return HfConfig(std::move(j), config.file(), config.prefix());
}

// DeepseekV32ForCausalLM's parts: MLA with interleaved RoPE and the indexer on every layer, the
// V3 router's MoE on the mlp_layer_types "sparse" layers (default: `mlp_plan` of the layer count).
DeepseekParts dsa_parts(const HfConfig& c, DataType dtype,
                        std::vector<std::string> (*mlp_plan)(const HfConfig&, int64_t) = v32_mlp_plan) {
  read_layer_list(c, "layer_types", c.get_int("num_hidden_layers"), {"indexed_attention"}, {});
  DeepseekParts p = deepseek_parts(c, dtype);
  p.mla.rope_interleave = true;  // apply_rotary_pos_emb_interleave, whatever rope_interleave says
  p.spec.mlp.bias = false;       // DeepseekV32MLP: no mlp_bias
  read_mlp_layer_types(c, p, mlp_plan(c, p.spec.num_hidden_layers));
  if (p.moe) read_v3_router(c, *p.moe, true);
  p.indexer = read_indexer(c, p);
  return p;
}

// GlmMoeDsaConfig.__post_init__'s indexer_types ("full" / "shared" per layer): the field, else
// index_topk_pattern (letters F / S, or a list), else layer i "full" when
// max(i - index_skip_topk_offset + 1, 0) % max(index_topk_freq, 1) == 0 (defaults 2 and 1).
// Returns per layer whether it is "shared".
std::vector<bool> read_indexer_types(const HfConfig& c, int64_t n) {
  std::vector<std::string> fallback;
  const nlohmann::json& j = c.json();
  if (j.contains("index_topk_pattern") && !j["index_topk_pattern"].is_null()) {
    const nlohmann::json& pattern = j["index_topk_pattern"];
    if (pattern.is_string()) {
      for (char letter : pattern.get<std::string>()) {
        if (letter != 'F' && letter != 'S') c.fail("index_topk_pattern", "must hold the letters F (full) and S (shared)");
        fallback.push_back(letter == 'F' ? "full" : "shared");
      }
    } else if (pattern.is_array()) {
      for (const auto& t : pattern) {
        if (!t.is_string()) c.fail("index_topk_pattern", "must list \"full\" / \"shared\" names");
        fallback.push_back(t.get<std::string>());
      }
    } else {
      c.fail("index_topk_pattern", "must be a string of F / S letters or a list");
    }
    if (static_cast<int64_t>(fallback.size()) != n) c.fail("index_topk_pattern", "must have num_hidden_layers entries");
  } else {
    const int64_t freq = std::max<int64_t>(c.int_or("index_topk_freq", 1), 1);
    const int64_t offset = c.int_or("index_skip_topk_offset", 2);
    for (int64_t i = 0; i < n; ++i)
      fallback.push_back(std::max<int64_t>(i - offset + 1, 0) % freq == 0 ? "full" : "shared");
  }
  const std::vector<std::string> types = read_layer_list(c, "indexer_types", n, {"full", "shared"}, fallback);
  if (!types.empty() && types.front() == "shared")
    c.fail("indexer_types", "layer 0 must be \"full\": a shared layer reuses an earlier full layer's selection");
  std::vector<bool> shared;
  for (const auto& t : types) shared.push_back(t == "shared");
  return shared;
}

}  // namespace

std::unique_ptr<Architecture> create_deepseek_v32(const HfConfig& config, DataType dtype) {
  return dsa_parts(dsa_config(config), dtype).make();
}

std::unique_ptr<Architecture> create_glm_moe_dsa(const HfConfig& config, DataType dtype) {
  const HfConfig c = dsa_config(config);
  DeepseekParts p = dsa_parts(c, dtype);
  p.indexer->rope_interleave = true;  // GlmMoeDsaIndexer: apply_rotary_pos_emb_interleave
  p.shared_selection = read_indexer_types(c, p.spec.num_hidden_layers);
  return p.make();
}

std::unique_ptr<Architecture> create_axk1(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"num_local_experts", "n_routed_experts"}});
  DeepseekParts p = deepseek_parts(c, dtype);
  read_mlp_layer_types(c, p, axk_mlp_plan(c, p.spec.num_hidden_layers));
  set_v3(c, p);
  if (!p.moe) return p.make();
  // AXK1MoE: post_mlp_layernorm over the MoE output, a layer-level key beside the mlp module
  p.spec.make_attention = latent_attention(p.mla);
  const FeedForwardFactory mlp = sparse_moe(*p.moe, p.spec.mlp, p.sparse);
  p.spec.make_feed_forward = [mlp, sparse = p.sparse, norm = p.spec.norm(),
                              name = p.spec.names.mlp](int64_t layer) -> std::unique_ptr<FeedForward> {
    const bool normed = sparse.at(static_cast<size_t>(layer));
    return std::make_unique<NormedFeedForward>(name, mlp(layer), normed ? "post_mlp_layernorm" : "", norm);
  };
  p.spec.names.mlp = "";
  return std::make_unique<DecoderCausalLM>(p.spec);
}

std::unique_ptr<Architecture> create_axk2(const HfConfig& config, DataType dtype) {
  // AXK2Config's __post_init__ is its own (no DeepseekV32Config re-routing of num_experts)
  const HfConfig c = with_attribute_map(config, {{"num_local_experts", "n_routed_experts"}});
  if (c.has("n_group") != c.has("topk_group"))
    c.fail(c.has("n_group") ? "topk_group" : "n_group", "n_group and topk_group are set together (both null: no groups)");
  DeepseekParts p = dsa_parts(c, dtype, axk_mlp_plan);
  p.mla.q_gate = true;  // AXK2Attention: q_gate_proj over [q_a_layernorm(c) | c], no q_b_proj
  if (p.moe) p.moe->router.groups_fill_zero = true;  // AXK2TopkRouter.apply_group_scoring
  // AXK2GatedRMSNorm as input_layernorm on every layer, as post_attention_layernorm on the sparse ones
  const int64_t rank = c.int_or("gated_norm_rank", 16);
  check_size("gated_norm_rank", rank, kMaxHiddenSize);
  p.spec.make_layer_norm = [norm = p.spec.norm(), rank, sparse = p.sparse,
                            post = p.spec.names.post_attention_layernorm](int64_t layer, const std::string& name) {
    const bool gated = name != post || sparse.at(static_cast<size_t>(layer));
    return gated ? std::make_unique<GatedNorm>(norm, rank) : std::unique_ptr<GatedNorm>{};
  };
  return p.make();
}

std::unique_ptr<Architecture> create_youtu(const HfConfig& c, DataType dtype) {
  DeepseekParts p = deepseek_parts(c, dtype);  // every layer dense (YoutuMLP)
  return make_v3(c, p);
}

}  // namespace mobius

namespace mobius {

std::unique_ptr<Architecture> create_minicpm3(const HfConfig& config, DataType dtype) {
  nlohmann::json j = config.json();
  if (!config.has("v_head_dim")) {
    const int64_t heads = config.get_int("num_attention_heads");
    if (heads <= 0) config.fail("num_attention_heads", "must be positive");
    j["v_head_dim"] = config.get_int("hidden_size") / heads;
  }
  const HfConfig c(std::move(j), config.file(), config.prefix());
  DeepseekParts p = deepseek_parts(c, dtype);  // every layer dense (MiniCPM3MLP = LlamaMLP)
  DecoderSpec& s = p.spec;
  const double layers = static_cast<double>(s.num_hidden_layers);
  s.embed_scale = static_cast<float>(c.float_or("scale_emb", 12.0));
  s.residual_multiplier = static_cast<float>(c.float_or("scale_depth", std::sqrt(layers)) / std::sqrt(layers));
  const double base = c.float_or("dim_model_base", static_cast<double>(s.hidden_size));
  if (!(base > 0.0)) c.fail("dim_model_base", "must be positive");
  s.logit_scale = static_cast<float>(base / static_cast<double>(s.hidden_size));
  return p.make();  // rope_interleave false: LlamaRotaryEmbedding's apply_rotary_pos_emb
}

}  // namespace mobius
