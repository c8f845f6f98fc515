// Task image-classification: a *ForImageClassification checkpoint (config.json architectures),
// Optimum's output name:
//   inputs : pixel_values as image-feature-extraction (tasks/image_feature_extraction.h)
//   outputs: logits [batch_size, num_labels] (num_labels: the length of config.json's id2label,
//            2 when it has none, as PreTrainedConfig), and the backbone's last_hidden_state
#pragma once

#include "config/hf_config.h"
#include "tasks/image_feature_extraction.h"

namespace mobius {

class ImageClassifier : public ImageEncoder {
 public:
  std::string task() const override { return "image-classification"; }
};

// Whether the first entry of config.json's architectures is a *ForImageClassification* class
// (DeiTForImageClassificationWithTeacher included).
bool is_image_classification(const HfConfig& c);

// PreTrainedConfig.num_labels: the number of entries of id2label (num_labels when given instead),
// 2 by default. Throws mobius::Error naming the field when it is not a positive count.
int64_t label_count(const HfConfig& c);

}  // namespace mobius
