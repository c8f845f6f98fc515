#include "driver/option_words.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "util/error.h"
#include "util/strings.h"

namespace mobius {

namespace {

// A float type in any of its spellings → the --dtype value, or "".
std::string float_type(const std::string& value) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"f32", "f32"},  {"fp32", "f32"},  {"float32", "f32"}, {"float", "f32"},     {"f16", "f16"},
      {"fp16", "f16"}, {"float16", "f16"}, {"half", "f16"}, {"bf16", "bf16"}, {"bfloat16", "bf16"}};
  const std::string v = ascii_lower(value);
  for (const auto& [word, dtype] : kWords)
    if (v == word) return dtype;
  return "";
}

}  // namespace

std::string dtype_word(const std::string& value) {
  const std::string d = float_type(value);
  if (d.empty())
    throw Error("--dtype '" + value + "' is not a float type: f32, f16 or bf16 (fp32, fp16, float16, bfloat16 are "
                "read the same)");
  return d;
}

std::string precision_word(const std::string& value, std::string& precision, std::string& dtype) {
  const std::string v = ascii_lower(value);
  if (v.empty() || v == "int4" || v == "int8" || v == "keep") {
    precision = v;
    return "";
  }
  if (const std::string d = float_type(value); !d.empty()) {
    dtype = d;
    return "--precision " + value + " read as --dtype " + d + " (mobius' --precision is the weight quantization: "
           "int4, int8 or keep; --dtype the float type)";
  }
  throw Error("--precision '" + value + "': expected int4, int8 or keep (weight quantization), or a float type for "
              "--dtype: f32, f16, bf16");
}

std::string ep_word(const std::string& value) {
  static const std::pair<const char*, const char*> kProviders[] = {
      {"cpuexecutionprovider", "cpu"}, {"cudaexecutionprovider", "cuda"},
      {"dmlexecutionprovider", "dml"}, {"webgpuexecutionprovider", "webgpu"}};
  const std::string v = ascii_lower(value);
  for (const char* ep : {"default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"})
    if (v == ep) return ep;
  for (const auto& [provider, ep] : kProviders)
    if (v == provider) return ep;
  throw Error("--ep '" + value + "' is not a provider mobius lowers for: default (standard ONNX ops), onnx-standard, "
              "cpu, cuda, dml or webgpu");
}

}  // namespace mobius
