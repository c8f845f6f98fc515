// config.json fields shared by the mixture-of-experts decoders (archs/mixtral.cpp, deepseek.cpp,
// gpt_oss.cpp), under their transformers 5.23 names.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// The common MoEOptions of `s`'s decoder: hidden_size, hidden_act and dtype from `s`;
// the expert count from `experts_key` (num_local_experts | num_experts | n_routed_experts; for
// "num_local_experts" also its alias "num_experts"), num_experts_per_tok, and the per-expert
// intermediate size from `intermediate_key`. Throws mobius::Error naming the field when one is
// missing or out of range (1 <= num_experts_per_tok <= experts).
// `top_k_key`: the field of num_experts_per_tok (Aria's moe_topk).
MoEOptions read_moe_options(const HfConfig& c, const DecoderSpec& s, const std::string& experts_key,
                            const std::string& intermediate_key, const std::string& top_k_key = "num_experts_per_tok");

// Qwen2-MoE / Qwen3-MoE: layer i is sparse unless listed in mlp_only_layers, and when
// (i + 1) % decoder_sparse_step == 0. Throws mobius::Error naming the field on a bad value.
std::vector<bool> read_sparse_layers(const HfConfig& c, int64_t num_hidden_layers);

// `count` shared experts as one gated MLP named `name` beside the routed experts (DeepseekV3MoE's
// shared_experts, Ernie4_5_MoE's, AfmoeMoE's): `mlp`'s activation and bias, count *
// m.intermediate_size wide. count 0: none.
void add_shared_experts(MoEOptions& m, const MLPOptions& mlp, int64_t count, const std::string& name = "shared_experts");

// Qwen2-MoE's shared expert (Qwen2MoeSparseMoeBlock.shared_expert; Laguna's, Flint's): one gated MLP
// named shared_expert, `mlp`'s activation and bias, shared_expert_intermediate_size wide (required
// when `default_size` is empty). Throws mobius::Error naming the field when it is missing or < 1.
void set_shared_expert(const HfConfig& c, MoEOptions& m, const MLPOptions& mlp, std::optional<int64_t> default_size);

// DeepSeek's MoE (DeepseekV3MoE; SolarOpen's on every layer, ExaoneMoe's): `experts_key`
// (n_routed_experts) experts of moe_intermediate_size, num_experts_per_tok, * routed_scaling_factor,
// with shared_experts (a gated MLP of `shared_key` (n_shared_experts) * moe_intermediate_size,
// s.mlp's activation and bias). Softmax top-k router, to be set by the type. Throws mobius::Error
// naming the field on a bad value.
MoEOptions read_deepseek_experts(const HfConfig& c, const DecoderSpec& s,
                                 const std::string& experts_key = "n_routed_experts",
                                 const std::string& shared_key = "n_shared_experts");

// DeepSeek's layer plan (DeepseekV{2,3}DecoderLayer; Dots1, GLM-4-MoE reuse it): the layers
// from first_k_dense_replace on hold the MoE (read_deepseek_experts); the first ones keep s.mlp.
// nullopt when every layer is dense (then no MoE field is read). Throws mobius::Error naming the
// field on a bad value.
struct DeepseekMoE {
  MoEOptions moe;
  std::vector<bool> sparse;  // per layer
};
std::optional<DeepseekMoE> read_deepseek_moe(const HfConfig& c, const DecoderSpec& s);

// n_group / topk_group of a group-limited router (n_group divides the experts; 1 <= topk_group <=
// n_group). Throws mobius::Error naming the field.
void read_groups(const HfConfig& c, RouterOptions& r);

// The DeepSeek-V3 router and experts (DeepseekV3TopkRouter "noaux_tc", DeepseekV3MLP): sigmoid
// scores + e_score_correction_bias over n_group groups (topk_group kept), norm_topk_prob (the
// config class default `norm_topk_prob`), shared experts without bias. Throws mobius::Error naming
// the field.
void read_v3_router(const HfConfig& c, MoEOptions& m, bool norm_topk_prob);

// The DeepSeek-V3 router with one group (n_group = topk_group = 1) as AFMoE and HunYuan V3 set it
// (AfmoeTokenChoiceRouter, HYV3TopKRouter): sigmoid scores + the block's correction bias pick the
// top-k, weighted by the picked scores renormalized (+ 1e-20) times `routed_scaling_factor` (the
// type's field: route_scale, router_scaling_factor). Throws mobius::Error naming num_experts when
// m has fewer than 2 experts.
void set_one_group_sigmoid_router(const HfConfig& c, MoEOptions& m, double routed_scaling_factor);

// The decoder of `s` with DeepSeek-V3's MoE layers (read_deepseek_moe, read_v3_router with the
// class default `norm_topk_prob`), or `s` alone when every layer is dense: Dots1, GLM-4-MoE.
std::unique_ptr<Architecture> make_v3_moe_decoder(const HfConfig& c, DecoderSpec s, bool norm_topk_prob);

// GraniteMoE's decoder (archs/mixtral.cpp; GraniteMoeShared's and GraniteMoeHybrid's): the Llama
// DecoderSpec with attention_multiplier (the softmax scale), embedding_multiplier,
// residual_multiplier and logits / logits_scaling. Throws mobius::Error naming the field.
DecoderSpec granitemoe_spec(const HfConfig& c, DataType dtype);
// Its experts, block_sparse_moe (num_local_experts of intermediate_size, router.layer: top-k logits
// then softmax; stacked input_linear / output_linear), which it names s's feed-forward.
MoEOptions granitemoe_experts(const HfConfig& c, DecoderSpec& s);
// GraniteMoeShared's shared_mlp (input_linear [2 * shared, hidden] = gate | up, output_linear, no
// bias) as s's feed-forward: added to block_sparse_moe's output when `experts`, alone otherwise
// (GraniteMoeHybrid with num_local_experts 0).
void add_granite_shared_mlp(DecoderSpec& s, int64_t shared, const std::optional<MoEOptions>& experts);

}  // namespace mobius
