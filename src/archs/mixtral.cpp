// Llama-like decoders whose feed-forward is a sparse mixture of experts (blocks/moe.h), from the
// Llama DecoderSpec plus their fields (transformers/models/<type>/modeling_<type>.py, 5.23):
//   mixtral     block_sparse_moe: softmax top-k, renormalized; experts.{e}.w1/w3/w2; sliding_window
//               on every layer when set
//   qwen2_moe   mlp: softmax top-k (norm_topk_prob) + shared_expert scaled by
//               sigmoid(shared_expert_gate(x)); dense mlp on mlp_only_layers / decoder_sparse_step;
//               q/k/v bias (qkv_bias), per-layer sliding via layer_types
//   qwen3_moe   mlp: softmax top-k (norm_topk_prob); per-head q/k RMSNorm; dense layers as qwen2_moe;
//               sliding_window on every layer when use_sliding_window
//   olmoe       mlp: softmax top-k (norm_topk_prob); q/k RMSNorm over the whole projection; clip_qkv
//   phimoe      block_sparse_moe: sparsemixer routing (router_jitter_noise); LayerNorm with bias;
//               attention_bias, lm_head_bias; sliding_window when set; default RoPE only
//   granitemoe  block_sparse_moe: router.layer, top-k logits then softmax; input_linear /
//               output_linear stacked experts; embedding_multiplier, residual_multiplier,
//               attention_multiplier (the softmax scale), logits_scaling
//   granitemoeshared  granitemoe plus, when shared_intermediate_size > 0, the layer's shared_mlp
//               (input_linear [2 * shared, hidden] chunked into gate | up, output_linear) added to
//               block_sparse_moe's output before the residual scaling
//   aria_text   mlp (AriaTextMoELayer, transformers/models/aria/modeling_aria.py) on every layer:
//               router.weight, top-k logits then softmax; experts.fc1.weight [E, hidden, 2 * I]
//               (gate | up) / fc2.weight [E, I, hidden] (gate_up_proj / down_proj as saved), always SiLU; plus shared_experts, a gated MLP
//               moe_num_shared_experts * intermediate_size wide (hidden_act, mlp_bias)
//   granitemoe_swa  granitemoeshared with GraniteSWAAttention (sinks, sliding layers, per-layer
//               RoPE theta: archs/granite.h granite_swa_attention); its experts and router under
//               transformers' own names (experts.gate_up_proj / down_proj, router.weight)
#include <algorithm>

#include "archs/archs.h"
#include "archs/generic_moe.h"
#include "archs/granite.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {
namespace {

// Every layer slides when `enabled` and sliding_window is set (Mixtral, PhiMoE, Qwen3-MoE masks).
void read_uniform_sliding_window(const HfConfig& c, DecoderSpec& s, bool enabled) {
  if (!enabled || !c.has("sliding_window")) return;
  s.sliding_window = c.get_int("sliding_window");
  if (s.sliding_window <= 0) c.fail("sliding_window", "must be positive");
  s.layer_types.assign(s.layer_types.size(), "sliding_attention");
}

// The decoder with SparseMoE feed-forwards `m` on the layers where sparse[i] (empty: every layer).
std::unique_ptr<Architecture> make(DecoderSpec s, const MoEOptions& m, std::vector<bool> sparse = {}) {
  s.make_feed_forward = sparse_moe(m, s.mlp, std::move(sparse));
  return std::make_unique<DecoderCausalLM>(s);
}

// `m` as Mixtral names it (mixtral, phimoe): block_sparse_moe.experts.{e}.w1 (gate) / w3 (up) /
// w2 (down).
std::unique_ptr<Architecture> make_block_sparse_moe(DecoderSpec s, MoEOptions m) {
  m.gate_name = "w1";
  m.up_name = "w3";
  m.down_name = "w2";
  s.names.mlp = "block_sparse_moe";
  return make(s, m);
}

}  // namespace

DecoderSpec granitemoe_spec(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.scale = static_cast<float>(c.float_or("attention_multiplier", 1.0));
  s.embed_scale = static_cast<float>(c.float_or("embedding_multiplier", 1.0));
  s.residual_multiplier = static_cast<float>(c.float_or("residual_multiplier", 1.0));
  const double logits_scaling = c.float_or("logits_scaling", 1.0);
  if (logits_scaling == 0.0) c.fail("logits_scaling", "must be nonzero");
  s.logit_scale = static_cast<float>(1.0 / logits_scaling);  // GraniteMoeForCausalLM: logits / logits_scaling
  return s;
}

MoEOptions granitemoe_experts(const HfConfig& c, DecoderSpec& s) {
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.kind = RouterKind::topk_softmax;
  m.router_name = "router.layer";
  m.layout = ExpertLayout::stacked;
  s.names.mlp = "block_sparse_moe";
  return m;
}

