// LoRA adapters merged into the weights while they stream (`mobius build --lora ADAPTER_DIR`,
// mobius_cpp.build(..., lora=...); docs/lora.md).
//
// An adapter is a PEFT LoRA directory (peft 0.21, tuners/lora): adapter_config.json and
// adapter_model.safetensors, whose tensors are `base_model.model.<module>.lora_A.weight` [r, in]
// and `...lora_B.weight` [out, r] for each adapted nn.Linear `<module>` (its weight
// `<module>.weight` [out, in], or [in, out] with fan_in_fan_out, as GPT-2's Conv1D). The merged
// weight is peft's merge (tuners/lora/layer.py Linear.get_delta_weight):
//     W' = W + scale * B @ A      (transposed with fan_in_fan_out)
//     scale = alpha / r, or alpha / sqrt(r) with use_rslora
// where r and alpha are the module's: rank_pattern / alpha_pattern entries are matched against
// the module name as peft's get_pattern_key does (the first key k with `(.*\.)?(k)$` matching the
// whole name), else `r` / `lora_alpha`. The rank a module was trained with must equal its
// tensors' (rank mismatch is an error).
//
// Refused, each with a one-line error naming the file and field or tensor: DoRA (use_dora: its
// merge rescales each output row by the norm of the whole merged row, which a range of rows of
// the transposed weight cannot compute), lora_bias, modules_to_save and trainable tokens (they
// replace whole tensors), LoRA on embeddings, any peft_type other than LORA, a pickle
// adapter_model.bin without safetensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/hf_config.h"
#include "weights/checkpoint.h"
#include "weights/safetensors.h"

namespace mobius {

// One adapted Linear of an adapter.
struct LoraModule {
  std::string module;          // e.g. "model.layers.0.self_attn.q_proj" (its weight: module + ".weight")
  const TensorInfo* weight = nullptr;  // the base checkpoint's tensor module + ".weight"
  const TensorView* a = nullptr;       // lora_A.weight [r, in], in the adapter file
  const TensorView* b = nullptr;       // lora_B.weight [out, r]
  float scale = 0;                     // alpha / r, or alpha / sqrt(r) (use_rslora)
};

// A PEFT LoRA adapter directory, read and checked against the base model: `base` has every
// targeted weight, `config` (the base's config.json) agrees with the adapter's
// auto_mapping.base_model_class where both name a class. Throws mobius::Error naming the file and
// field or tensor: adapter_config.json or adapter_model.safetensors missing or malformed, a
// refused feature (above), a tensor that is not a LoRA A/B weight, an A without its B, a module the
// checkpoint has no weight for (the adapter targets another model), shapes that do not fit the
// weight, a rank other than the config's. The tensors stay mapped from the file.
class LoraAdapter {
 public:
  LoraAdapter(const std::string& dir, const Checkpoint& base, const HfConfig& config);
  const std::string& dir() const { return dir_; }
  const std::string& file() const { return file_->path(); }  // adapter_model.safetensors
  const std::vector<LoraModule>& modules() const { return modules_; }  // sorted by module name
  bool fan_in_fan_out() const { return fan_in_fan_out_; }  // the weights are stored [in, out]

 private:
  std::string dir_;
  std::unique_ptr<SafetensorsFile> file_;
  std::vector<LoraModule> modules_;
  bool fan_in_fan_out_ = false;
};

// `base` with the adapter of `adapter_dir` (LoraAdapter) merged: find() and names() are the base's;
// produce() of an adapted weight produces the base rows in float32, adds scale * B @ A for those
// rows and converts to the requested dtype (memory: the range's rows in float32 and one of A or B
// whole, in float32, besides `out`); every other tensor is the base's. Throws as LoraAdapter.
std::unique_ptr<Checkpoint> merge_lora(const std::string& adapter_dir, std::unique_ptr<Checkpoint> base,
                                       const HfConfig& config);

}  // namespace mobius
