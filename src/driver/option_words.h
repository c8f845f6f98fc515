// Option values in every spelling users bring, for the CLI and the Python module alike: mobius'
// own words and the ORT GenAI model builder's (onnxruntime_genai.models.builder: -p fp16, -e CPU,
// CPUExecutionProvider), in any case. Each function maps a value to mobius' word or throws
// mobius::Error naming the accepted values (the CLI turns it into its validation error, the
// Python module into MobiusValueError).
#pragma once

#include <string>

namespace mobius {

// A --dtype value: f32 | fp32 | float32 | float, f16 | fp16 | float16 | half, bf16 | bfloat16 →
// "f32", "f16" or "bf16". Throws mobius::Error for anything else.
std::string dtype_word(const std::string& value);

// A --precision value as the builder spells it too: int4, int8 or keep set `precision` (lower
// case); a float type (fp16, fp32, bf16, ...) is the builder's precision of the whole model,
// mobius' --dtype: it sets `dtype` ("f16", ...) and returns a note saying so ("" otherwise).
// "" sets `precision` to "" (no quantization). Throws mobius::Error for anything else.
std::string precision_word(const std::string& value, std::string& precision, std::string& dtype);

// An --ep value: default, onnx-standard, cpu, cuda, dml, webgpu, or the provider's onnxruntime
// name (CPUExecutionProvider, CUDAExecutionProvider, DmlExecutionProvider,
// WebGpuExecutionProvider) → the --ep word. Throws mobius::Error for anything else.
std::string ep_word(const std::string& value);

}  // namespace mobius