void add_granite_shared_mlp(DecoderSpec& s, int64_t shared, const std::optional<MoEOptions>& experts) {
  MLPOptions shared_mlp{s.hidden_size, shared, s.mlp.hidden_act, false, s.dtype};
  shared_mlp.fused_gate_up = true;  // input_linear [2 * shared, hidden]: act(first half) * second half
  shared_mlp.gate_up_name = "input_linear";
  shared_mlp.gated_down_name = "output_linear";
  if (!experts) {
    s.names.mlp = "shared_mlp";
    s.make_feed_forward = [shared_mlp](int64_t) { return std::make_unique<GatedMLP>(shared_mlp); };
    return;
  }
  s.names.mlp = "";  // block_sparse_moe and shared_mlp are the layer's children
  s.make_feed_forward = [m = *experts, shared_mlp](int64_t) {
    auto sum = std::make_unique<FeedForwardSum>();
    sum->add("block_sparse_moe", std::make_unique<SparseMoE>(m));
    sum->add("shared_mlp", std::make_unique<GatedMLP>(shared_mlp));
    return sum;
  };
}

std::unique_ptr<Architecture> create_mixtral(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qkv_bias = s.attention.o_bias = false;  // MixtralAttention: no bias (attention_bias not read)
  read_uniform_sliding_window(c, s, true);
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.norm_topk_prob = true;
  return make_block_sparse_moe(s, m);
}

std::unique_ptr<Architecture> create_qwen2_moe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qkv_bias = c.bool_or("qkv_bias", true);
  s.attention.o_bias = s.mlp.bias = false;  // Qwen2MoeMLP: no bias (mlp_bias not read)
  // Qwen2MoeConfig.__post_init__: without layer_types, the even layers below max_window_layers (28)
  // slide when use_sliding_window
  if (c.bool_or("use_sliding_window", false))
    for (int64_t i = 0; i < std::min(s.num_hidden_layers, c.int_or("max_window_layers", 28)); i += 2)
      s.layer_types[static_cast<size_t>(i)] = "sliding_attention";
  read_layer_types(c, s, 4096);             // Qwen2MoeConfig.sliding_window
  MoEOptions m = read_moe_options(c, s, "num_experts", "moe_intermediate_size");
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", false);
  set_shared_expert(c, m, s.mlp, std::nullopt);
  m.shared_expert_gate = true;
  return make(s, m, read_sparse_layers(c, s.num_hidden_layers));
}

std::unique_ptr<Architecture> create_qwen3_moe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qk_norm = QKNorm{};  // RMSNorm over head_dim
  read_uniform_sliding_window(c, s, c.bool_or("use_sliding_window", false));
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "moe_intermediate_size");
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", false);
  return make(s, m, read_sparse_layers(c, s.num_hidden_layers));
}

std::unique_ptr<Architecture> create_aria_text(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  MoEOptions m = read_moe_options(c, s, "moe_num_experts", "intermediate_size", "moe_topk");
  m.router.kind = RouterKind::topk_softmax;
  m.router_name = "router";
  m.layout = ExpertLayout::stacked_in_out;
  m.stacked_gate_up_name = "experts.fc1.weight";  // as save_pretrained writes gate_up_proj (conversion_mapping)
  m.stacked_down_name = "experts.fc2.weight";
  m.hidden_act = "silu";  // AriaExperts: SiLU whatever hidden_act
  const int64_t shared = c.int_or("moe_num_shared_experts", 2);
  if (shared < 0 || shared > kMaxSmallSize)
    c.fail("moe_num_shared_experts", "must be 0 .. " + std::to_string(kMaxSmallSize));
  add_shared_experts(m, s.mlp, shared);
  return make(s, m);
}

std::unique_ptr<Architecture> create_olmoe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  if (s.attention.head_dim * s.attention.num_attention_heads != s.hidden_size)
    c.fail("head_dim", "OLMoE's q_norm spans hidden_size: head_dim must be hidden_size / num_attention_heads");
  s.attention.qk_norm = QKNorm{.layout = QKNormLayout::full_width};
  if (c.has("clip_qkv")) {
    s.attention.clip_qkv = static_cast<float>(c.get_float("clip_qkv"));
    if (*s.attention.clip_qkv <= 0) c.fail("clip_qkv", "must be positive");
  }
  MoEOptions m = read_moe_options(c, s, "num_experts", "intermediate_size");
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", false);
  return make(s, m);
}

