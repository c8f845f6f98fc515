#include "arguments.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "weights/weight_plan.h"

namespace mobius::cli {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A float type in any of its spellings → the --dtype value, or "".
std::string float_type(const std::string& value) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"f32", "f32"},  {"fp32", "f32"},  {"float32", "f32"}, {"float", "f32"},     {"f16", "f16"},
      {"fp16", "f16"}, {"float16", "f16"}, {"half", "f16"}, {"bf16", "bf16"}, {"bfloat16", "bf16"}};
  for (const auto& [word, dtype] : kWords)
    if (lower(value) == word) return dtype;
  return "";
}

// The builder's flags that mobius spells otherwise, with what to write instead.
const std::pair<const char*, const char*> kBuilderFlags[] = {
    {"--extra_options",
     "the ORT GenAI model builder's KEY=VALUE options are mobius options: block_size=N → --block-size N, "
     "accuracy_level=N → --accuracy-level N, is_symmetric=true|false → --quant-scheme sym|asym (the int4_ "
     "names likewise), exclude_embeds / shared_embeddings → --[no-]quantize-embeddings, int4 LM head → "
     "--[no-]quantize-lm-head (see mobius build --help)"},
    {"--extra-options", "see --extra_options: mobius takes --block-size, --accuracy-level, --quant-scheme, "
                        "--[no-]quantize-lm-head and --[no-]quantize-embeddings"},
};

}  // namespace

std::string dtype_word(const std::string& value) {
  const std::string d = float_type(value);
  if (d.empty())
    throw CLI::ValidationError("--dtype", "'" + value + "' is not a float type: f32, f16 or bf16 (fp32, fp16, "
                                          "float16, bfloat16 are read the same)");
  return d;
}

std::string precision_word(const std::string& value, std::string& precision, std::string& dtype) {
  const std::string v = lower(value);
  if (v == "int4" || v == "int8" || v == "keep") {
    precision = v;
    return "";
  }
  if (const std::string d = float_type(value); !d.empty()) {
    dtype = d;
    return "--precision " + value + " read as --dtype " + d + " (mobius' --precision is the weight quantization: "
           "int4, int8 or keep; --dtype the float type)";
  }
  throw CLI::ValidationError("--precision", "'" + value + "': expected int4, int8 or keep (weight quantization), "
                                            "or a float type for --dtype: f32, f16, bf16");
}

std::string ep_word(const std::string& value) {
  static const std::pair<const char*, const char*> kProviders[] = {
      {"cpuexecutionprovider", "cpu"}, {"cudaexecutionprovider", "cuda"},
      {"dmlexecutionprovider", "dml"}, {"webgpuexecutionprovider", "webgpu"}};
  const std::string v = lower(value);
  for (const char* ep : {"default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"})
    if (v == ep) return ep;
  for (const auto& [provider, ep] : kProviders)
    if (v == provider) return ep;
  throw CLI::ValidationError("--ep", "'" + value + "' is not a provider mobius lowers for: default (standard ONNX "
                                     "ops), onnx-standard, cpu, cuda, dml or webgpu");
}

std::string unknown_option(const CLI::App& sub, const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : o->get_snames()) names.push_back("-" + n);
  }
  for (const std::string& arg : args) {
    if (arg == "--") break;  // what follows is positional
    const bool long_form = arg.size() > 2 && arg.starts_with("--") && std::isalpha(static_cast<unsigned char>(arg[2]));
    const bool short_form = arg.size() == 2 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg[1]));
    if (!long_form && !short_form) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    for (const auto& [flag, answer] : kBuilderFlags)
      if (name == flag) return "unknown option '" + name + "': " + answer;
    std::string msg = "unknown option '" + name + "' for mobius " + sub.get_name();
    // A misspelling is a few edits away (a third of the name); anything further is another word.
    const std::vector<std::string> near = nearest_names(name, names, 1, std::max<size_t>(2, name.size() / 3));
    if (!near.empty()) msg += " (did you mean " + near.front() + "?)";
    return msg + "; see mobius " + sub.get_name() + " --help";
  }
  return "";
}

}  // namespace mobius::cli
