// Structure-aware, over the side files beside a checkpoint's config.json, one JSON document an input:
//   - generation_config.json (the document) next to a tiny llama config.json, through
//     genai_config() (tasks/genai_config.h) and copy_tokenizer_files into a fresh directory;
//   - a sentence-transformers model: a document with a "modules.json" member holds the files
//     by name, of kSentenceFiles only ({"modules.json": [...], "1_Pooling/config.json": {...},
//     "2_Dense/config.json": {...}}), written beside a tiny bert config.json and read through
//     read_sentence_modules, with_sentence_embedding and the graph (tasks/sentence_embedding.h).
#include "archs/archs.h"
#include "fuzz_util.h"
#include "package/copied_files.h"
#include "tasks/genai_config.h"
#include "tasks/sentence_embedding.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

constexpr const char* kSentenceFiles[] = {"modules.json", "1_Pooling/config.json", "2_Dense/config.json"};

void generation_config(const uint8_t* data, size_t size) {
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
}

void sentence_transformers(const nlohmann::json& files) {
  static const mobius::HfConfig config(
      nlohmann::json{{"model_type", "bert"}, {"vocab_size", 64}, {"hidden_size", 16}, {"num_hidden_layers", 1},
                     {"num_attention_heads", 2}, {"intermediate_size", 32}},
      "config.json");
  const fs::path dir = mobius::fuzz::scratch_dir() / "st";
  fs::remove_all(dir);
  for (const char* name : kSentenceFiles) {
    if (!files.contains(name)) continue;
    fs::create_directories((dir / name).parent_path());
    const std::string text = files[name].dump();
    mobius::fuzz::write_file(dir / name, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  }
  try {
    const mobius::SentenceModules modules = mobius::read_sentence_modules(dir.string());
    auto model = mobius::with_sentence_embedding(mobius::create_bert(config, mobius::DataType::FLOAT), modules);
    (void)model->build_graphs();
  } catch (const mobius::Error&) {
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  return mobius::fuzz::mutate_json(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_object() && j.contains("modules.json"))
    sentence_transformers(j);
  else
    generation_config(data, size);
  return 0;
}