std::unique_ptr<Architecture> create_phimoe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  if (s.rope.rope_type != "default")
    c.fail("rope_parameters", "PhiMoE's short_mscale / long_mscale RoPE is not supported (rope_type '" +
                                  s.rope.rope_type + "')");
  s.norm_kind = NormKind::LayerNorm;
  s.lm_head_bias = c.bool_or("lm_head_bias", false);
  read_uniform_sliding_window(c, s, true);
  MoEOptions m = read_moe_options(c, s, "num_local_experts", "intermediate_size");
  m.router.kind = RouterKind::sparsemixer;
  m.router.top_k = 2;  // sparsemixer always picks two experts
  if (m.router.num_experts < 2) c.fail("num_local_experts", "sparsemixer routing needs at least 2 experts");
  m.router.jitter_eps = static_cast<float>(c.float_or("router_jitter_noise", 0.01));
  return make_block_sparse_moe(s, m);
}

std::unique_ptr<Architecture> create_granitemoe(const HfConfig& c, DataType dtype) {
  DecoderSpec s = granitemoe_spec(c, dtype);
  MoEOptions m = granitemoe_experts(c, s);
  return make(s, m);
}

namespace {

// GraniteMoeShared's decoder from GraniteMoE's parts (also GraniteMoeSWA's).
std::unique_ptr<Architecture> make_granitemoeshared(const HfConfig& c, DecoderSpec s, const MoEOptions& m) {
  const int64_t shared = c.int_or("shared_intermediate_size", 0);
  if (shared < 0) c.fail("shared_intermediate_size", "must not be negative");
  if (shared == 0) return make(s, m);  // GraniteMoeSharedDecoderLayer: shared_mlp None
  add_granite_shared_mlp(s, shared, m);
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace

std::unique_ptr<Architecture> create_granitemoeshared(const HfConfig& c, DataType dtype) {
  DecoderSpec s = granitemoe_spec(c, dtype);
  MoEOptions m = granitemoe_experts(c, s);
  return make_granitemoeshared(c, s, m);
}

std::unique_ptr<Architecture> create_granitemoe_swa(const HfConfig& c, DataType dtype) {
  DecoderSpec s = granitemoe_spec(c, dtype);
  MoEOptions m = granitemoe_experts(c, s);
  granite_swa_attention(c, s);
  // GraniteMoeSWAMoE saves transformers' own layout (no conversion mapping): router.weight,
  // experts.gate_up_proj [E, 2 * intermediate, hidden] (gate | up halves), experts.down_proj
  m.router_name = "router";
  m.stacked_gate_up_name = "experts.gate_up_proj";
  m.stacked_down_name = "experts.down_proj";
  return make_granitemoeshared(c, s, m);
}

// --try-generic's mixture-of-experts decoder (archs/generic_moe.h) from the parts above.
namespace {

std::unique_ptr<Architecture> make_generic_moe(const HfConfig& c, DataType dtype, GenericMoEShape shape) {
  DecoderSpec s = llama_spec(c, dtype);
  if (shape.qk_norm) s.attention.qk_norm = QKNorm{};
  const bool block_sparse = shape.experts == GenericExperts::block_sparse_moe;
  MoEOptions m = read_moe_options(c, s, "num_local_experts",
                                  c.has("moe_intermediate_size") ? "moe_intermediate_size" : "intermediate_size");
  if (!block_sparse && !c.has("norm_topk_prob"))
    c.fail("norm_topk_prob", "missing: the checkpoint's mlp.experts do not tell whether the top-k routing weights "
                             "are renormalized (Mixtral: true; Qwen2-MoE, Qwen3-MoE, OLMoE: false), set it");
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  switch (shape.experts) {
    case GenericExperts::block_sparse_moe:
      s.names.mlp = "block_sparse_moe";
      m.gate_name = "w1", m.up_name = "w3", m.down_name = "w2";
      break;
    case GenericExperts::per_expert:
      break;
    case GenericExperts::stacked:
      m.layout = ExpertLayout::stacked;
      m.stacked_gate_up_name = "experts.gate_up_proj";
      m.stacked_down_name = "experts.down_proj";
      break;
  }
  s.make_feed_forward = sparse_moe(m, s.mlp, read_sparse_layers(c, s.num_hidden_layers));
  return std::make_unique<DecoderCausalLM>(s);
}

template <GenericExperts E, bool QKNorm>
std::unique_ptr<Architecture> create_generic_moe(const HfConfig& c, DataType dtype) {
  return make_generic_moe(c, dtype, {E, QKNorm});
}

template <GenericExperts E>
ArchFactory generic_moe_with(bool qk_norm) {
  return qk_norm ? create_generic_moe<E, true> : create_generic_moe<E, false>;
}

}  // namespace

ArchFactory generic_moe_factory(GenericMoEShape shape) {
  switch (shape.experts) {
    case GenericExperts::block_sparse_moe: return generic_moe_with<GenericExperts::block_sparse_moe>(shape.qk_norm);
    case GenericExperts::per_expert: return generic_moe_with<GenericExperts::per_expert>(shape.qk_norm);
    case GenericExperts::stacked: return generic_moe_with<GenericExperts::stacked>(shape.qk_norm);
  }
  return nullptr;
}

}  // namespace mobius
