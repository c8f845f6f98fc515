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

PatchSequence patch_sequence_inputs(GraphBuilder& b, DataType dtype, int64_t patch_dim, const std::string& batch) {
  PatchSequence in;
  in.pixel_values = b.input("pixel_values", dtype, {batch, "num_patches", patch_dim});
  in.pixel_attention_mask = b.input("pixel_attention_mask", DataType::INT64, {batch, "num_patches"});
  in.spatial_shapes = b.input("spatial_shapes", DataType::INT64, {batch, 2});
  return in;
}

Model PatchSequenceEncoder::build_model() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  ImageEncoderOutputs out = forward(op, patch_sequence_inputs(b, dtype(), patch_dim(), "batch_size"));
  if (out.logits) b.output(out.logits, "logits", {"batch_size", num_labels()});
  b.output(out.last_hidden_state, "last_hidden_state", {"batch_size", "num_patches", hidden_size()});
  if (out.pooler_output) b.output(out.pooler_output, "pooler_output", {"batch_size", hidden_size()});
  return model;
}

}  // namespace mobius
