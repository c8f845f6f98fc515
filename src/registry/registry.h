// The registry: the one table mapping a config.json model_type to its architecture.
#pragma once

#include <string>
#include <vector>

#include "archs/archs.h"

namespace mobius {

struct RegistryEntry {
  const char* model_type;  // config.json "model_type"
  const char* family;      // the architecture file / family it belongs to
  const char* task;        // I/O contract, e.g. "text-generation"
  ArchFactory create;
  // onnxruntime-genai 0.18's model.type for the package (its LLM type list; the GenAI model builder
  // names them the same way: gpt_oss "gptoss", hunyuan_v1_dense "hunyuandensev1"); nullptr: the
  // task's generic type ("decoder" for text-generation); "": none (a text-generation type
  // whose layer states genai does not read: the build refuses --runtime ort-genai, driver/build.cpp). Not "gpt2": genai's Gpt_Model expects the
  // combined past_%d cache of the old GPT-2 exports; mobius writes separate key/value caches.
  const char* genai_type = nullptr;
};

// All entries, sorted by model_type.
const std::vector<RegistryEntry>& registry();
// onnxruntime-genai's model.type for a package of `e`: its genai_type, "decoder" for any other
// text-generation type, "" when onnxruntime-genai has no model type for the task.
std::string genai_model_type(const RegistryEntry& e);
// transformers' knowledge of a model_type (registry/hf_model_types.inc, generated from
// transformers' auto-model task mappings by scripts/gen_hf_model_types.py): kind is one of
// "text-generation", "text encoder", "vision-language", "multimodal", "speech", "encoder-decoder",
// "vision", "video", "time-series", "reinforcement-learning", "model part" (a sub-config of a
// composite model), "other"; text_part is the model_type of its config's text_config class, or "";
// model_class the transformers class of that task (MambaForCausalLM), else its base model's, or "";
// mechanism "state-space" for a model whose layers carry a recurrent state (Mamba, hybrids, gated
// delta rule, RG-LRU, RWKV, xLSTM), else "".
struct HfModelType {
  const char* model_type;
  const char* kind;
  const char* text_part;
  const char* model_class;
  const char* mechanism;
};
// nullptr when transformers has no such model_type.
const HfModelType* find_hf_model_type(const std::string& model_type);

// Why `model_type` is not registered, in transformers' terms: what it is (its kind and transformers
// class: "vision-language model type 'chameleon' (transformers' ChameleonForConditionalGeneration)
// is not supported yet"), whether it is planned (a state-space or hybrid type: the issue
// "state-space"); a text part that is registered (`text_model_type`, config.json's
// text_config.model_type, else the table's) is named, with the README section that saves it
// alone; a name transformers does not know gets the registered names a misspelling away.
std::string explain_unregistered(const std::string& model_type, const std::string& text_model_type = "");

// Whether --try-generic may build an unregistered `model_type` whose config is Llama-like: a
// text-generation type without a recurrent state, or a type transformers does not know. The
// reason it may not ("" when it may): a state-space type, or a kind other than text generation.
std::string generic_refusal(const std::string& model_type);

// The entry for `model_type`; throws mobius::Error "<config_file>: field 'model_type': " +
// explain_unregistered(model_type, text_model_type) when it is not registered.
const RegistryEntry& find_architecture(const std::string& model_type, const std::string& config_file,
                                       const std::string& text_model_type = "");

}  // namespace mobius
