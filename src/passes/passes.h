// Execution-provider lowering: a pipeline of rewrites over the canonical graph (the standard
// Attention / RotaryEmbedding / RMSNormalization ops every architecture builds), chosen by an
// explicit option (`mobius build --ep`), never by global state.
//
//   ep             passes (in order)
//   default        none: the canonical graph
//   onnx-standard  pack_matmuls (default-domain ops only)
//   cpu            pack_matmuls, group_query_attention (rotary inside, do_rotary=1, where the RoPE
//                    table is static), skip_simplified_layer_norm, mixture_of_experts (and
//                    tied_lm_head last, below)
//   cuda, webgpu   as cpu, without tied_lm_head
//   dml            pack_matmuls, group_query_attention without rotary (do_rotary=0),
//                    skip_simplified_layer_norm
// and with weight quantization (PassContext::quantize, any ep) matmul_nbits, then with
// QuantizeOptions::embeddings gather_block_quantized; last, for cpu, tied_lm_head (after
// matmul_nbits, which then finds the tied LM head as the Gemm it quantizes).
// That table is a text-generation graph's (GraphLowering::causal_lm). The graphs of the other tasks
// (GraphLowering::attention: encoders, the seq2seq and speech graphs) take multi_head_attention in
// place of group_query_attention; a graph the task keeps canonical (GraphLowering::canonical: the
// VLM's vision and embedding graphs) takes no pass at all, quantization included.
//
// The com.microsoft ops and attributes emitted are those onnxruntime 1.31 implements on its CPU
// provider (contrib op schemas, onnxruntime/core/graph/contrib_ops/bert_defs.cc):
// GroupQueryAttention (float, float16), MultiHeadAttention (float, float16), MoE (float), QMoE
// (float activations and scales, 4-bit block-quantized experts),
// SkipSimplifiedLayerNormalization (float, float16,
// bfloat16), MatMulNBits and GatherBlockQuantized (uint8 data of 4 or 8 bits, float or float16
// scales). Every pass is conservative: a pattern it cannot prove equivalent stays canonical.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace mobius {

enum class ExecutionProvider { default_, onnx_standard, cpu, cuda, dml, webgpu };

// "default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"; throws mobius::Error naming the
// accepted values otherwise.
ExecutionProvider parse_execution_provider(const std::string& name);
std::string to_string(ExecutionProvider ep);

// Weight quantization (`mobius build --precision int4|int8`, passes/matmul_nbits.cpp).
struct QuantizeOptions {
  BlockQuantization scheme;  // bits 4 or 8, block_size, symmetric
  // MatMulNBits accuracy_level (0 unset, 1 fp32, 2 fp16, 3 bf16, 4 int8: the minimum precision
  // of input A in the kernel's computation); 0 writes no attribute, as onnxruntime's quantizer.
  int accuracy_level = 0;
  bool lm_head = false;  // also quantize the LM head (tied or not)
  bool embeddings = false;  // also quantize the embedding matrices (gather_block_quantized)
  // `mobius build --precision keep`: a weight's scheme is the quantization its checkpoint tensor is
  // stored in (weights/weight_plan.h stored_quantization, from_checkpoint set), `ref` being the
  // matrix [N, K]; a weight it returns nullopt for stays float. `scheme` is then unused.
  std::function<std::optional<BlockQuantization>(const WeightRef& ref)> stored;
  // The scheme the matrix [N, K] `ref` names is quantized with: stored(ref) when set, else scheme.
  std::optional<BlockQuantization> scheme_for(const WeightRef& ref) const { return stored ? stored(ref) : scheme; }
};

// The ONNX Runtime GenAI model builder's quantization defaults for `ep` (onnxruntime-genai 0.18,
// onnxruntime_genai/models/): accuracy_level 4 (int8 activations) for cpu and webgpu, 0 (unset)
// for every other provider (quantization/quant_config.py QuantConfig.from_extra_options); the LM
// head quantized like every MatMul (builders/base.py is_lm_head_quantized: op_types MatMul, no
// /lm_head/MatMul excluded); the embeddings quantized when the model ties them to the LM head and
// the weights are 4-bit (builder.py check_extra_options: shared_embeddings defaults to
// tie_word_embeddings and adds Gather to op_types_to_quantize; builders/base.py
// make_tied_embeddings_init: GatherBlockQuantized only for INT4). `default` and `onnx-standard`,
// which the builder has no counterpart for, get accuracy_level 0 (the kernel's float activations),
// the rest as for any provider. `bits` is 4 or 8; `tied_embeddings` as has_tied_embeddings().
QuantizeOptions builder_quantize_defaults(ExecutionProvider ep, int bits, bool tied_embeddings);

// Which lowering a graph takes; its task says (tasks/architecture.h NamedGraph::lowering).
enum class GraphLowering {
  causal_lm,  // text generation over a KV cache (GroupQueryAttention's contract): the table above
  attention,  // any other graph with attention: multi_head_attention instead of group_query_attention
  canonical,  // stays canonical float: no pass, whatever the ep and the quantization
};

