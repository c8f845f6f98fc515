// Task audio-feature-extraction: a speech encoder on the raw waveform (transformers AutoModel's
// `last_hidden_state`), plus the CTC head's `logits` for a *ForCTC checkpoint (AutoModelForCTC).
// Graph I/O under Optimum's names (ORTModelForFeatureExtraction / ORTModelForCTC; docs/audio.md):
//   inputs : input_values [batch_size, sequence_length] (model dtype): the waveform as the type's
//            feature extractor normalizes it, padded with zeros on the right; or for the models on
//            filterbank features (feature_size > 0: wav2vec2-bert) input_features [batch_size,
//            sequence_length, feature_size] (SeamlessM4TFeatureExtractor's stacked fbank frames)
//            attention_mask [batch_size, sequence_length] int64 (1 = sample, 0 = padding); only
//            for the models whose feature extractor returns one (uses_attention_mask)
//   outputs: last_hidden_state [batch_size, num_frames, hidden_size] (model dtype)
//            logits [batch_size, num_frames, vocab_size] (model dtype; CTC checkpoints only)
// num_frames is the conv feature encoder's output length for sequence_length samples (for
// input_features: sequence_length). Frames
// past a row's own length (padding) hold unspecified values, as in transformers.
#pragma once

#include "tasks/architecture.h"

namespace mobius {

struct AudioEncoderOutputs {
  Value* last_hidden_state;
  Value* logits = nullptr;  // null without a CTC head
};

class AudioEncoder : public Architecture {
 public:
  std::string task() const override { return "audio-feature-extraction"; }
  std::vector<NamedGraph> build_graphs() const override {
    return single_graph(build_model(), GraphLowering::attention);
  }
  // The one graph, "model".
  Model build_model() const;

  virtual DataType dtype() const = 0;
  virtual int64_t hidden_size() const = 0;
  // The vocabulary of the CTC head; 0 when the checkpoint has none (no logits output).
  virtual int64_t ctc_vocab_size() const = 0;
  // Whether the graph takes attention_mask.
  virtual bool uses_attention_mask() const = 0;
  // The width of each input_features frame; 0: the graph takes the waveform, input_values.
  virtual int64_t feature_size() const { return 0; }
  // input_values [batch, samples] or input_features [batch, frames, feature_size] (model dtype);
  // attention_mask int64 [batch, samples or frames] or null (uses_attention_mask false).
  virtual AudioEncoderOutputs forward(Ops& op, Value* input_values, Value* attention_mask) const = 0;
};

}  // namespace mobius
