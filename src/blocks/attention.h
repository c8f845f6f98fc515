// Self-attention: MHA, GQA and MQA (num_key_value_heads <= num_attention_heads), explicit
// head_dim, optional q/k/v/o bias, optional q/k normalization (over head_dim or the whole
// projection), optional q/k/v clipping, optional RoPE (rotate-half or interleaved, on the first
// rotary_dim channels), with a KV cache (decoders) or without one (encoders).
// References: LlamaAttention / Qwen3Attention, and for encoders BertSelfAttention + the dense of
// BertSelfOutput, in transformers/models/*/modeling_*.py; the options below name the models that
// need them. Lowered to the ONNX Attention op (opset 23/24) with an additive float mask; with
// `sinks` (GptOssAttention) to blocks/attention_sinks.h instead.
#pragma once

#include <optional>
#include <string>

#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/rope.h"
#include "blocks/token_mixer.h"
#include "tasks/layer_state.h"

namespace mobius {

// Child names of the four projections, as the checkpoint spells them (dotted names nest, e.g.
// BERT's "self.query" and "output.dense" under the layer's "attention").
struct AttentionNames {
  std::string q_proj = "q_proj";
  std::string k_proj = "k_proj";
  std::string v_proj = "v_proj";
  std::string o_proj = "o_proj";  // dense (Phi, GPT-NeoX, Persimmon), out_proj (GPT-J, CodeGen)
  std::string sinks = "sinks";    // AttentionOptions::sinks (Flint's saved as softmax_offset)
};

// One projection for q, k and v, split in the graph. Its output [..., q_dim + 2 * kv_dim] is
// viewed as [..., groups, q_dim / groups + 2 * kv_dim / groups]; each group holds its share of the
// three in `order`, and each part reshapes to [..., heads, head_dim]:
//   groups 1, "qkv": [q | k | v] (Phi3Attention.qkv_proj, GPT2Attention.c_attn, MptAttention.Wqkv,
//     GPTBigCodeAttention.c_attn with multi_query, FalconAttention with multi_query)
//   groups num_heads, "qkv": per-head [q, k, v] (GPTNeoXAttention / PersimmonAttention /
//     BloomAttention.query_key_value, GPTBigCodeAttention.c_attn without multi_query)
//   groups num_kv_heads, "qkv": per group [heads / kv heads queries, k, v] (FalconAttention with
//     new_decoder_architecture)
//   groups mp_num 4, "qvk": CodeGenAttention.qkv_proj (transformers/models/codegen/modeling_codegen.py)
// With clip (MptAttention clip_qkv) the projection's output is clamped to [-clip, clip] first.
struct FusedQKV {
  std::string name = "qkv_proj";
  int64_t groups = 1;
  std::string order = "qkv";
  std::optional<float> clip = std::nullopt;
};

enum class QKNormLayout {
  shared,           // one norm over head_dim for every head (Qwen3 q_norm, Phi/Persimmon q_layernorm)
  weight_per_head,  // one [heads, head_dim] weight (Cohere q_norm; LayerNorm without bias)
  norm_per_head,    // one LayerNorm per head, q_layernorm.norms.{h} (StableLM)
  full_width,       // one RMSNorm over the whole q / k projection, before the head split (OLMoE)
};

// Normalization of q and k (over head_dim, or the whole projection for full_width), after the
// projection and before RoPE, or with after_rope on the rotated heads (HunYuanDenseV1Attention,
// NanoChatAttention).
struct QKNorm {
  NormKind kind = NormKind::RMSNorm;
  bool bias = false;  // LayerNorm only
  QKNormLayout layout = QKNormLayout::shared;
  bool weight_offset_one = false;  // RMSNorm scaled by (1 + weight) (Gemma3 q_norm / k_norm)
  std::string q_name = "q_norm", k_name = "k_norm";  // query_layernorm, key_layernorm (HunYuan)
  bool after_rope = false;         // shared layout only
  bool elementwise_affine = true;  // false: no weight (NanoChat's Llama4TextL2Norm); shared layout
};

enum class GateActivation { sigmoid, softplus };

struct AttentionOptions {
  int64_t hidden_size;
  int64_t num_attention_heads;
  int64_t num_key_value_heads;
  int64_t head_dim;  // of q and k (and v, unless v_head_dim)
  // of v (the cache's values and the heads' output before o_proj) where it differs from head_dim
  // (MiMoV2FlashAttention: 128 beside q/k 192); unset: head_dim. Not with fused_qkv,
  // gate_in_q_proj, output_gate, o_input_norm or dynamic_mask_keep_window
  std::optional<int64_t> v_head_dim;
  // the values times this after v_proj, before the cache (MiMoV2FlashAttention v_scale,
  // attention_value_scale); unset: none
  std::optional<float> value_scale;
  bool qkv_bias = false;
  bool k_bias = true;  // with qkv_bias: false leaves k_proj without a bias (WhisperAttention)
  bool o_bias = false;
  std::optional<QKNorm> qk_norm;
  std::optional<float> clip_qkv;  // clamp the q, k, v projections to [-c, c], after the q/k norm (OLMoE)
  bool sinks = false;             // learned per-head sink logit in the softmax (GPT-OSS `sinks`)
  float norm_eps = 1e-6f;
  std::optional<float> scale;  // default 1 / sqrt(head_dim)
  // attn_logit_softcapping (Gemma2): scores = softcap * tanh(scale * q.k / softcap), applied before
  // the mask (the ONNX Attention attribute `softcap`); 0 = none.
  float softcap = 0.0f;
  std::optional<FusedQKV> fused_qkv;  // instead of names.q_proj, k_proj, v_proj
  bool rope_interleaved = false;  // rotate pairs (2i, 2i+1) (GPT-J, CodeGen, GLM, Cohere)
  DataType dtype = DataType::FLOAT;
  AttentionNames names;
  bool conv1d = false;  // GPT-2 Conv1D projections ([in, out] weights, blocks/linear.h)
  // > 0: a sliding-window layer (transformers' sliding_window on a "sliding_attention" layer):
  // state() reports sliding_kv with this window, from which the decoder builds the layer's mask
  int64_t sliding_window = 0;
  // a Linear of this name (hidden_size -> heads * head_dim, no bias) whose sigmoid gates the heads'
  // output [batch, seq, heads * head_dim] before o_proj (AFMoE gate_proj); empty: none
  std::string output_gate;
  // the gate's activation, and its width: with output_gate_per_head hidden_size -> heads, one gate
  // per head broadcast over head_dim (Laguna g_proj: softplus, per head or per element)
  GateActivation output_gate_act = GateActivation::sigmoid;
  bool output_gate_per_head = false;
  // a [heads] parameter of this name added to the gate per head (broadcast over head_dim) before
  // its activation (BeamAttention gate_bias); empty: none. With a per-element output_gate only
  std::string output_gate_bias;
  // q_proj (hidden_size -> heads * 2 * head_dim) holds each head's query then its gate; the gate's
  // sigmoid gates the heads' output before o_proj (Qwen3NextAttention, Qwen3_5Attention)
  bool gate_in_q_proj = false;
  // a norm over the heads' output [batch, seq, heads * head_dim] before o_proj (BitNet)
  std::optional<SubNorm> o_input_norm;
  // Doge's dynamic mask attention (DogeAttention.prepare_dynamic_mask, transformers/models/doge/
  // modeling_doge.py): each key's bias exp(A * softplus(dt_proj(v))) [batch, kv_heads, total_seq],
  // from the values of every key (the cache's included; dt_proj: kv_heads * head_dim -> kv_heads,
  // bias per qkv_bias; A [kv_heads]), replaces the 0 of the additive mask where it allows the key;
  // with more than keep_window_size keys each query keeps its keep_window_size largest entries
  // (the others the dtype's lowest). Unset: none.
  std::optional<int64_t> dynamic_mask_keep_window;

