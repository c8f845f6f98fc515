// GgufCheckpoint: a .gguf file seen as a Hugging Face checkpoint: the config.json that
// transformers would save for it, and its tensors under Hugging Face state-dict names with the
// GGUF converter's transforms undone. References: transformers integrations/ggml.py
// (GGUF_CONFIG_MAPPING) and modeling_gguf_pytorch_utils.py (load_gguf_checkpoint, the tensor
// processors); llama.cpp convert_hf_to_gguf.py (what was done to the tensors) and
// src/llama-model.cpp (the defaults GGUF metadata leaves implicit).
//
// Architectures (general.architecture -> model_type):
//   llama  -> llama        attn_q / attn_k rows un-permuted (convert_hf_to_gguf LlamaModel.permute
//                          interleaves the two rotary halves of each head; K uses the KV heads);
//                          mistral when general.name is exactly "mistral" (transformers' test), with
//                          no sliding window (llama.cpp's llama graph; GGUF stores none)
//   gemma3 -> gemma3_text  every *norm.weight minus 1 (Gemma3Model.norm_shift stored 1 + w);
//                          layer_types every 6th layer full (llama.cpp set_swa_pattern(6)),
//                          sliding layers rope_theta 10000, query_pre_attn_scalar = head_dim
//                          (hidden_size / heads for the 62-layer 27B), as llama.cpp computes it
//   gemma2 -> gemma2       norms minus 1; layer 0 sliding, alternating; softcaps from the file;
//                          query_pre_attn_scalar as llama.cpp (hidden / heads for the 46-layer 27B)
//   qwen2, qwen3, phi3, starcoder2, stablelm -> the same model_type, no tensor transform
//   nemotron -> nemotron   norms minus 1 (LayerNorm1P stored as 1 + w)
//   qwen2moe, qwen3moe -> qwen2_moe, qwen3_moe: stacked experts ffn_{gate,up,down}_exps [E, rows,
//                          cols] -> mlp.experts.e.{gate,up,down}_proj.weight (one entry per expert),
//                          ffn_gate_inp -> mlp.gate, Qwen2-MoE's *_shexp -> mlp.shared_expert.*
//   minimax-m2 -> minimax_m2: stacked experts ffn_{gate,up,down}_exps ->
//                          block_sparse_moe.experts.e.{w1,w3,w2}.weight, ffn_gate_inp ->
//                          block_sparse_moe.gate, exp_probs_b.bias -> the parameter
//                          block_sparse_moe.e_score_correction_bias; rope.dimension_count as rotary_dim
//   gpt-oss -> gpt_oss     the experts as GptOssExperts holds them: ffn_gate_exps / ffn_up_exps
//                          [E, I, H] (or ffn_gate_up_exps [E, 2I, H], gate | up) -> mlp.experts.
//                          gate_up_proj [E, H, 2I], gate the even columns, up the odd (and their
//                          biases -> gate_up_proj_bias [E, 2I]); ffn_down_exps [E, H, I] ->
//                          down_proj [E, I, H]; attn_sinks -> self_attn.sinks; ffn_gate_inp ->
//                          mlp.router; post_attention_norm -> post_attention_layernorm; YaRN rope
//                          from rope.scaling.*, every other layer sliding (llama.cpp's pattern)
//   gemma4 -> gemma4_text  norms as stored (no shift); layer_types from attention.sliding_window_pattern;
//                          the full layers' head size (key_length) and, without attn_v
//                          (attention_k_eq_v), key/value heads (head_count_kv per layer) as
//                          per_layer_config; the sliding layers' from key_length_swa; KV-shared
//                          layers (attention.shared_kv_layers), use_double_wide_mlp from the per-layer
//                          feed_forward_length; per-layer inputs (per_layer_token_embd,
//                          per_layer_model_proj, per_layer_proj_norm, blk.N.inp_gate / proj /
//                          post_norm); layer_output_scale -> layer_scalar; the proportional rope
//                          fraction from rope_freqs.weight (read by the config, not a weight); the MoE
//                          block refused
//   deci: refused with the reason (transformers cannot load it)
//   gpt2   -> gpt2         transformer.* names; Conv1D weights (attn_qkv, attn_output, ffn_up,
//                          ffn_down) stored [out, in]: produced transposed back to [in, out]
//   bloom  -> bloom        transformer.* names; attn_qkv rows (and bias) back to per-head [q, k, v]
//   mamba  -> mamba        backbone.* names; ssm_a -> A_log = log(-A) (stored -exp(A_log)),
//                          ssm_conv1d.weight [channels, kernel] -> [channels, 1, kernel]
//   falcon -> falcon       transformer.* names; the 7B layout (multi-query, one norm) or, with
//                          attn_norm_2 (ln_attn; attn_norm is then ln_mlp) or several key/value
//                          heads, new_decoder_architecture: attn_qkv rows back from [queries; keys;
//                          values] to [queries | key | value] per key/value group
//   t5, t5encoder -> t5 / umt5 (umt5 by general.name, or block 1 holding a relative bias):
//                          enc.blk.N / dec.blk.N -> encoder.block.N / decoder.block.N layers;
//                          gated GELU feed-forward when ffn_gate is present, else ReLU (as
//                          llama.cpp runs them); t5encoder: the encoder alone (T5EncoderModel)
//   lfm2   -> lfm2         layer_types from the per-layer attention.head_count_kv (0: conv);
//                          shortconv.conv.weight [hidden, L] -> conv.conv.weight [hidden, 1, L]
// Fields transformers' loader drops are read as llama.cpp reads them: biases from the tensors the
// file holds, rope.freq_base, the rotary fraction (rope.dimension_count) where the type has one.
// Tensor names: token_embd -> model.embed_tokens, output_norm -> model.norm, output -> lm_head,
// blk.N.{attn_q,attn_k,attn_v,attn_output} -> model.layers.N.self_attn.{q,k,v,o}_proj,
// attn_q_norm / attn_k_norm -> self_attn.q_norm / k_norm, ffn_{gate,up,down} -> mlp.*_proj,
// attn_norm -> input_layernorm, ffn_norm -> post_attention_layernorm (llama) or
// pre_feedforward_layernorm (gemma2/3), post_attention_norm -> post_attention_layernorm,
// attn_qkv -> self_attn.qkv_proj and ffn_up -> mlp.gate_up_proj (phi3), ffn_up / ffn_down ->
// mlp.c_fc / c_proj (starcoder2), mlp.up_proj / down_proj (nemotron),
// post_ffw_norm -> post_feedforward_layernorm. tie_word_embeddings = no output.weight.
// GGUF tensors of any other name are listed under their GGUF name (reported unused).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/hf_config.h"
#include "weights/checkpoint.h"
#include "weights/gguf.h"

