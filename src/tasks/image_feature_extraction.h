// Task image-feature-extraction: a vision encoder's outputs for a batch of images, with the names
// Optimum's ONNX export uses for these models (optimum/exporters/onnx/model_configs.py,
// ViTOnnxConfig / CLIPVisionModelOnnxConfig):
//   inputs : pixel_values [batch_size, num_channels, height, width] float (the model dtype); the
//            channel count and both spatial sizes are fixed to the config's num_channels and
//            image_size (no position interpolation), so onnxruntime refuses another image size
//            at the input
//   outputs: last_hidden_state [batch_size, sequence_length, hidden_size] (sequence_length: the
//            class / distillation / register tokens and the patches, a fixed number)
//            pooler_output [batch_size, hidden_size] (only models whose transformers *Model
//            returns one)
// Task image-classification (tasks/image_classification.h) adds logits.
#pragma once

#include "tasks/architecture.h"

namespace mobius {

struct ImageEncoderOutputs {
  Value* last_hidden_state;         // [batch, sequence_length, hidden_size]
  Value* pooler_output = nullptr;   // [batch, hidden_size] or null
  Value* logits = nullptr;          // [batch, num_labels]: image-classification only
};

class ImageEncoder : public Architecture {
 public:
  std::string task() const override { return "image-feature-extraction"; }
  std::vector<NamedGraph> build_graphs() const override {
    return single_graph(build_model(), GraphLowering::attention);
  }
  // The one graph, "model".
  Model build_model() const;

  virtual DataType dtype() const = 0;
  virtual int64_t num_channels() const = 0;
  virtual int64_t image_size() const = 0;
  virtual int64_t sequence_length() const = 0;
  virtual int64_t hidden_size() const = 0;
  // The width of pooler_output (hidden_size unless a projection follows the pooling).
  virtual int64_t pooler_size() const { return hidden_size(); }
  virtual int64_t num_labels() const { return 0; }
  // pixel_values: [batch, num_channels, image_size, image_size].
  virtual ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const = 0;
};

}  // namespace mobius
