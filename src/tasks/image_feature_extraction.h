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

// A NaFlex encoder (SigLIP 2: transformers Siglip2ImageProcessor resizes each image, keeping its
// aspect ratio, to at most max_num_patches patches and pads the batch's patch sequences), with the
// processor's names:
//   inputs : pixel_values [batch_size, num_patches, num_channels * patch_size^2] float (the model
//            dtype): each image's patches row-major, then padding
//            pixel_attention_mask [batch_size, num_patches] int64 (1 = a patch, 0 = padding)
//            spatial_shapes [batch_size, 2] int64: each image's patch rows and columns
//   outputs: last_hidden_state [batch_size, num_patches, hidden_size], pooler_output
//            [batch_size, hidden_size] when the model has one; image-classification: logits
//            [batch_size, num_labels] and last_hidden_state
struct PatchSequence {
  Value* pixel_values;
  Value* pixel_attention_mask;
  Value* spatial_shapes;
};
// The three graph inputs above, their batch dim named `batch` (image_batch_size in a dual model).
PatchSequence patch_sequence_inputs(GraphBuilder& b, DataType dtype, int64_t patch_dim, const std::string& batch);

class PatchSequenceEncoder : public Architecture {
 public:
  std::string task() const override { return num_labels() > 0 ? "image-classification" : "image-feature-extraction"; }
  std::vector<NamedGraph> build_graphs() const override {
    return single_graph(build_model(), GraphLowering::attention);
  }
  // The one graph, "model".
  Model build_model() const;

  virtual DataType dtype() const = 0;
  virtual int64_t patch_dim() const = 0;  // num_channels * patch_size^2
  virtual int64_t hidden_size() const = 0;
  virtual int64_t num_labels() const { return 0; }  // > 0: an image classifier (logits)
  virtual ImageEncoderOutputs forward(Ops& op, const PatchSequence& in) const = 0;
};

}  // namespace mobius