  int64_t value_dim() const { return v_head_dim ? *v_head_dim : head_dim; }  // v's head size
};

struct AttentionResult {
  Value* hidden;         // [batch, seq, hidden_size]
  Value* present_key;    // [batch, kv_heads, total_seq, head_dim]; null without a cache
  Value* present_value;
};

// The self-attention of a decoder layer: Attention below, MultiHeadLatentAttention (blocks/mla.h),
// MixtureOfAttentionHeads (blocks/moa.h).
// As a token mixer it takes and returns the pair {key, value} (tasks/layer_state.h state_tensors).
class SelfAttention : public TokenMixer {
 public:
  // x: [batch, seq, hidden_size]; past_key/past_value: the layer's cache,
  // [batch, kv_heads, past_seq, key / value head size].
  virtual AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                                  Value* past_value) const = 0;
  // The cache the layer carries (kind self_kv, or sliding_kv with its window): the heads and head
  // sizes of its keys and values.
  virtual LayerState state() const = 0;
  // {state()}: the one cache (an attention with a second state beside it, blocks/dsa.h, lists both).
  LayerStates states() const override { return {state()}; }
  // forward() with past = {past_key, past_value}; present = {present_key, present_value}. An empty
  // past: attention without a cache (forward's nulls), an empty present.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;
};

