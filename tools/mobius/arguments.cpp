#include "arguments.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "driver/option_words.h"
#include "util/error.h"
#include "weights/weight_plan.h"

namespace mobius::cli {

namespace {

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

// The library's word for `value` (driver/option_words.h), its refusal as CLI11's validation error.
template <typename Fn>
std::string validated(Fn&& word) {
  try {
    return word();
  } catch (const mobius::Error& e) {
    throw CLI::ValidationError(e.what());
  }
}

}  // namespace

std::string dtype_word(const std::string& value) {
  return validated([&] { return mobius::dtype_word(value); });
}

std::string precision_word(const std::string& value, std::string& precision, std::string& dtype) {
  return validated([&] { return mobius::precision_word(value, precision, dtype); });
}

std::string ep_word(const std::string& value) {
  return validated([&] { return mobius::ep_word(value); });
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