namespace mobius {

class GgufCheckpoint final : public Checkpoint {
 public:
  // Opens and validates `path` (weights/gguf.h), synthesizes the config and maps the tensors.
  // Throws mobius::Error naming the file and the key or tensor: unsupported architecture, a
  // required key missing or mistyped, rope scaling or layouts GGUF input does not support, a
  // mapped tensor whose ggml type cannot be dequantized.
  explicit GgufCheckpoint(const std::string& path);

  const GgufFile& file() const { return file_; }
  // The synthesized config.json (HF field names); errors in it name the .gguf file.
  const HfConfig& config() const { return *config_; }

  const TensorInfo* find(const std::string& name) const override;
  std::vector<std::string> names() const override;
  // Dequantizes to float32, undoes the converter's transform, then converts to `dst`. Tensors
  // stored plainly (F32/F16/BF16/F64, no transform) and every matrix stream by row ranges (a
  // matrix's rows are whole blocks: a range dequantizes only the blocks it reads, memory is the
  // range's float32 values); other 1-D tensors are produced whole.
  void produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin,
               int64_t row_end, std::span<uint8_t> out) const override;
  bool streams(const TensorInfo& t) const override;
  // A matrix as the file stores it (not transposed back, not rearranged experts) tiles: a tile
  // dequantizes the blocks of its columns in its rows only.
  bool tiles(const TensorInfo& t) const override;
  void produce_tile(const TensorInfo& t, DataType dst, int64_t row_begin, int64_t row_end, int64_t col_begin,
                    int64_t col_end, std::span<uint8_t> out) const override;
  // The source rows a range read (whole heads when un-permuted); for a transposed or 1-D tensor,
  // all of its data.
  void release(const TensorInfo& t, bool transpose, int64_t row_begin, int64_t row_end) const override;
  // Q4_0 -> 4 bits, Q8_0 -> 8 bits, blocks of 32 along K, symmetric: ggml's value d * (q - 8)
  // (Q4_0) or d * q (Q8_0, q int8) is MatMulNBits' (q' - zero point) * scale with scale d, q' = q
  // and the default zero point 8 (Q4_0), q' = q + 128 and the default 128 (Q8_0): the same float32
  // product. Q6_K -> 8 bits, blocks of 16, zero point 32: its value (d * scales[b]) * (q - 32), q
  // the 6-bit quant, is MatMulNBits' with scale d * scales[b] (exact in float32: an 11-bit d times
  // an 8-bit integer; a float16 scale rounds it). Q4_1's d * q + m is (q - zp) * d only where
  // -m / d is an integer in [0, 15], which ggml does not guarantee, so Q4_1 (like Q4_K, Q5_K and
  // Q5_x) has none. None either for a 1-D tensor or one with the gemma norm shift.
  std::optional<BlockQuantization> stored_quantization(const TensorInfo& t) const override;
  // The ggml type name ("Q4_K", "F32", ...) of the GGUF tensor that `t` (one of this checkpoint's
  // tensors) is read from; "?" for a type the reader has no name for.
  std::string stored_type(const TensorInfo& t) const;
  // The bytes of that GGUF tensor in the file (its blocks).
  uint64_t stored_bytes(const TensorInfo& t) const;
  // Copies the blocks of HF rows [row_begin, row_end) (un-permuted as produce() does): data with
  // Q4_0's nibbles reordered (ggml: element j in the low nibble of byte j, j + 16 in its high nibble;
  // MatMulNBits: elements 2i, 2i + 1 in byte i) or Q8_0's bytes + 128, and d as the scale; Q6_K's
  // 6-bit quants one per byte in element order, d * scales[b] as the scale, 32 as the zero point.
  void produce_stored(const TensorInfo& t, int64_t row_begin, int64_t row_end, DataType scale_dtype,
                      uint8_t* data, uint8_t* scales, uint8_t* zero_points) const override;

