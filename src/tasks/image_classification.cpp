#include "tasks/image_classification.h"

#include <string>

namespace mobius {

bool is_image_classification(const HfConfig& c) {
  const nlohmann::json& j = c.json();
  if (!j.contains("architectures") || !j["architectures"].is_array() || j["architectures"].empty()) return false;
  const nlohmann::json& a = j["architectures"][0];
  if (!a.is_string()) c.fail("architectures", "expected a list of class names");
  const std::string name = a.get<std::string>();
  return name.find("ForImageClassification") != std::string::npos;  // DeiT's ...WithTeacher too
}

int64_t label_count(const HfConfig& c) {
  const nlohmann::json& j = c.json();
  if (j.contains("id2label") && j["id2label"].is_object()) {
    if (j["id2label"].empty()) c.fail("id2label", "a classifier needs at least one label");
    return static_cast<int64_t>(j["id2label"].size());
  }
  const int64_t n = c.int_or("num_labels", 2);
  if (n < 1 || n > kMaxVocabSize) c.fail("num_labels", "expected a positive label count");
  return n;
}

}  // namespace mobius
