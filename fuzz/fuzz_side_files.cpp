// Structure-aware: generation_config.json (JSON-mutated) next to a tiny llama config.json, through
// genai_config() (tasks/genai_config.h) and copy_tokenizer_files into a fresh directory.
#include "archs/archs.h"
#include "fuzz_util.h"
#include "package/copied_files.h"
#include "tasks/genai_config.h"
#include "util/error.h"

namespace fs = std::filesystem;

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  return mobius::fuzz::mutate_json(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path dir = mobius::fuzz::scratch_dir() / "ckpt";
  static const mobius::HfConfig config(
      nlohmann::json{{"model_type", "llama"}, {"vocab_size", 64}, {"hidden_size", 16}, {"num_hidden_layers", 1},
                     {"num_attention_heads", 2}, {"intermediate_size", 32}, {"eos_token_id", 2}},
      "config.json");
  static const std::unique_ptr<mobius::Architecture> arch = mobius::create_llama(config, mobius::DataType::FLOAT);
  fs::create_directories(dir);
  mobius::fuzz::write_file(dir / "generation_config.json", data, size);
  const fs::path out = mobius::fuzz::scratch_dir() / "out";
  fs::remove_all(out);
  fs::create_directories(out);
  try {
    const auto& lm = dynamic_cast<const mobius::CausalLM&>(*arch);
    nlohmann::json g = mobius::genai_config(lm, config, dir.string(), {.files = {{"model", "onnx/model.onnx"}}});
    (void)g.dump();
    mobius::copy_tokenizer_files(dir.string(), out.string());
  } catch (const mobius::Error&) {
  }
  return 0;
}
