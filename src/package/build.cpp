#include "package/build.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "archs/archs.h"
#include "config/hf_config.h"
#include "eval/self_check.h"
#include "package/generic.h"
#include "package/gguf_tokenizer.h"
#include "package/genai_config.h"
#include "package/writer.h"
#include "registry/registry.h"
#include "util/error.h"
#include "weights/gguf_checkpoint.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace mobius {

namespace fs = std::filesystem;

namespace {

bool is_registered(const std::string& model_type) {
  return std::any_of(registry().begin(), registry().end(),
                     [&](const RegistryEntry& e) { return model_type == e.model_type; });
}

// The factory for an unregistered model_type: the generic Llama decoder with --try-generic when
// the config is Llama-like; otherwise the registry's unknown-type error (suggesting --try-generic
// when it would apply).
ArchFactory generic_factory(const HfConfig& cfg, const std::string& type, const BuildOptions& o) {
  const std::vector<std::string> missing = missing_llama_fields(cfg);
  if (!o.try_generic) {
    try {
      find_architecture(type, cfg.file());  // throws: unknown model type, the nearest registered names
    } catch (const Error& e) {
      if (!missing.empty()) throw;
      throw Error(std::string(e.what()) + "; its fields describe a Llama-like decoder: --try-generic builds it "
                  "with the generic Llama decoder and a self-check");
    }
  }
  if (!missing.empty())
    throw Error(cfg.file() + ": field '" + missing.front() + "': missing, so model type '" + type +
                "' does not describe a Llama-like decoder and --try-generic cannot build it");
  if (const UnsupportedField u = unsupported_llama_field(cfg); !u.field.empty())
    throw Error(cfg.file() + ": field '" + u.field + "': " + u.mechanism + " is not part of the generic Llama decoder, " +
                "so --try-generic cannot build model type '" + type + "'");
  if (o.dtype != DataType::FLOAT)
    throw Error("--try-generic runs its self-check on a float32 build: use --dtype f32 (the default)");
  if (!o.weights) throw Error("--try-generic needs the weights (its self-check runs the model): drop --no-weights");
  if (o.ep != "default")
    throw Error("--try-generic runs its self-check on the canonical graph (mobius' reference evaluator has no "
                "com.microsoft ops): build with --ep default");
  return create_llama;
}

// Every checkpoint tensor must feed the generic decoder: an unused one is a mechanism it lacks.
void require_all_used(const std::vector<std::string>& unused, const Checkpoint& ckpt, const std::string& type) {
  if (unused.empty()) return;
  const TensorInfo* t = ckpt.find(unused.front());
  const std::string file = t && t->file ? *t->file : "checkpoint";
  std::string more = unused.size() > 1 ? " (and " + std::to_string(unused.size() - 1) + " more)" : "";
  throw Error(file + ": tensor '" + unused.front() + "'" + more + " is not used by the generic Llama decoder: " +
              "the checkpoint of model type '" + type + "' is not Llama-shaped");
}

// The --precision options (passes/passes.h QuantizeOptions), or nullopt for a float build.
std::optional<QuantizeOptions> quantize_options(const BuildOptions& o) {
  if (o.precision.empty()) {
    if (o.block_size != 32 || o.quant_scheme != "sym" || o.accuracy_level != 0 || o.quantize_lm_head ||
        o.quantize_embeddings)
      throw Error("--block-size, --quant-scheme, --accuracy-level, --quantize-lm-head and --quantize-embeddings need "
                  "--precision int4|int8");
    return std::nullopt;
  }
  QuantizeOptions q;
  const bool keep = o.precision == "keep";  // the GGUF's Q4_0 / Q8_0 blocks (build_package sets stored)
  if (o.precision == "int4" || o.precision == "int8")
    q.scheme.bits = o.precision == "int4" ? 4 : 8;
  else if (!keep)
    throw Error("unknown --precision '" + o.precision + "' (expected int4, int8 or keep)");
  if (keep && (o.block_size != 32 || o.quant_scheme != "sym"))
    throw Error("--block-size and --quant-scheme do not apply to --precision keep: the GGUF file's own blocks are kept");
  if (o.block_size != 32 && o.block_size != 64 && o.block_size != 128)
    throw Error("--block-size " + std::to_string(o.block_size) + ": expected 32, 64 or 128");
  q.scheme.block_size = o.block_size;
  if (o.quant_scheme != "sym" && o.quant_scheme != "asym")
    throw Error("unknown --quant-scheme '" + o.quant_scheme + "' (expected sym or asym)");
  q.scheme.symmetric = o.quant_scheme == "sym";
  if (o.accuracy_level < 0 || o.accuracy_level > 4)
    throw Error("--accuracy-level " + std::to_string(o.accuracy_level) + ": expected 0 to 4");
  q.accuracy_level = o.accuracy_level;
  q.lm_head = o.quantize_lm_head || keep;
  q.embeddings = o.quantize_embeddings || keep;
  if (o.dtype != DataType::FLOAT && o.dtype != DataType::FLOAT16)
    throw Error("--precision " + o.precision + " with --dtype bf16: onnxruntime's MatMulNBits CPU kernel has no "
                "bfloat16 (use --dtype f32 or f16)");
  if (o.try_generic)
    throw Error("--try-generic runs its self-check on a float graph (mobius' reference evaluator has no MatMulNBits): "
                "drop --precision");
  return q;
}

}  // namespace