struct PassContext {
  ExecutionProvider ep = ExecutionProvider::default_;
  // Rows of the rotary cos/sin caches GroupQueryAttention reads (positions 0 .. n-1): the model's
  // context length (tasks/genai_config.h context_length()).
  int64_t max_sequence_length = 4096;
  // Set: matmul_nbits runs after the ep's passes.
  std::optional<QuantizeOptions> quantize = std::nullopt;
  GraphLowering lowering = GraphLowering::causal_lm;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  // Rewrites `model` in place; returns the number of patterns rewritten.
  virtual int run(Model& model, const PassContext& ctx) const = 0;
};

struct PassReport {
  std::string pass;
  int rewrites;
};

class Pipeline {
 public:
  // The passes of `ep` for a graph of kind `lowering` (table above).
  static Pipeline for_ep(ExecutionProvider ep, GraphLowering lowering = GraphLowering::causal_lm);
  // The passes of ctx.ep for ctx.lowering, then matmul_nbits when ctx.quantize is set (with any ep,
  // default too), gather_block_quantized when ctx.quantize->embeddings, and tied_lm_head last for
  // cpu; none for GraphLowering::canonical.
  static Pipeline for_context(const PassContext& ctx);
  // Runs the passes in order; afterwards (unless ctx.ep is default) drops the position_ids graph
  // input if nothing reads it, and imports opset com.microsoft 1 if a com.microsoft node is
  // present.
  std::vector<PassReport> run(Model& model, const PassContext& ctx) const;
  std::vector<std::unique_ptr<Pass>> passes;
};

// The passes (one per file in src/passes/).
//
// pack_matmuls.cpp: two or three MatMuls reading the same activation with exclusively-used weight
// initializers [in, n_i] of one dtype (q/k/v projections; gate/up) become one MatMul with the
// weights concatenated along the last axis at write time (a Concat transform) and a Split; biases
// added right after every one of them are packed the same way.
std::unique_ptr<Pass> make_pack_matmuls();
// group_query_attention.cpp: see the file's comment.
std::unique_ptr<Pass> make_group_query_attention(bool rotary_inside);
// multi_head_attention.cpp: a plain Attention (no cache, or past and present; key and value
// heads as many as query heads) → com.microsoft MultiHeadAttention; see the file's comment.
std::unique_ptr<Pass> make_multi_head_attention();
// matmul_nbits.cpp: MatMul by a 2-D float checkpoint weight (and a tied LM head's Gemm) →
// com.microsoft MatMulNBits with block-quantized initializers; see the file's comment.
std::unique_ptr<Pass> make_matmul_nbits();
// gather_block_quantized.cpp: Gather of rows of a 2-D float checkpoint weight (the embeddings)
// whose width is a multiple of the block size → com.microsoft GatherBlockQuantized (a tied
// embedding reads the quantized LM head's initializers when matmul_nbits made them); see the file.
std::unique_ptr<Pass> make_gather_block_quantized();
// skip_simplified_layer_norm.cpp: RMSNormalization(Add(a, b), gamma) over the last axis, a and b
// activations and gamma 1-D → com.microsoft SkipSimplifiedLayerNormalization(a, b, gamma), whose
// 4th output (input_skip_bias_sum) replaces the Add where the residual stream reads it.
std::unique_ptr<Pass> make_skip_simplified_layer_norm();
// mixture_of_experts.cpp: the dense sparse-MoE of a softmax top-k router and SiLU-gated experts
// (blocks/moe.h) → com.microsoft MoE, which runs the picked experts only; with 4-bit
// PassContext::quantize (a block size QMoE takes) com.microsoft QMoE, the experts block-quantized
// at write time; see the file's comment.
std::unique_ptr<Pass> make_mixture_of_experts();
// tied_lm_head.cpp: the tied LM head's Reshape → Gemm(transB) → Reshape → MatMul(x, Transpose(W)),
// which writes the logits output without a copy and, with the Transpose folded by onnxruntime at
// load, multiplies by a [hidden, vocab] constant.
std::unique_ptr<Pass> make_tied_lm_head();

// True when the graph has past_key_values.* inputs and every node reading one is a
// GroupQueryAttention: the caches can then be one max_length buffer per layer that past and
// present share (genai_config.json past_present_share_buffer), which a canonical Attention layer,
// concatenating past and new keys, cannot take.
bool caches_only_in_group_query_attention(const Graph& graph);

// True when one checkpoint matrix is read both by a Gather (the embedding) and by the node tagged
// NodeTags::lm_head (the tied LM head, blocks/linear.h Embedding::attend): the canonical graph of a model whose config
// ties its word embeddings.
bool has_tied_embeddings(const Graph& graph);

// Number of nodes of `op_type` in `domain` (tests, reports).
size_t count_ops(const Graph& graph, const std::string& op_type, const std::string& domain = "");

}  // namespace mobius
