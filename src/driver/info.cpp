#include "driver/info.h"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "driver/generic.h"
#include "package/genai_config.h"
#include "package/writer.h"
#include "registry/config_defaults.h"
#include "registry/custom.h"
#include "registry/registry.h"
#include "util/error.h"
#include "weights/gguf_checkpoint.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace mobius {

namespace {

// Every tensor by its stored type: GGUF's own type (Q4_K, ...), else the checkpoint's dtype.
void count_tensors(const Checkpoint& ckpt, CheckpointInfo& info) {
  const auto* gguf = dynamic_cast<const GgufCheckpoint*>(&ckpt);
  if (gguf) {
    for (const GgufTensor& t : gguf->file().tensors()) {
      const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(t.type));
      StoredDtype& d = info.stored[traits ? traits->name : "?"];
      d.tensors += 1;
      d.elements += t.num_elements();
      d.bytes += t.data.size();
      info.parameters += t.num_elements();
    }
    return;
  }
  for (const std::string& name : ckpt.names()) {
    const TensorInfo* t = ckpt.find(name);
    uint64_t n = 1;
    for (int64_t d : t->shape) n *= static_cast<uint64_t>(d);
    StoredDtype& d = info.stored[dtype_name(t->dtype)];
    d.tensors += 1;
    d.elements += n;
    d.bytes += n * dtype_size(t->dtype);
    info.parameters += n;
  }
}

// The weight path's peak (package/writer.h), an upper estimate: workers + 2 chunks in flight, each
// with its mapped source pages and its output, and a tensor the checkpoint cannot stream held
// whole, as float32 and as its output.
uint64_t estimated_peak(const Graph& graph, const Checkpoint& ckpt, size_t chunk_bytes) {
  const uint64_t workers = std::max(1u, std::thread::hardware_concurrency());
  uint64_t unstreamed = 0;
  for (const Initializer& init : graph.initializers) {
    if (!init.weight) continue;
    const TensorInfo* t = ckpt.find(init.weight->source_key);
    if (!t || ckpt.streams(*t)) continue;
    uint64_t n = 1;
    for (int64_t d : t->shape) n *= static_cast<uint64_t>(d);
    unstreamed = std::max<uint64_t>(unstreamed, n * sizeof(float) + init.nbytes());
  }
  return 2 * (workers + 2) * chunk_bytes + unstreamed;
}

}  // namespace

CheckpointInfo inspect_checkpoint(const BuildOptions& o) {
  CheckpointInfo info;
  BuildSource src = open_source(o);
  info.source = !src.config_dir.empty() ? src.config_dir : o.gguf_file.empty() ? o.config_dir : o.gguf_file;
  info.format = src.config_dir.empty() ? "GGUF" : "safetensors";
  try {
    if (!src.checkpoint) src.checkpoint = std::make_unique<SafetensorsCheckpoint>(src.config_dir);
    count_tensors(*src.checkpoint, info);
    if (src.custom) src.checkpoint = rename_keys(*src.custom, std::move(src.checkpoint), *src.config);  // as a build
  } catch (const Error& e) {
    info.no_weights = e.what();
  }
  const HfConfig& cfg = *src.config;
  info.model_type = cfg.get_string("model_type");
  const auto& reg = registry();
  auto entry = std::find_if(reg.begin(), reg.end(), [&](const RegistryEntry& e) { return info.model_type == e.model_type; });
  if (entry == reg.end()) {
    const std::optional<HfConfig> text = cfg.sub("text_config");
    info.not_registered = explain_unregistered(info.model_type, text ? text->string_or("model_type", "") : "");
    info.llama_like = missing_llama_fields(cfg).empty() && generic_refusal(info.model_type).empty();
    return info;
  }
  info.task = entry->task;
  if (!src.checkpoint) return info;
  const HfConfig full = with_class_defaults(cfg, info.model_type);  // as build_package reads it
  for (const char* name : {"default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"}) {
    EpReport r{name, {}, ""};
    BuildOptions eo = o;
    eo.ep = name;
    const ExecutionProvider ep = parse_execution_provider(name);
    try {
      std::vector<std::string> warnings;
      check_bfloat16(eo, ep, warnings);
      std::unique_ptr<Architecture> arch = entry->create(full, o.dtype);
      info.task = arch->task();  // a vision type's image-classification checkpoint
      LoweredGraphs lowered = lower_graphs(*arch, full, eo, ep, src.checkpoint.get());
      r.passes = std::move(lowered.passes);
      for (const NamedGraph& g : lowered.graphs)
        WeightPlan::bind(g.model.graph, *src.checkpoint);  // the build's tensor and shape checks (headers only)
      if (name == o.ep) {
        info.data_files.clear();
        info.peak_bytes = 0;
        for (const NamedGraph& g : lowered.graphs) {  // written one after the other
          info.data_files.emplace_back(g.name + ".onnx.data", external_data_bytes(g.model.graph));
          info.peak_bytes = std::max(info.peak_bytes,
                                     estimated_peak(g.model.graph, *src.checkpoint, WriteOptions{}.chunk_bytes));
        }
      }
    } catch (const Error& e) {
      r.refused = e.what();
    }
    info.eps.push_back(std::move(r));
  }
  return info;
}

std::string build_failure(const CheckpointInfo& info, const std::string& ep) {
  if (!info.not_registered.empty()) {
    const std::string file = info.format == "GGUF" ? info.source : (std::filesystem::path(info.source) / "config.json").string();
    return file + ": field 'model_type': " + info.not_registered +
           (info.llama_like ? "; its fields describe a Llama-like decoder: --try-generic builds it with the generic "
                              "Llama decoder and a self-check"
                            : "");
  }
  if (!info.no_weights.empty()) return info.no_weights;
  for (const EpReport& e : info.eps)
    if (e.ep == ep) return e.refused;
  return "";
}

}  // namespace mobius