 private:
  // produce() of a matrix: output rows [row_begin, row_end) are Hugging Face rows (or, transposed,
  // columns) of it; dequantizes the blocks of those rows (columns) of each GGUF row they come from.
  void produce_block_rows(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin,
                          int64_t row_end, std::span<uint8_t> out) const;
  // The Hugging Face sub-matrix rows [r0, r1) x columns [c0, c1) of matrix `t`, converted to `dst`
  // (transposed when `transpose`) into `out`: the blocks of those columns of each GGUF row the rows
  // come from, dequantized, the value transform undone.
  void produce_sub(const TensorInfo& t, DataType dst, bool transpose, int64_t r0, int64_t r1, int64_t c0,
                   int64_t c1, std::span<uint8_t> out) const;
  struct Entry : TensorInfo {
    const GgufTensor* source = nullptr;
    std::span<const uint8_t> data;  // this tensor's bytes in source (one expert's of stacked experts)
    int64_t unpermute_heads = 0;  // > 0: rows interleaved per head by LlamaModel.permute
    float shift = 0.0f;           // added to every value (gemma3 norms: -1)
    bool log_of_negated = false;  // mamba A_log: log(-A) of the stored A = -exp(A_log)
    bool stored_transposed = false;  // gpt2 Conv1D: shape is [in, out], the file holds [out, in]
    // > 0: a fused qkv the converter regrouped (bloom, falcon): in the model, qkv_groups groups of
    // [qkv_queries query heads | key | value]; in the file, [all queries; all keys; all values]
    int64_t qkv_groups = 0;
    int64_t qkv_queries = 0;
    // GPT-OSS's stacked experts (GptOssModel.modify_tensors), produced whole in float32 by
    // rearrange(). gate_up: the Hugging Face tensor's last axis interleaves gate (even) and up (odd)
    // values; pair: source holds the gate, odd_source the up (ffn_gate_exps, ffn_up_exps); halves:
    // source holds [gate | up] halves along the axis that becomes the last (ffn_gate_up_exps).
    // experts_transposed: a weight [E, in, out] stored [E, out, in] (each expert transposed).
    enum class GateUp { none, pair, halves };
    GateUp gate_up = GateUp::none;
    const GgufTensor* odd_source = nullptr;
    std::span<const uint8_t> odd_data;
    bool experts_transposed = false;
    bool rearranged() const { return gate_up != GateUp::none || experts_transposed; }
    // The whole Hugging Face tensor in float32 into `out` (its element count): each stored row
    // (e, r) of the source(s) [E, R, K] (a bias [E, K] as one "expert" of E rows) dequantized,
    // then value k placed at HF [e, k, 2r + part] (transposed) or [e, r, 2k + part] (bias).
    void rearrange(float* out) const;
    // Undoes the converter's value transform (shift, then log(-x)) in place, in float32.
    void undo_value_transform(std::span<float> v) const;
    // The GGUF row of Hugging Face row r (of shape[0]): with unpermute_heads, HF row
    // h*D + p*D/2 + j is GGUF row h*D + 2j + p (D = head size: LlamaModel.permute); with qkv_groups
    // G of Q queries, HF row (g*(Q + 2) + s)*D + i is GGUF row (g*Q + s)*D + i for a query (s < Q),
    // else G*Q*D + (s - Q)*G*D + g*D + i (BloomModel / FalconModel.modify_tensors); else r.
    int64_t gguf_row(int64_t r) const;
  };
  GgufFile file_;
  std::optional<HfConfig> config_;
  std::map<std::string, Entry> entries_;  // by Hugging Face name
  std::vector<std::string> unmapped_;     // GGUF names of tensors with no Hugging Face name
};

}  // namespace mobius