class Attention : public SelfAttention {
 public:
  explicit Attention(const AttentionOptions& o);
  // x: [batch, seq, hidden_size]; past_key/past_value: [batch, kv_heads, past_seq, head_dim], or
  // both null for attention without a cache (then total_seq = seq and no present is returned;
  // not with sinks).
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const override;
  LayerState state() const override {
    const int64_t value = o_.value_dim() == o_.head_dim ? 0 : o_.value_dim();  // LayerState: 0 = head_dim
    if (o_.sliding_window > 0)
      return {StateKind::sliding_kv, o_.num_key_value_heads, o_.head_dim, value, o_.sliding_window};
    return {StateKind::self_kv, o_.num_key_value_heads, o_.head_dim, value};
  }

  Linear *q_proj = nullptr, *k_proj = nullptr, *v_proj = nullptr, *qkv_proj = nullptr, *o_proj;
  Norm *q_norm = nullptr, *k_norm = nullptr;
  Linear* output_gate = nullptr;  // AttentionOptions::output_gate
  Parameter* output_gate_bias = nullptr;  // AttentionOptions::output_gate_bias: [num_attention_heads]
  Norm* o_input_norm = nullptr;   // AttentionOptions::o_input_norm
  Parameter* sinks = nullptr;  // [num_attention_heads]
  Linear* dt_proj = nullptr;   // AttentionOptions::dynamic_mask_keep_window
  Parameter* A = nullptr;      // [num_key_value_heads], with dt_proj

 private:
  // The dynamic mask (dynamic_mask_keep_window) from the additive `mask` [batch, 1, seq, total]
  // and the values of every key `values` [batch, kv_heads, total, head_dim]: [batch, heads, seq, total].
  Value* dynamic_mask(Ops& op, Value* mask, Value* values) const;
  struct QKV {
    Value *q, *k, *v;  // [batch, seq, heads, head_dim] (v: value_dim())
    Value* gate = nullptr;  // AttentionOptions::gate_in_q_proj: [batch, seq, heads, head_dim]
  };
  QKV project(Ops& op, Value* x) const;
  // [batch, seq, heads, head_dim] -> [batch, heads, seq, head_dim], normalized and rotated.
  Value* to_heads(Ops& op, Value* x, const Norm* norm, const RopeTables* rope) const;
  AttentionOptions o_;
};

// 0 where `allowed` (bool, any shape), the dtype's lowest finite value elsewhere (bfloat16's is
// not float32's, which would round to -inf); same shape, in `dtype`.
Value* additive_mask(Ops& op, Value* allowed, DataType dtype);

// The additive mask for causal attention over a left-padded batch with a KV cache:
// 0 where key j may be attended by query i, the dtype's lowest value elsewhere. Query i sits at
// cache index past + i (past = total_seq - seq). `sliding_window` > 0 also masks keys with
// j <= past + i - sliding_window (transformers' sliding_window_overlay).
// attention_mask: int64 [batch, total_seq]; input_ids: [batch, seq].
// `overlay` (bool, broadcastable to [batch, 1, seq, total_seq]) marks pairs attended beyond
// causality (transformers' or_mask_function, e.g. the tokens of one image, blocks/
// attention_overlay.h); the window and the padding apply after it, as create_causal_mask composes
// them (Gemma3's sliding layers: AND(sliding window, OR(causal, blockwise))). With an overlay the
// nodes are scoped "overlay_mask", not "causal_mask": the group_query_attention pass keeps
// GroupQueryAttention's own causal masking only for a plain causal mask.
// `chunk_size` > 0 also masks keys outside the query's chunk of chunk_size tokens, counted from
// the row's first token (transformers' chunked_overlay with its left_padding: (j - pad) // chunk
// == (past + i - pad) // chunk, pad = the row's leading zeros of attention_mask; Llama 4).
// Returns [batch, 1, seq, total_seq] in `dtype`.
Value* causal_mask(Ops& op, Value* attention_mask, Value* input_ids, DataType dtype,
                   int64_t sliding_window = 0, Value* overlay = nullptr, int64_t chunk_size = 0);

// The dtype's lowest finite value, the additive masks' "masked" entry (bfloat16's is not
// float32's, which would round to -inf).
float lowest_value(DataType dtype);

// The additive mask for bidirectional attention over a padded batch (transformers'
// create_bidirectional_mask): 0 where key j is a token (attention_mask 1), the dtype's lowest
// value where it is padding, the same for every query.
// attention_mask: int64 [batch, seq]. Returns [batch, 1, seq, seq] in `dtype`: the query axis is
// expanded because onnxruntime's Attention kernel (1.31, attention_helper.h) requires the mask's
// second-to-last dim to equal the query length, although the ONNX spec allows broadcasting.
Value* padding_mask(Ops& op, Value* attention_mask, DataType dtype);

}  // namespace mobius
