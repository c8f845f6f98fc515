#include "package/build.h"

#include <filesystem>
#include <fstream>
#include <optional>

#include "config/hf_config.h"
#include "package/genai_config.h"
#include "package/writer.h"
#include "registry/registry.h"
#include "util/error.h"
#include "weights/gguf_checkpoint.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace mobius {

namespace fs = std::filesystem;

BuildReport build_package(const BuildOptions& o) {
  if (o.config_dir.empty() == o.gguf_file.empty())
    throw Error("exactly one of --config DIR and --gguf FILE is required");
  check_output_dir(o.output_dir, o.force);
  std::unique_ptr<Checkpoint> ckpt;
  std::optional<HfConfig> cfg;
  if (!o.gguf_file.empty()) {
    auto gguf = std::make_unique<GgufCheckpoint>(o.gguf_file);  // the config comes from it
    cfg = gguf->config();
    ckpt = std::move(gguf);
  } else {
    if (!fs::is_directory(o.config_dir)) throw Error(o.config_dir + ": not a directory");
    cfg = HfConfig::load((fs::path(o.config_dir) / "config.json").string());
  }
  BuildReport report;
  report.model_type = cfg->get_string("model_type");
  const RegistryEntry& entry = find_architecture(report.model_type, cfg->file());
  report.task = entry.task;
  std::unique_ptr<Architecture> arch = entry.create(*cfg, o.dtype);
  Model model = arch->build_model();
  model.metadata["model_type"] = report.model_type;
  model.metadata["task"] = report.task;
  report.num_nodes = model.graph.nodes.size();
  std::optional<WeightPlan> plan;
  if (o.weights) {
    if (!ckpt) ckpt = std::make_unique<SafetensorsCheckpoint>(o.config_dir);
    plan = WeightPlan::bind(model.graph, *ckpt);
    report.num_weights = plan->bindings().size();
    report.unused_tensors = plan->unused();
  }
  WriteOptions w{o.force, o.progress, nullptr};
  const auto* lm = dynamic_cast<const CausalLM*>(arch.get());
  if (o.runtime == "ort-genai" && lm) {
    w.extra_files = [&](const std::string& dir) {
      nlohmann::json g = genai_config(*lm, *cfg, o.config_dir, {.ep = o.ep});  // GGUF: config_dir ""
      std::ofstream(fs::path(dir) / "genai_config.json") << g.dump(4) << "\n";
      report.tokenizer_files = copy_tokenizer_files(o.config_dir, dir);
    };
  }
  write_package(o.output_dir, model, plan ? &*plan : nullptr, w);
  return report;
}

}  // namespace mobius
