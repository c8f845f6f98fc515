// Structure-aware: config.json (JSON-mutated: one number changed, or a key removed) through the
// registered architecture its model_type names: the class defaults, the config reader, the spec check and the graph
// construction without weights, then the --ep cpu lowering (GroupQueryAttention with cos/sin caches
// sized from the context length) and genai_config.json. The seed corpus has one valid tiny config
// per registered model type (fuzz/corpus/config, written by fuzz/make_corpus.py).
#include "archs/archs.h"
#include "fuzz_util.h"
#include "package/copied_files.h"
#include "tasks/genai_config.h"
#include "passes/passes.h"
#include "registry/config_defaults.h"
#include "registry/registry.h"
#include "tasks/text_generation.h"
#include "util/error.h"
#include "util/input_files.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  return mobius::fuzz::mutate_json(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    nlohmann::json j = mobius::parse_json(std::span(data, size), "config.json");
    if (!j.is_object()) return 0;
    const mobius::HfConfig raw(std::move(j), "config.json");
    const mobius::RegistryEntry& e = mobius::find_architecture(raw.get_string("model_type"), raw.file());
    const mobius::HfConfig cfg = mobius::with_class_defaults(raw, e.model_type);  // as build_package reads it
    std::unique_ptr<mobius::Architecture> arch = e.create(cfg, mobius::DataType::FLOAT);
    std::vector<mobius::NamedGraph> graphs = arch->build_graphs();
    // The caches of a long context take seconds to compute: lower only short ones (the size check
    // before they are allocated runs for every length, tested by tests/cli/test_hostile.py).
    const int64_t context = mobius::context_length(cfg);
    if (context <= 4096) {
      for (mobius::NamedGraph& g : graphs) {  // each graph lowered as its task says
        const mobius::PassContext ctx{
            .ep = mobius::ExecutionProvider::cpu, .max_sequence_length = context, .lowering = g.lowering};
        mobius::Pipeline::for_context(ctx).run(g.model, ctx);
      }
    }
    if (const auto* lm = dynamic_cast<const mobius::CausalLM*>(arch.get()))
      (void)mobius::genai_config(*lm, cfg, "", {.files = {{"model", "onnx/model.onnx"}}}).dump();
  } catch (const mobius::Error&) {
  }
  return 0;
}
