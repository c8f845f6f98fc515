#include "tasks/audio_feature_extraction.h"

namespace mobius {

Model AudioEncoder::build_model() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const Shape samples{"batch_size", "sequence_length"};
  Value* input_values = feature_size() > 0
                            ? b.input("input_features", dtype(), {"batch_size", "sequence_length", feature_size()})
                            : b.input("input_values", dtype(), samples);
  Value* attention_mask = uses_attention_mask() ? b.input("attention_mask", DataType::INT64, samples) : nullptr;
  AudioEncoderOutputs out = forward(op, input_values, attention_mask);
  b.output(out.last_hidden_state, "last_hidden_state", {"batch_size", "num_frames", hidden_size()});
  if (ctc_vocab_size() > 0) b.output(out.logits, "logits", {"batch_size", "num_frames", ctc_vocab_size()});
  return model;
}

}  // namespace mobius
