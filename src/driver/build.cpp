#include "driver/build.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "archs/archs.h"
#include "config/hf_config.h"
#include "eval/self_check.h"
#include "driver/apply_weights.h"
#include "driver/generic.h"
#include "driver/pipeline.h"
#include "package/gguf_tokenizer.h"
#include "package/copied_files.h"
#include "tasks/genai_config.h"
#include "package/lora_runtime.h"
#include "driver/source_path.h"
#include "package/writer.h"
#include "registry/config_defaults.h"
#include "registry/diffusers_registry.h"
#include "registry/registry.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"
#include "util/error.h"
#include "util/input_files.h"
#include "util/strings.h"
#include "weights/gguf_checkpoint.h"
#include "weights/lora.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace mobius {

namespace fs = std::filesystem;

namespace {

bool is_registered(const std::string& model_type) {
  return std::any_of(registry().begin(), registry().end(),
                     [&](const RegistryEntry& e) { return model_type == e.model_type; });
}

// The factory for an unregistered model_type: with --try-generic, the generic Llama decoder when
// the config is Llama-like, the generic MoE decoder (archs/generic_moe.h) when it also names
// experts (the experts' layout from `tensor_names`, the checkpoint's); otherwise the registry's
// unknown-type error (suggesting --try-generic when it would apply). `decoder` is set to the
// decoder's name for the messages.
ArchFactory generic_factory(const HfConfig& cfg, const std::string& type, const BuildOptions& o,
                            const std::function<std::vector<std::string>()>& tensor_names, std::string& decoder) {
  const std::vector<std::string> missing = missing_llama_fields(cfg);
  const std::string refusal = generic_refusal(type);  // a state-space or multimodal type, though Llama-like
  if (!o.try_generic) {
    try {
      const std::optional<HfConfig> text = cfg.sub("text_config");
      find_architecture(type, cfg.file(), text ? text->string_or("model_type", "") : "");  // throws: why
    } catch (const Error& e) {
      if (!missing.empty() || !refusal.empty()) throw;
      throw Error(std::string(e.what()) + "; its fields describe a Llama-like decoder: --try-generic builds it "
                  "with the " + generic_decoder_name(cfg) + " and a self-check");
    }
  }
  if (!refusal.empty()) throw Error(cfg.file() + ": field 'model_type': --try-generic: " + refusal);
  if (!missing.empty())
    throw Error(cfg.file() + ": field '" + missing.front() + "': missing, so model type '" + type +
                "' does not describe a Llama-like decoder and --try-generic cannot build it");
  const bool moe = moe_like(cfg);
  decoder = generic_decoder_name(cfg);
  UnsupportedField u = unsupported_llama_field(cfg);
  if (u.field.empty() && moe) u = unsupported_moe_field(cfg);
  if (!u.field.empty())
    throw Error(cfg.file() + ": field '" + u.field + "': " + u.mechanism + " is not part of the " + decoder + ", " +
                "so --try-generic cannot build model type '" + type + "'");
  if (o.dtype != DataType::FLOAT)
    throw Error("--try-generic runs its self-check on a float32 build: use --dtype f32 (the default)");
  if (!o.weights) throw Error("--try-generic needs the weights (its self-check runs the model): drop --no-weights");
  if (o.ep != "default")
    throw Error("--try-generic runs its self-check on the canonical graph (mobius' reference evaluator has no "
                "com.microsoft ops): build with --ep default");
  return moe ? generic_moe_factory(generic_moe_shape(tensor_names(), cfg)) : create_llama;
}

// Every checkpoint tensor must feed the generic decoder: an unused one is a mechanism it lacks.
void require_all_used(const std::vector<std::string>& unused, const Checkpoint& ckpt, const std::string& type,
                      const std::string& decoder) {
  if (unused.empty()) return;
  const TensorInfo* t = ckpt.find(unused.front());
  const std::string file = t && t->file ? *t->file : "checkpoint";
  std::string more = unused.size() > 1 ? " (and " + std::to_string(unused.size() - 1) + " more)" : "";
  throw Error(file + ": tensor '" + escaped(unused.front()) + "'" + more + " is not used by the " + decoder + ": " +
              "the checkpoint of model type '" + type + "' is not " +
              (decoder == "generic Llama decoder" ? "Llama-shaped" : "Mixtral- or Qwen3-MoE-shaped"));
}

// --precision keep: each weight matrix of `graphs` by the GGUF type it is stored in, kept as its
// blocks or written as float (BuildReport::kept_types).
std::map<std::string, BuildReport::KeptMatrices> kept_types(const std::vector<NamedGraph>& graphs,
                                                            const GgufCheckpoint& gguf) {
  std::map<std::string, BuildReport::KeptMatrices> out;
  for (const NamedGraph& g : graphs)
    for (const Initializer& init : g.model.graph.initializers) {
      if (!init.weight) continue;
      const BlockQuantize* q = quantize_of(init.weight->transforms);
      if (q && q->part != BlockQuantize::Part::data) continue;  // a matrix's scales or zero points
      std::vector<std::string> keys = {init.weight->source_key};
      if (const Concat* c = concat_of(init.weight->transforms)) keys.insert(keys.end(), c->keys.begin(), c->keys.end());
      for (const std::string& key : keys) {
        const TensorInfo* t = gguf.find(key);
        if (!t || t->shape.size() != 2) continue;  // norms and biases are float in any build
        BuildReport::KeptMatrices& k = out[gguf.stored_type(*t)];
        (q && q->scheme.from_checkpoint ? k.kept : k.float_) += 1;
      }
    }
  return out;
}

// --precision int8 with accuracy level 0 on a graph that runs on the CPU: onnxruntime's CPU
// MatMulNBits has no fast kernel for 8-bit weights with float activations (it dequantizes the
// whole matrix on every call): a warning with the fix.
void check_int8_speed(const BuildOptions& o, ExecutionProvider ep, const QuantizeOptions& q,
                      std::vector<std::string>& warnings) {
  const bool cpu_runnable = ep == ExecutionProvider::default_ || ep == ExecutionProvider::onnx_standard ||
                            ep == ExecutionProvider::cpu;
  if (o.precision != "int8" || q.accuracy_level != 0 || !cpu_runnable) return;
  warnings.push_back("--precision int8 --ep " + o.ep + ": MatMulNBits accuracy level 0 (float activations), for "
                     "which onnxruntime's CPU kernel has no fast 8-bit path (Qwen2.5-0.5B decoded 0.68 tokens/s, "
                     "against 23.8 with --ep cpu and 8.3 in float): for the CPU build with --ep cpu (accuracy level "
                     "4 and GroupQueryAttention), or add --accuracy-level 4");
}

// The <bos> of a package's tokenizer when it adds one to every text (tokenizer_config.json's
// add_bos_token, else its bos_token named in tokenizer.json's post_processor: how
// onnxruntime-extensions decides), or "". onnxruntime-genai 0.18 creates its tokenizer with
// add_special_tokens=false (src/models/model.cpp Tokenizer::Tokenizer), and no tokenizer file can
// turn that on: its encode() then leaves the <bos> out, which Gemma's generation needs.
std::string bos_genai_leaves_out(const fs::path& package) {
  const fs::path config = package / "tokenizer_config.json", tokenizer = package / "tokenizer.json";
  if (!fs::exists(config)) return "";
  const nlohmann::json c = read_json_file(config.string(), kMaxConfigBytes);
  const nlohmann::json bos_field = c.value("bos_token", nlohmann::json());
  const std::string bos = bos_field.is_string() ? bos_field.get<std::string>()
                          : bos_field.is_object() && bos_field.value("content", nlohmann::json()).is_string()
                              ? bos_field["content"].get<std::string>()
                              : "";
  if (bos.empty()) return "";
  if (const auto add = c.find("add_bos_token"); add != c.end() && add->is_boolean()) return add->get<bool>() ? bos : "";
  if (!fs::exists(tokenizer)) return "";
  // the post-processor adds it (TemplateProcessing's SpecialToken, Roberta/BertProcessing's cls,
  // within a Sequence): the token named in that object, not anywhere in the file (the vocabulary
  // holds it too)
  const nlohmann::json t = read_json_file(tokenizer.string(), kMaxJsonBytes);
  const nlohmann::json post = t.is_object() ? t.value("post_processor", nlohmann::json()) : nlohmann::json();
  if (!post.is_object()) return "";
  const nlohmann::json quoted = bos;  // as JSON writes it
  return post.dump().find(quoted.dump()) != std::string::npos ? bos : "";
}

// The name of a --lora-runtime adapter directory (written as "<name>.onnx_adapter").
std::string adapter_name(const std::string& dir) {
  const fs::path p = fs::path(dir).lexically_normal();
  return (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
}

}  // namespace

std::optional<QuantizeOptions> quantize_options(const BuildOptions& o, ExecutionProvider ep, bool tied_embeddings) {
  if (o.precision.empty()) {
    if (o.block_size != 32 || o.quant_scheme != "sym" || o.accuracy_level || o.quantize_lm_head ||
        o.quantize_embeddings)
      throw Error("--block-size, --quant-scheme, --accuracy-level, --[no-]quantize-lm-head and "
                  "--[no-]quantize-embeddings need --precision int4|int8");
    return std::nullopt;
  }
  const bool keep = o.precision == "keep";  // the GGUF's Q4_0 / Q8_0 / Q6_K blocks (build_package sets stored)
  if (o.precision != "int4" && o.precision != "int8" && !keep)
    throw Error("unknown --precision '" + o.precision + "' (expected int4, int8 or keep)");
  if (keep && (o.block_size != 32 || o.quant_scheme != "sym"))
    throw Error("--block-size and --quant-scheme do not apply to --precision keep: the GGUF file's own blocks are kept");
  QuantizeOptions q = builder_quantize_defaults(ep, o.precision == "int4" ? 4 : 8, tied_embeddings);
  if (o.block_size != 32 && o.block_size != 64 && o.block_size != 128)
    throw Error("--block-size " + std::to_string(o.block_size) + ": expected 32, 64 or 128");
  q.scheme.block_size = o.block_size;
  if (o.quant_scheme != "sym" && o.quant_scheme != "asym")
    throw Error("unknown --quant-scheme '" + o.quant_scheme + "' (expected sym or asym)");
  q.scheme.symmetric = o.quant_scheme == "sym";
  q.accuracy_level = o.accuracy_level.value_or(q.accuracy_level);
  if (q.accuracy_level < 0 || q.accuracy_level > 4)
    throw Error("--accuracy-level " + std::to_string(q.accuracy_level) + ": expected 0 to 4");
  q.lm_head = o.quantize_lm_head.value_or(q.lm_head || keep);  // keep: every kept matrix, head and embeddings
  q.embeddings = o.quantize_embeddings.value_or(q.embeddings || keep);
  if (o.dtype != DataType::FLOAT && o.dtype != DataType::FLOAT16)
    throw Error("--precision " + o.precision + " with --dtype bf16: onnxruntime's MatMulNBits CPU kernel has no "
                "bfloat16 (use --dtype f32 or f16)");
  if (o.try_generic)
    throw Error("--try-generic runs its self-check on a float graph (mobius' reference evaluator has no MatMulNBits): "
                "drop --precision");
  return q;
}

void check_bfloat16(const BuildOptions& o, ExecutionProvider ep, std::vector<std::string>& warnings) {
  if (o.dtype != DataType::BFLOAT16) return;
  const std::string why = "onnxruntime's CPU provider has no bfloat16 kernel for MatMul";
  if (ep == ExecutionProvider::cpu)
    throw Error("--dtype bf16 --ep cpu: " + why + ", so the package would not load (use --dtype f32 or f16, or "
                "--ep cuda|dml|webgpu for a GPU)");
  if (ep == ExecutionProvider::default_ || ep == ExecutionProvider::onnx_standard)
    warnings.push_back("--dtype bf16: " + why + ": this package runs on a GPU provider only (CUDA, DirectML, "
                       "WebGPU), not on the CPU");
}

namespace {

// The source a build reads (--config and --gguf are synonyms, either naming any kind of source):
// the GGUF file, or the checkpoint directory (a model id resolved from the local Hugging Face cache).
SourceArg source_arg(const BuildOptions& o) {
  if (o.config_dir.empty() == o.gguf_file.empty())
    throw Error(o.config_dir.empty() ? "no source given: name a checkpoint directory, a Hugging Face id (ORG/NAME) "
                                       "or a .gguf file"
                                     : "two sources given (" + o.config_dir + " and " + o.gguf_file +
                                           "): name one checkpoint directory, Hugging Face id or .gguf file");
  SourceArg s = classify_source(o.config_dir.empty() ? o.gguf_file : o.config_dir);
  if (!s.gguf) s.path = resolve_checkpoint_dir(s.path);
  return s;
}

std::string input_path(const BuildOptions& o) { return source_arg(o).path; }

}  // namespace

BuildSource open_source(const BuildOptions& o) {
  const SourceArg input = source_arg(o);
  BuildSource src;
  if (input.gguf) {
    auto gguf = std::make_unique<GgufCheckpoint>(input.path);  // the config comes from it
    src.config = gguf->config();
    src.checkpoint = std::move(gguf);
    return src;
  }
  src.config_dir = input.path;
  const fs::path dir(src.config_dir);
  if (!fs::exists(dir / "config.json") && fs::exists(dir / "model_index.json"))  // driver/pipeline.h builds it
    throw Error((dir / "model_index.json").string() + ": a diffusers pipeline: `mobius build` builds it; this "
                "command reads a single model's checkpoint (build the pipeline, or name a component's folder)");
  src.config = HfConfig::load(checkpoint_file(dir, "config.json").string());
  if ((src.custom = find_custom_type(src.config->string_or("model_type", ""))))
    src.config = rename_config(*src.custom, *src.config);
  return src;
}

std::unique_ptr<Architecture> create_for_task(ArchFactory create, const HfConfig& cfg, DataType dtype,
                                              const std::string& task_word, const std::string& config_dir,
                                              std::optional<SentenceModules>& modules) {
  const std::string task = ascii_lower(task_word);  // any case, as the other option values
  const bool asked = task == "sentence-embedding";
  std::unique_ptr<Architecture> arch = create(cfg, dtype);
  if (asked && !dynamic_cast<const Encoder*>(arch.get()))
    throw Error("--task sentence-embedding: " + cfg.string_or("model_type", "") + " builds " + arch->task() + " only");
  arch = with_task(std::move(arch), asked ? "feature-extraction" : task, cfg);
  const bool found = !config_dir.empty() && has_sentence_modules(config_dir);
  if (asked && !found)
    throw Error("--task sentence-embedding: " + (config_dir.empty() ? std::string("a GGUF file") : config_dir) +
                " has no modules.json (a sentence-transformers model as SentenceTransformer.save writes it)");
  if (asked || (task.empty() && found && dynamic_cast<const Encoder*>(arch.get()) && arch->task() == "feature-extraction")) {
    modules = read_sentence_modules(config_dir);
    arch = with_sentence_embedding(std::move(arch), *modules);
  }
  return arch;
}

LoweredGraphs lower_graphs(const Architecture& arch, const HfConfig& cfg, const BuildOptions& o, ExecutionProvider ep,
                           const Checkpoint* checkpoint) {
  LoweredGraphs out{arch.build_graphs(), std::nullopt, {}};
  const bool tied = std::any_of(out.graphs.begin(), out.graphs.end(),
                                [](const NamedGraph& g) { return has_tied_embeddings(g.model.graph); });
  out.quantize = quantize_options(o, ep, tied);
  if (o.precision == "keep" && checkpoint)
    out.quantize->stored = [checkpoint](const WeightRef& r) { return stored_quantization(*checkpoint, r); };
  for (NamedGraph& g : out.graphs) {  // each graph as its task says (tasks/architecture.h NamedGraph::lowering)
    const PassContext c{.ep = ep, .max_sequence_length = context_length(cfg), .quantize = out.quantize,
                        .lowering = g.lowering};
    for (const PassReport& r : Pipeline::for_context(c).run(g.model, c)) {  // summed over the graphs, by pass
      auto same = std::find_if(out.passes.begin(), out.passes.end(),
                               [&](const PassReport& p) { return p.pass == r.pass; });
      if (same != out.passes.end()) same->rewrites += r.rewrites;
      else out.passes.push_back(r);
    }
  }
  return out;
}

void check_runtime(const BuildOptions& o, const std::string& genai_type, const std::string& task,
                   const std::string& model_type) {
  if (o.runtime == "ort-genai" && genai_type.empty() && task == "text-generation")
    throw Error("onnxruntime-genai cannot run this model: " + model_type + " has no onnxruntime-genai 0.18 model type "
                "that reads its layers' states; build with --runtime none: the package runs in onnxruntime "
                "with the I/O of docs/design.md \"The state model\"");
}

VariantDtype variant_dtype(const BuildOptions& o) {
  const bool f16 = o.dtype == DataType::FLOAT16;
  if (o.dtype == DataType::FLOAT || f16) {
    if (o.precision.empty()) return f16 ? VariantDtype{"fp16", "_fp16"} : VariantDtype{"fp32", ""};
    if (o.precision == "int4") return f16 ? VariantDtype{"q4f16", "_q4f16"} : VariantDtype{"q4", "_q4"};
    if (o.precision == "int8" && !f16) return {"q8", "_quantized"};
  }
  const char* dtype = f16 ? "f16" : o.dtype == DataType::BFLOAT16 ? "bf16" : "f32";
  throw Error("--variant: transformers.js names no variant for --dtype " + std::string(dtype) +
              (o.precision.empty() ? "" : " --precision " + o.precision) +
              " (it names fp32, fp16, q4 and q4f16 (--precision int4), q8 (--precision int8 at f32)): drop --variant");
}

void check_variant_target(const BuildOptions& o, const std::string& source, bool pipeline) {
  const fs::path out(o.output_dir), src(source);
  std::error_code ec;
  if (!o.variant || !fs::is_directory(out, ec) || fs::is_empty(out, ec)) return;
  const bool hf = fs::is_directory(out / kHfGraphDir, ec) || fs::exists(out / "mobius_manifest.json", ec);
  if ((o.layout == PackageLayout::hf) != hf)
    throw Error(o.output_dir + ": --variant adds into a package of the " + (hf ? "hf" : "flat") +
                " layout: build with --layout " + (hf ? "hf" : "flat"));
  const char* file = pipeline ? "model_index.json" : "config.json";
  const bool theirs = fs::exists(out / file, ec), ours = fs::is_directory(src, ec) && fs::exists(src / file, ec);
  if (theirs != ours || fs::exists(out / (pipeline ? "config.json" : "model_index.json"), ec))
    throw Error(o.output_dir + ": --variant adds into a package of the same model, and this one was built from " +
                "another kind of source (" + (pipeline ? "a single model" : "a pipeline or a GGUF file") +
                "): choose another output directory");
  if (!theirs) return;  // a GGUF file's package: no config.json on either side
  nlohmann::json a = read_json_file((out / file).string(), kMaxJsonBytes);
  const nlohmann::json b = read_json_file((src / file).string(), kMaxJsonBytes);
  if (a.is_object()) a.erase("transformers.js_config");  // the hf layout's addition
  if (a != b)
    throw Error((out / file).string() + ": --variant adds into a package of the same model, and its " + file +
                " differs from " + (src / file).string() + ": choose another output directory");
}

BuildReport build_package(const BuildOptions& o) {
  if (const SourceArg s = source_arg(o); !s.gguf) check_variant_target(o, s.path, is_pipeline_source(s.path));
  if (const SourceArg s = source_arg(o); !s.gguf && is_pipeline_source(s.path)) {
    BuildOptions pipeline = o;
    pipeline.config_dir = s.path;  // a Hugging Face id resolved
    return build_pipeline(pipeline);
  }
  BuildReport report;
  const ExecutionProvider ep = parse_execution_provider(o.ep);
  check_bfloat16(o, ep, report.warnings);
  quantize_options(o, ep, false);  // checks the options before anything is read
  if (o.runtime != "ort-genai" && o.runtime != "optimum" && o.runtime != "none")
    throw Error("unknown --runtime '" + o.runtime + "' (expected ort-genai, optimum or none)");
  std::vector<std::string> inputs = {input_path(o)};
  if (!o.lora_dir.empty()) inputs.push_back(o.lora_dir);
  inputs.insert(inputs.end(), o.lora_runtime.begin(), o.lora_runtime.end());
  if (!o.expect_package.empty()) inputs.push_back(o.expect_package);  // apply-weights' PACKAGE
  const std::optional<VariantDtype> variant = o.variant ? std::optional(variant_dtype(o)) : std::nullopt;
  // before the input is read; a variant goes into a previous package (or an empty directory)
  check_output_dir(o.output_dir, o.force || variant, inputs);
  BuildSource src = open_source(o);
  if (o.precision == "keep" && !src.config_dir.empty())
    throw Error("--precision keep keeps the quantization of a GGUF file: build a .gguf source with it");
  if (!o.lora_dir.empty() && !o.weights)
    throw Error("--lora " + o.lora_dir + ": the adapter is merged into the weights: drop --no-weights");
  if (!o.lora_dir.empty() && o.precision == "keep")
    throw Error("--lora " + o.lora_dir + ": the merged weights are no longer the GGUF file's blocks: use --precision "
                "int4|int8 or none with --lora, not keep");
  std::unique_ptr<Checkpoint>& ckpt = src.checkpoint;
  std::optional<HfConfig>& cfg = src.config;
  if (ckpt && !o.lora_dir.empty()) ckpt = merge_lora(o.lora_dir, std::move(ckpt), *cfg);  // a GGUF
  const std::string& config_dir = src.config_dir;
  ArchFactory create;
  std::string genai_type = "decoder";
  if (is_diffusers_config(*cfg)) {  // a diffusers component folder (registry/diffusers_registry.h)
    report.model_type = cfg->get_string("_class_name");
    const DiffusersEntry& entry = find_diffusers_class(report.model_type, cfg->file());
    report.task = entry.task;
    create = entry.create;
    cfg = with_diffusers_defaults(*cfg, report.model_type);
  } else if (report.model_type = cfg->get_string("model_type"); is_registered(report.model_type)) {
    const RegistryEntry& entry = find_architecture(report.model_type, cfg->file());
    report.task = entry.task;
    create = entry.create;
    genai_type = genai_model_type(entry);
    cfg = with_class_defaults(*cfg, report.model_type);  // fields left out mean the class defaults
  } else {
    auto tensor_names = [&] { return ckpt ? ckpt->names() : SafetensorsCheckpoint(config_dir).names(); };
    create = generic_factory(*cfg, report.model_type, o, tensor_names, report.generic_decoder);
    report.task = "text-generation";
    report.generic = true;
  }
  // A relation between fields checked on the built spec (blocks/spec_check.h) or a size the
  // lowering refuses names no file: add it.
  std::unique_ptr<Architecture> arch;
  std::optional<SentenceModules> sentence_modules;  // --task sentence-embedding: its Dense layers' weights
  std::vector<NamedGraph> graphs;
  std::vector<WeightPlan> plans;
  try {
    arch = create_for_task(create, *cfg, o.dtype, o.task, config_dir, sentence_modules);
    if (auto* speech = dynamic_cast<SpeechToText*>(arch.get()); speech && o.runtime == "optimum")
      speech->set_contract(SpeechContract::optimum);
    report.task = arch->task();  // a vision type's image-classification checkpoint
    check_runtime(o, genai_type, report.task, report.model_type);
    LoweredGraphs lowered = lower_graphs(*arch, *cfg, o, ep, ckpt.get());
    graphs = std::move(lowered.graphs);
    report.quantize = std::move(lowered.quantize);
    report.passes = std::move(lowered.passes);
    if (report.quantize) check_int8_speed(o, ep, *report.quantize, report.warnings);
    if (const auto* gguf = dynamic_cast<const GgufCheckpoint*>(ckpt.get()); gguf && o.precision == "keep") {
      report.kept_types = kept_types(graphs, *gguf);
      std::string floats;
      for (const auto& [type, k] : report.kept_types)
        if (k.float_) floats += (floats.empty() ? "" : ", ") + std::to_string(k.float_) + " " + type;
      if (!floats.empty())
        report.warnings.push_back("--precision keep: weight matrices written in float (" + floats + "): MatMulNBits has a layout for GGUF's Q4_0, Q8_0 and Q6_K blocks "
                                  "only; --precision int4 or int8 quantizes every matrix instead");
    }
  } catch (const FieldError& e) {
    throw e.with_context(cfg->file());
  }
  auto open_checkpoint = [&] {
    if (ckpt) return;
    ckpt = std::make_unique<SafetensorsCheckpoint>(config_dir);
    if (!o.lora_dir.empty()) ckpt = merge_lora(o.lora_dir, std::move(ckpt), *cfg);  // the checkpoint's own names
    if (src.custom) ckpt = rename_keys(*src.custom, std::move(ckpt), *cfg);
    if (sentence_modules) ckpt = with_module_weights(std::move(ckpt), config_dir, *sentence_modules);
  };
  std::vector<std::unique_ptr<LoraAdapter>> adapters;  // --lora-runtime
  if (!o.lora_runtime.empty()) {
    if (graphs.size() != 1)
      throw Error("--lora-runtime: runtime adapters are built into single-graph packages (text generation, encoders) "
                  "for now, not the " + std::to_string(graphs.size()) + " graphs of a " + report.task + " package");
    open_checkpoint();
    std::vector<const LoraAdapter*> all;
    for (const std::string& dir : o.lora_runtime)
      all.push_back(adapters.emplace_back(std::make_unique<LoraAdapter>(dir, *ckpt, *cfg)).get());
    add_lora_inputs(graphs.front().model.graph, all, *ckpt);  // beside the lowered, quantized graph
  }
  for (NamedGraph& g : graphs) {
    g.model.metadata["model_type"] = report.model_type;
    g.model.metadata["task"] = report.task;
    if (ep != ExecutionProvider::default_) g.model.metadata["execution_provider"] = o.ep;
    if (report.quantize) g.model.metadata["precision"] = o.precision;
    g.model.metadata[kBuildOptionsKey] = build_options_metadata(o);
    report.num_nodes += g.model.graph.nodes.size();  // after the lowering
    for (const Node& n : g.model.graph.nodes) report.has_lm_head |= n.tags.lm_head;
    if (!o.weights) continue;
    open_checkpoint();
    plans.push_back(WeightPlan::bind(g.model.graph, *ckpt));
    report.num_weights += plans.back().num_initializers();
  }
  if (o.weights) {  // a checkpoint tensor is unused when no graph reads it
    report.unused_tensors = plans.front().unused();
    for (const WeightPlan& p : plans)
      std::erase_if(report.unused_tensors, [&](const std::string& t) {
        return std::find(p.unused().begin(), p.unused().end(), t) == p.unused().end();
      });
    // Not reported: the training-only tensors, and the parameters the model declares but its graphs
    // do not need (a vision tower's layers past the features a VLM takes, its final norm).
    std::set<std::string> declared;
    for (const Parameter* p : arch->named_parameters()) declared.insert(p->source_key.empty() ? p->name : p->source_key);
    std::erase_if(report.unused_tensors,
                  [&](const std::string& t) { return arch->training_only(t) || declared.count(t) > 0; });
    if (report.generic)
      require_all_used(report.unused_tensors, *ckpt, report.model_type, report.generic_decoder);
  }
  Model& model = graphs.front().model;  // the single-graph tasks' "model"
  WriteOptions w;
  w.layout = o.layout;
  w.force = o.force;
  w.add = variant.has_value();
  w.inputs = inputs;
  w.progress = o.progress;
  std::map<std::string, std::string> files;  // each graph's file in the package, by role
  for (NamedGraph& g : graphs) {
    const std::string role = g.path.name;
    if (variant) g.path = with_suffix(g.path, variant->suffix);
    files[role] = graph_file(g.path, o.layout);
  }
  if (o.runtime != "none") {
    w.extra_bytes = tokenizer_files_bytes(config_dir);
    w.extra_files = [&](const std::string& dir) {
      report.tokenizer_files = copy_tokenizer_files(config_dir, dir);
      if (o.layout == PackageLayout::hf) add_transformers_js_config(dir, variant ? variant->word : "fp32");
      if (const auto* gguf = dynamic_cast<const GgufCheckpoint*>(ckpt.get()))
        report.tokenizer_files += write_gguf_tokenizer_files(gguf->file(), dir);
      arch->write_runtime_files(RuntimeFilesContext{.config = *cfg,
                                                    .checkpoint_dir = config_dir,
                                                    .ep = o.ep,
                                                    .runtime = o.runtime,
                                                    .genai_type = genai_type,
                                                    .graphs = graphs,
                                                    .files = files},
                                dir);
    };
  }
  if (w.extra_files) {  // a genai package whose tokenizer adds <bos>: say how to get it from genai
    w.extra_files = [&, then = std::move(w.extra_files)](const std::string& dir) {
      then(dir);
      if (!fs::exists(fs::path(dir) / "genai_config.json")) return;
      if (!fs::exists(fs::path(dir) / "tokenizer.json") && !fs::exists(fs::path(dir) / "tokenizer_config.json")) {
        report.warnings.push_back(
            "no tokenizer files in " + input_path(o) + (config_dir.empty() ? " (no tokenizer metadata)" : "") +
            ": onnxruntime-genai's og.Tokenizer reads tokenizer.json and tokenizer_config.json from the package; "
            "copy the model's tokenizer files into " + o.output_dir + " before running it there");
        return;
      }
      if (const std::string bos = bos_genai_leaves_out(dir); !bos.empty())
        report.warnings.push_back(
            "the tokenizer adds " + escaped(bos) + " to every text, but onnxruntime-genai's tokenizer.encode() "
            "adds no special tokens unless asked (0.18 creates it with add_special_tokens=false; no package file "
            "changes that): call tokenizer.update_options(add_special_tokens=\"true\") once, or put " + escaped(bos) +
            " in the prompt (a chat template that writes it does), else " + report.model_type +
            " generates from a prompt without it (README, \"onnxruntime-genai and <bos>\")");
    };
  }
  if (!adapters.empty()) {  // each adapter as <its directory's name>.onnx_adapter
    std::set<std::string> names;
    for (const auto& a : adapters) {
      if (!names.insert(adapter_name(a->dir())).second)
        throw Error("--lora-runtime " + a->dir() + ": another adapter directory is also named '" + adapter_name(a->dir()) +
                    "' (each is written as <directory name>.onnx_adapter)");
    }
    w.extra_files = [&, then = std::move(w.extra_files)](const std::string& dir) {
      if (then) then(dir);
      for (const auto& a : adapters)
        write_onnx_adapter((fs::path(dir) / (adapter_name(a->dir()) + ".onnx_adapter")).string(), *a, o.dtype);
    };
  }
  if (report.generic) {
    const auto* lm = dynamic_cast<const CausalLM*>(arch.get());
    MOBIUS_ASSERT(lm, "the generic decoder is a causal LM");
    const bool moe = report.generic_decoder != "generic Llama decoder";
    model.metadata["architecture"] = std::string(moe ? "llama with sparse MoE" : "llama") + " (mobius build --try-generic)";
    w.check = [&, lm](const std::string& dir) {
      eval::SelfCheckResult r =
          eval::prefill_decode_check((fs::path(dir) / files.at("model")).string(), lm->cache_layout(), lm->vocab_size());
      if (!r.passed())
        throw Error("self-check failed for model type '" + report.model_type + "' built as the " + report.generic_decoder + ": " +
                    "prefill and decode-step logits disagree, " + eval::describe(r) + "; nothing was written");
      report.self_check = r;
    };
  }
  if (!o.expect_model.empty()) {
    if (graphs.size() != 1)
      throw Error(o.config_dir + ": a " + report.model_type + " checkpoint (" + report.task + ") builds " +
                  std::to_string(graphs.size()) + " graphs, and the package " + o.expect_package +
                  " holds one: apply-weights binds a checkpoint of the package's architecture and config");
    w.check_graph = [&](const std::string&, const std::string& serialized) {
      check_same_model(o.expect_model, serialized);
    };
  }
  std::vector<PackageGraph> out;
  for (size_t i = 0; i < graphs.size(); ++i)
    out.push_back({graphs[i].path, &graphs[i].model, o.weights ? &plans[i] : nullptr});
  write_package(o.output_dir, out, w);
  return report;
}

}  // namespace mobius
