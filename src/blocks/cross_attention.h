// Encoder-decoder (cross) attention: queries from the decoder, keys and values projected from the
// encoder's output, with a cache carried from the first step (tasks/text2text_generation.h).
// References: T5Attention with key_value_states (transformers/models/t5/modeling_t5.py),
// BartAttention as encoder_attn (transformers/models/bart/modeling_bart.py). Lowered to the ONNX
// Attention op without cache inputs on the concatenated keys/values.
#pragma once

#include "blocks/attention.h"
#include "tasks/layer_state.h"

namespace mobius {

class CrossAttention : public Module {
 public:
  // Uses hidden_size, num_attention_heads (= the key/value heads), head_dim, qkv_bias, k_bias,
  // o_bias, scale, names and dtype of `o`.
  explicit CrossAttention(const AttentionOptions& o);
  // x: [batch, seq, hidden_size]; encoder_hidden_states: [batch, new, hidden_size], or null when
  // another graph computed the whole cache (project(), the speech-to-text encoder);
  // past_key/past_value: [batch, heads, past, head_dim]; mask: additive [batch, 1 or heads, seq,
  // cross] (cross_attention_mask), or null (none). present = the projected heads of
  // encoder_hidden_states while the cache is empty (past = 0), else past unchanged: the states
  // passed with a filled cache are ignored, as Optimum and transformers.js pass them at every
  // step (computed without control flow: Slice(Concat(past, projected), 0, past ? past : new)
  // on the sequence axis; past itself when encoder_hidden_states is null).
  AttentionResult forward(Ops& op, Value* x, Value* encoder_hidden_states, Value* mask, Value* past_key,
                          Value* past_value) const;
  // The keys and values of encoder_hidden_states [batch, len, hidden_size]:
  // [batch, heads, len, head_dim] each.
  KVPair project(Ops& op, Value* encoder_hidden_states) const;

  Linear *q_proj, *k_proj, *v_proj, *o_proj;

 private:
  // [batch, seq, heads * head_dim] -> [batch, heads, seq, head_dim]
  Value* heads(Ops& op, Value* x) const;
  KVPair project_heads(Ops& op, Value* encoder_hidden_states) const;  // project() inside the scope
  AttentionOptions o_;
};

// The additive padding mask of cross-attention (transformers' create_bidirectional_mask of the
// encoder_attention_mask): encoder_attention_mask int64 [batch, enc], input_ids [batch, seq]
// -> [batch, 1, seq, enc] in `dtype` (the query axis expanded for onnxruntime, attention.h).
Value* cross_attention_mask(Ops& op, Value* encoder_attention_mask, Value* input_ids, DataType dtype);

// The additive causal mask of an unpadded decoder with a cache: query i (at position past + i)
// sees keys 0 .. past + i. input_ids [batch, seq], past: int64 [1]
// -> [batch, 1, seq, past + seq] in `dtype`.
Value* decoder_causal_mask(Ops& op, Value* input_ids, Value* past, DataType dtype);

}  // namespace mobius
