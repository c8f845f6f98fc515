// Task zero-shot-image-classification: a dual image-text model (CLIPModel, SiglipModel) scoring
// every image against every text, with Optimum's names (CLIPOnnxConfig,
// optimum/exporters/onnx/model_configs.py):
//   inputs : input_ids [text_batch_size, sequence_length] int64
//            attention_mask [text_batch_size, sequence_length] int64 (1 = token, 0 = padding)
//            pixel_values [image_batch_size, num_channels, image_size, image_size], the model
//            dtype (fixed channels and size, as image-feature-extraction)
//   outputs: logits_per_image [image_batch_size, text_batch_size]
//            logits_per_text [text_batch_size, image_batch_size]
//            text_embeds [text_batch_size, projection width] (L2-normalized)
//            image_embeds [image_batch_size, projection width] (L2-normalized)
#pragma once

#include "tasks/architecture.h"

namespace mobius {

struct ImageTextOutputs {
  Value* text_embeds;   // normalized, [text_batch, width]
  Value* image_embeds;  // normalized, [image_batch, width]
  Value* logits_per_text;  // [text_batch, image_batch]
};

class ImageTextModel : public Architecture {
 public:
  std::string task() const override { return "zero-shot-image-classification"; }
  std::vector<NamedGraph> build_graphs() const override {
    return single_graph(build_model(), GraphLowering::attention);
  }
  // The one graph, "model"; logits_per_image is logits_per_text transposed.
  Model build_model() const;

  virtual DataType dtype() const = 0;
  virtual int64_t num_channels() const = 0;
  virtual int64_t image_size() const = 0;
  virtual int64_t embed_size() const = 0;
  virtual ImageTextOutputs forward(Ops& op, Value* input_ids, Value* attention_mask, Value* pixel_values) const = 0;
};

// The dual model's outputs from the projected text [text_batch, width] and image [image_batch,
// width] features: each l2-normalized over the last axis, logits_per_text = exp(logit_scale) *
// text_embeds @ image_embeds^T (CLIPModel / SiglipModel forward; SigLIP adds its logit_bias after).
ImageTextOutputs contrastive(Ops& op, Value* text_features, Value* image_features, Value* logit_scale);

}  // namespace mobius
