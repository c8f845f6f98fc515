#include "tasks/image_feature_extraction.h"

namespace mobius {

Model ImageEncoder::build_model() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  Value* pixels = b.input("pixel_values", dtype(), {"batch_size", num_channels(), image_size(), image_size()});
  ImageEncoderOutputs out = forward(op, pixels);
  if (out.logits) b.output(out.logits, "logits", {"batch_size", num_labels()});
  b.output(out.last_hidden_state, "last_hidden_state", {"batch_size", sequence_length(), hidden_size()});
  if (out.pooler_output) b.output(out.pooler_output, "pooler_output", {"batch_size", pooler_size()});
  return model;
}

}  // namespace mobius
