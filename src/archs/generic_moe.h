// `mobius build --try-generic`'s mixture-of-experts decoder (driver/generic.h): an unregistered
// model_type whose config.json names experts (num_local_experts or num_experts, and
// num_experts_per_tok) is built from the Llama DecoderSpec (archs/llama.h) with the sparse MoE of
// Mixtral / Qwen3-MoE (blocks/moe.h, as archs/mixtral.cpp composes it), its experts bound where the
// checkpoint holds them (transformers/models/{mixtral,qwen3_moe}/modeling_*.py, 5.23). Defined in
// archs/mixtral.cpp.
#pragma once

#include "archs/archs.h"

namespace mobius {

// Where a checkpoint keeps its experts (the keys under model.layers.N.):
enum class GenericExperts {
  block_sparse_moe,  // block_sparse_moe.experts.E.w1 / w3 / w2 (gate / up / down), block_sparse_moe.gate:
                     // Mixtral as save_pretrained writes it
  per_expert,        // mlp.experts.E.gate_proj / up_proj / down_proj, mlp.gate: Qwen2-MoE, Qwen3-MoE,
                     // OLMoE as save_pretrained writes them
  stacked,           // mlp.experts.gate_up_proj [E, 2 * I, hidden] (gate | up), mlp.experts.down_proj
                     // [E, hidden, I], mlp.gate: transformers 5's own modules (MixtralExperts,
                     // Qwen3MoeExperts) saved without a conversion mapping
};

struct GenericMoEShape {
  GenericExperts experts = GenericExperts::block_sparse_moe;
  bool qk_norm = false;  // self_attn.q_norm / k_norm, RMSNorm over head_dim (Qwen3MoeAttention)
};

// The factory of that decoder, reading: the llama_spec fields; the expert count num_local_experts
// (or num_experts), num_experts_per_tok, each expert's width moe_intermediate_size (absent:
// intermediate_size); the softmax top-k router, renormalized when norm_topk_prob (absent: true for
// block_sparse_moe, MixtralSparseMoeBlock's; required otherwise, the Qwen / OLMoE classes
// defaulting to false and Mixtral's stacked modules to true); the sparse layers from
// decoder_sparse_step and mlp_only_layers (Qwen3MoeDecoderLayer; the others a Llama MLP of
// intermediate_size). Creating it throws mobius::Error naming the field on a missing or bad one.
ArchFactory generic_moe_factory(GenericMoEShape shape);

}  // namespace mobius
