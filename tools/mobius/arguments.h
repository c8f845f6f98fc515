// The words of the mobius command line that are not CLI11's: option values in the spellings users
// bring from the ORT GenAI model builder (the library's driver/option_words.h, refusals as CLI11
// validation errors) and the answer to an option that is not one (a typo, or a builder flag mobius
// spells otherwise).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace mobius::cli {

// A --dtype value: f32 | fp32 | float32 | float, f16 | fp16 | float16 | half, bf16 | bfloat16 (any
// case) → "f32", "f16" or "bf16" (mobius::dtype_word). Throws CLI::ValidationError naming the
// accepted values.
std::string dtype_word(const std::string& value);

// A -p / --precision value as the builder spells it too: int4, int8 or keep (any case) set
// `precision`; a float type (fp16, fp32, bf16, ...) is the builder's precision of the whole model,
// mobius' --dtype: it sets `dtype` and returns a note saying so ("" otherwise). Throws
// CLI::ValidationError for anything else, naming both options' values.
std::string precision_word(const std::string& value, std::string& precision, std::string& dtype);

// An --ep / -e value: default, onnx-standard, cpu, cuda, dml, webgpu in any case, or the
// provider's onnxruntime name (CPUExecutionProvider, CUDAExecutionProvider, DmlExecutionProvider,
// WebGpuExecutionProvider) → the --ep value. Throws CLI::ValidationError naming the values.
std::string ep_word(const std::string& value);

// The error for the first word of `args` (the words after the subcommand's name) that looks like
// an option `sub` does not have ("--precison", "--extra_options"), or "" when there is none: the
// nearest option when it is a misspelling ("did you mean --precision?"), or for a builder flag
// the mobius options that do what it does.
std::string unknown_option(const CLI::App& sub, const std::vector<std::string>& args);

}  // namespace mobius::cli
