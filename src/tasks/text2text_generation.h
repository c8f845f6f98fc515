// Task text2text-generation: an encoder-decoder LM (transformers AutoModelForSeq2SeqLM) as two
// graphs under Optimum's ORTModelForSeq2SeqLM / transformers.js names (docs/seq2seq.md):
//   encoder: input_ids [batch_size, encoder_sequence_length] int64
//            attention_mask [batch_size, encoder_sequence_length] int64 (1 = token, 0 = padding)
//         -> last_hidden_state [batch_size, encoder_sequence_length, hidden_size]
//   decoder: input_ids [batch_size, decoder_sequence_length] int64
//            encoder_attention_mask [batch_size, encoder_sequence_length] int64
//            encoder_hidden_states [batch_size, encoder_hidden_sequence_length, hidden_size]
//            past_key_values.{i}.decoder.key|value
//              [batch_size, num_heads, past_decoder_sequence_length, head_dim]
//            past_key_values.{i}.encoder.key|value
//              [batch_size, num_heads, past_encoder_sequence_length, head_dim]
//         -> logits [batch_size, decoder_sequence_length, vocab_size]
//            present.{i}.decoder.key|value [batch_size, num_heads, total_decoder_sequence_length, head_dim]
//            present.{i}.encoder.key|value [batch_size, num_heads, encoder_sequence_length, head_dim]
// The cross-attention cache is computed once and carried: each layer's present.{i}.encoder is
// its past concatenated with the keys/values projected from encoder_hidden_states. The first
// step feeds the encoder's output and empty pasts (length 0); every later step feeds
// encoder_hidden_states of length 0 and the presents of the step before. The decoder's input is
// never padded (transformers' generate gives every row the same start token); query row i sits
// at position past_decoder_sequence_length + i. Float tensors are in the model dtype.
// The cache inputs and outputs are derived from decoder_states(): a self_kv state is
// ".decoder", a cross_kv state ".encoder".
#pragma once

#include <vector>

#include "tasks/architecture.h"
#include "tasks/layer_state.h"

namespace mobius {

struct Seq2SeqDecoderInputs {
  Value* input_ids;
  Value* encoder_hidden_states;
  Value* encoder_attention_mask;
  std::vector<std::vector<KVPair>> past;  // [layer][state], as decoder_states()
};

struct Seq2SeqDecoderOutputs {
  Value* logits;
  std::vector<std::vector<KVPair>> present;  // [layer][state], as decoder_states()
};

// What every decoder step of the family starts from: past_length int64 [1] (the first layer's
// self cache's sequence length), self_mask (decoder_causal_mask, blocks/cross_attention.h: each
// query row at past_length + i sees the cache and the rows up to it) and cross_mask
// (cross_attention_mask: the encoder padding, additive [batch, 1, seq, encoder_seq]), in dtype.
struct Seq2SeqStepMasks {
  Value* past_length;
  Value* self_mask;
  Value* cross_mask;
};
Seq2SeqStepMasks seq2seq_step_masks(Ops& op, const Seq2SeqDecoderInputs& in, DataType dtype);

// Runs a decoder's layers in order on h [batch, seq, hidden]: layer i takes in.past[i] and its
// presents are appended to out.present. Layer::forward(op, h, self_mask, encoder_hidden_states,
// cross_mask, past) returns {h, presents}; SelfMask is whatever the layer takes for its
// self-attention (a Value*, or T5's StackMask). Returns the last layer's output.
template <class Layer, class SelfMask>
Value* run_decoder_layers(Ops& op, Value* h, const std::vector<Layer*>& layers, SelfMask& self_mask,
                          Value* cross_mask, const Seq2SeqDecoderInputs& in, Seq2SeqDecoderOutputs& out) {
  for (size_t i = 0; i < layers.size(); ++i) {
    auto [y, present] = layers[i]->forward(op, h, self_mask, in.encoder_hidden_states, cross_mask, in.past[i]);
    h = y;
    out.present.push_back(std::move(present));
  }
  return h;
}

class Seq2SeqLM : public Architecture {
 public:
  std::string task() const override { return "text2text-generation"; }
  // "encoder", then "decoder".
  std::vector<NamedGraph> build_graphs() const override;

  virtual DataType dtype() const = 0;
  virtual int64_t hidden_size() const = 0;
  virtual int64_t vocab_size() const = 0;
  // The states of each decoder layer, in the order of its cache inputs.
  virtual std::vector<LayerStates> decoder_states() const = 0;
  // input_ids, attention_mask: int64 [batch, seq] -> last_hidden_state [batch, seq, hidden_size].
  virtual Value* encode(Ops& op, Value* input_ids, Value* attention_mask) const = 0;
  // One decoder step (prefill or decode) as the contract above says.
  virtual Seq2SeqDecoderOutputs decode(Ops& op, const Seq2SeqDecoderInputs& in) const = 0;

 private:
  Model build_encoder() const;
  Model build_decoder() const;
};

}  // namespace mobius
