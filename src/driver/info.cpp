#include "driver/info.h"

#include <algorithm>
#include <fstream>
#include <filesystem>
#include <thread>

#include <unistd.h>

#include "driver/generic.h"
#include "package/copied_files.h"
#include "tasks/genai_config.h"
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

// This process' resident set now (/proc/self/statm), 0 where it cannot be read.
uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

// What `init`'s checkpoint tensors (every part of a packed weight) take: the bytes of the file a
// worker reads (mapped pages; a GGUF tensor's blocks), the float32 rows a GGUF tensor's blocks are
// dequantized into (0 for safetensors), and the elements; zeros when not found.
struct SourceSize {
  uint64_t stored = 0, dequantized = 0, elements = 0;
};
// `init`'s checkpoint tensors: its source, then a Concat's parts; those not found left out.
std::vector<const TensorInfo*> sources_of(const Initializer& init, const Checkpoint& ckpt) {
  std::vector<std::string> keys = {init.weight->source_key};
  if (const Concat* c = concat_of(init.weight->transforms)) keys.insert(keys.end(), c->keys.begin(), c->keys.end());
  std::vector<const TensorInfo*> found;
  for (const std::string& key : keys)
    if (const TensorInfo* t = ckpt.find(key)) found.push_back(t);
  return found;
}

SourceSize source_size(const Initializer& init, const Checkpoint& ckpt) {
  SourceSize s;
  const auto* gguf = dynamic_cast<const GgufCheckpoint*>(&ckpt);
  for (const TensorInfo* t : sources_of(init, ckpt)) {
    uint64_t n = 1;
    for (int64_t d : t->shape) n *= static_cast<uint64_t>(d);
    s.stored += gguf ? gguf->stored_bytes(*t) : n * dtype_size(t->dtype);
    s.dequantized += gguf ? n * sizeof(float) : 0;
    s.elements += n;
  }
  return s;
}

// The build's peak resident set (package/writer.h), from the shapes and the options: `baseline`
// (this process with the graph built: the binary, the headers, the graph) plus what the writer
// holds while it streams. Output: workers + 2 slots, each as large as the largest chunk (at most
// chunk_bytes of whole rows; a smaller tensor is one chunk). Source: what the workers read at once,
// the `workers` largest per tensor: a chunk's rows of the checkpoint (mapped pages; for a GGUF
// tensor its blocks, and the float32 rows they are dequantized into), but every page of a
// transposed tensor (a Linear's [out, in] read as MatMul's [in, out]: a range of output rows is a
// column range of the source, which spans all of it until the tensor is done) up to
// kTiledSourceBytes, and above it a tile's source rows (its output a slot); for a quantized
// output, the float rows it is quantized from (which bound its chunks). A tensor the checkpoint
// cannot stream is held whole, as float32 and as its output.
// tile_shape of `init`, a transposed weight of source `t`.
TileShape weight_tiles_of(const Initializer& init, const TensorInfo& t, size_t chunk_bytes) {
  const Shape& shape = *init.value->shape;
  return tile_shape(shape.front().value, shape.back().value, dtype_size(t.dtype), dtype_size(init.value->dtype),
                    chunk_bytes);
}