BuildReport build_package(const BuildOptions& o) {
  std::optional<QuantizeOptions> quantize = quantize_options(o);
  if (o.config_dir.empty() == o.gguf_file.empty())
    throw Error("exactly one of --config DIR and --gguf FILE is required");
  check_output_dir(o.output_dir, o.force);
  std::unique_ptr<Checkpoint> ckpt;
  std::optional<HfConfig> cfg;
  if (!o.gguf_file.empty()) {
    auto gguf = std::make_unique<GgufCheckpoint>(o.gguf_file);  // the config comes from it
    cfg = gguf->config();
    ckpt = std::move(gguf);
    if (o.precision == "keep")
      quantize->stored = [c = ckpt.get()](const WeightRef& r) { return stored_quantization(*c, r); };
  } else {
    if (o.precision == "keep") throw Error("--precision keep keeps the quantization of a GGUF file: use it with --gguf");
    if (!fs::is_directory(o.config_dir)) throw Error(o.config_dir + ": not a directory");
    cfg = HfConfig::load((fs::path(o.config_dir) / "config.json").string());
  }
  BuildReport report;
  report.model_type = cfg->get_string("model_type");
  ArchFactory create;
  if (is_registered(report.model_type)) {
    const RegistryEntry& entry = find_architecture(report.model_type, cfg->file());
    report.task = entry.task;
    create = entry.create;
  } else {
    create = generic_factory(*cfg, report.model_type, o);
    report.task = "text-generation";
    report.generic = true;
  }
  std::unique_ptr<Architecture> arch = create(*cfg, o.dtype);
  Model model = arch->build_model();
  model.metadata["model_type"] = report.model_type;
  model.metadata["task"] = report.task;
  const ExecutionProvider ep = parse_execution_provider(o.ep);
  const PassContext ctx{.ep = ep, .max_sequence_length = context_length(*cfg), .quantize = quantize};
  report.passes = Pipeline::for_context(ctx).run(model, ctx);
  if (ep != ExecutionProvider::default_) model.metadata["execution_provider"] = o.ep;
  if (quantize) model.metadata["precision"] = o.precision;
  report.num_nodes = model.graph.nodes.size();  // after the lowering
  std::optional<WeightPlan> plan;
  if (o.weights) {
    if (!ckpt) ckpt = std::make_unique<SafetensorsCheckpoint>(o.config_dir);
    plan = WeightPlan::bind(model.graph, *ckpt);
    report.num_weights = plan->num_initializers();
    report.unused_tensors = plan->unused();
    if (report.generic)
      require_all_used(report.unused_tensors, *ckpt, report.model_type);
  }
  WriteOptions w{o.force, o.progress, nullptr, nullptr};
  const auto* lm = dynamic_cast<const CausalLM*>(arch.get());
  if (o.runtime == "ort-genai" && lm) {
    w.extra_files = [&](const std::string& dir) {
      GenaiOptions go{.ep = o.ep,
                      .past_present_share_buffer = caches_only_in_group_query_attention(model.graph),
                      .position_ids = model.graph.find_value("position_ids") != nullptr &&
                                      std::count(model.graph.inputs.begin(), model.graph.inputs.end(),
                                                 model.graph.find_value("position_ids")) > 0};
      nlohmann::json g = genai_config(*lm, *cfg, o.config_dir, go);  // GGUF: config_dir ""
      std::ofstream(fs::path(dir) / "genai_config.json") << g.dump(4) << "\n";
      report.tokenizer_files = copy_tokenizer_files(o.config_dir, dir);
      if (const auto* gguf = dynamic_cast<const GgufCheckpoint*>(ckpt.get()))
        report.tokenizer_files += write_gguf_tokenizer_files(gguf->file(), dir);
    };
  }
  if (report.generic) {
    MOBIUS_ASSERT(lm, "the generic decoder is a causal LM");
    model.metadata["architecture"] = "llama (mobius build --try-generic)";
    w.check = [&](const std::string& dir) {
      eval::SelfCheckResult r =
          eval::prefill_decode_check((fs::path(dir) / "model.onnx").string(), lm->cache_layout(), lm->vocab_size());
      if (!r.passed())
        throw Error("self-check failed for model type '" + report.model_type + "' built as the generic Llama decoder: " +
                    "prefill and decode-step logits disagree, " + eval::describe(r) + "; nothing was written");
      report.self_check = r;
    };
  }
  write_package(o.output_dir, model, plan ? &*plan : nullptr, w);
  return report;
}

}  // namespace mobius