uint64_t estimated_peak(const Graph& graph, const Checkpoint& ckpt, size_t chunk_bytes, uint64_t baseline) {
  const uint64_t workers = std::max(1u, std::thread::hardware_concurrency());
  uint64_t out_chunk = 0, unstreamed = 0;
  std::vector<uint64_t> reads;  // per tensor: the source bytes a worker holds while it converts
  for (const Initializer& init : graph.initializers) {
    const BlockQuantize* q = init.weight ? quantize_of(init.weight->transforms) : nullptr;
    if (!init.weight || init.nbytes() == 0 || (q && q->part != BlockQuantize::Part::data)) continue;
    const TensorInfo* t = ckpt.find(init.weight->source_key);
    const uint64_t out = init.nbytes();
    const SourceSize src = source_size(init, ckpt);
    if (t && !ckpt.streams(*t)) {
      unstreamed = std::max(unstreamed, src.stored + src.elements * sizeof(float) + out);
      continue;
    }
    // a large transposed float weight is written in tiles, as the writer decides (written_in_tiles):
    // a tile's output and its source rows
    if (t && written_in_tiles(init.weight->transforms, ckpt, sources_of(init, ckpt), kTiledSourceBytes)) {
      const TileShape tile = weight_tiles_of(init, *t, chunk_bytes);
      out_chunk = std::max(out_chunk, static_cast<uint64_t>(tile.rows * tile.cols) * dtype_size(init.value->dtype));
      reads.push_back(static_cast<uint64_t>(tile.cols * t->shape[1]) * dtype_size(t->dtype));
      continue;
    }
    // a quantized chunk's rows are bounded by their float rows (the scratch it quantizes from)
    const uint64_t scratch = q ? src.elements * sizeof(float) : 0;
    const double share = std::min(1.0, static_cast<double>(chunk_bytes) / static_cast<double>(std::max(out, scratch)));
    auto part = [&](uint64_t bytes) { return static_cast<uint64_t>(share * static_cast<double>(bytes)); };
    out_chunk = std::max(out_chunk, part(out));
    reads.push_back(part(scratch) + part(src.dequantized) +
                    (transposes(init.weight->transforms) ? src.stored : part(src.stored)));
  }
  std::sort(reads.rbegin(), reads.rend());
  uint64_t read = 0;
  for (size_t i = 0; i < reads.size() && i < workers; ++i) read += reads[i];
  return baseline + (workers + 2) * out_chunk + read + unstreamed;
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
    if (info.llama_like) info.generic_decoder = generic_decoder_name(cfg);
    return info;
  }
  info.task = entry->task;
  if (!src.checkpoint) return info;
  const HfConfig full = with_class_defaults(cfg, info.model_type);  // as build_package reads it
  bool module_weights = false;  // the sentence-transformers Dense layers' safetensors added to the checkpoint
  for (const char* name : {"default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"}) {
    EpReport r{name, {}, ""};
    BuildOptions eo = o;
    eo.ep = name;
    const ExecutionProvider ep = parse_execution_provider(name);
    try {
      std::vector<std::string> warnings;
      check_bfloat16(eo, ep, warnings);
      std::optional<SentenceModules> modules;
      std::unique_ptr<Architecture> arch = create_for_task(entry->create, full, o.dtype, o.task, src.config_dir, modules);
      if (modules && !module_weights) {  // once, for every ep
        src.checkpoint = with_module_weights(std::move(src.checkpoint), src.config_dir, *modules);
        module_weights = true;
      }
      info.task = arch->task();  // a vision type's image-classification checkpoint
      check_runtime(o, genai_model_type(*entry), info.task, info.model_type);
      LoweredGraphs lowered = lower_graphs(*arch, full, eo, ep, src.checkpoint.get());
      r.passes = std::move(lowered.passes);
      for (const NamedGraph& g : lowered.graphs)
        WeightPlan::bind(g.model.graph, *src.checkpoint);  // the build's tensor and shape checks (headers only)
      if (name == o.ep) {
        info.data_files.clear();
        info.peak_bytes = 0;
        info.disk_bytes = o.runtime != "none" ? tokenizer_files_bytes(src.config_dir) : 0;
        for (const NamedGraph& g : lowered.graphs) {  // written one after the other
          info.data_files.emplace_back(graph_data_path(g.path, o.layout), external_data_bytes(g.model.graph));
          info.disk_bytes += graph_disk_bytes(g.path, g.model, o.weights, o.layout);
          info.peak_bytes = std::max(info.peak_bytes, estimated_peak(g.model.graph, *src.checkpoint,
                                                                     WriteOptions{}.chunk_bytes, resident_bytes()));
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
           (info.llama_like ? "; its fields describe a Llama-like decoder: --try-generic builds it with the " +
                                  info.generic_decoder + " and a self-check"
                            : "");
  }
  if (!info.no_weights.empty()) return info.no_weights;
  for (const EpReport& e : info.eps)
    if (e.ep == ep) return e.refused;
  return "";
}

}  // namespace mobius
