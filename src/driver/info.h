// `mobius info PATH`: what a build of a checkpoint would be, from headers only (safetensors JSON
// headers, GGUF metadata and tensor infos; no weight is read) and the graph built without weights.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "driver/build.h"
#include "passes/passes.h"

namespace mobius {

struct StoredDtype {
  uint64_t tensors = 0, elements = 0, bytes = 0;
};

struct EpReport {
  std::string ep;                  // an --ep value
  std::vector<PassReport> passes;  // the lowering's rewrites (empty for default)
  std::string refused;             // why a build for this ep is refused ("" when it builds)
};

struct CheckpointInfo {
  std::string source;  // the checkpoint directory (an id resolved from the cache) or .gguf file
  std::string format;  // "safetensors" or "GGUF"
  std::string model_type;
  std::string task;            // the registered task; "" when not registered
  std::string not_registered;  // why, registry/registry.h explain_unregistered(); "" when registered
  // unregistered, Llama-like and a text-generation type without a recurrent state
  // (registry/registry.h generic_refusal): --try-generic can build it
  bool llama_like = false;
  std::string generic_decoder;  // when llama_like: driver/generic.h generic_decoder_name
  std::string no_weights;      // why the tensors could not be listed (no *.safetensors, ...), or ""
  uint64_t parameters = 0;     // elements over every checkpoint tensor
  std::map<std::string, StoredDtype> stored;  // by stored type: "BF16", "F32", GGUF's "Q4_K", ...
  // For a registered type, a build with the options' --dtype, --ep, --precision:
  // Each graph's external data file (relative to the package, where the options' --layout puts it,
  // package/layout.h graph_data_path) and its size (package/writer.h external_data_bytes), in the
  // task's graph order: {"model.onnx.data", n}, or {"encoder.onnx.data", n}, {"decoder.onnx.data", m},
  // ... (flat), {"onnx/model.onnx_data", n}, ... (hf)
  std::vector<std::pair<std::string, uint64_t>> data_files;
  // The predicted peak resident set of that build (info.cpp estimated_peak): this process with the
  // graph built, the writer's output slots, the source its workers hold (whole pages of a
  // transposed weight, GGUF blocks and their float32 rows, a quantized chunk's float rows), a
  // tensor the checkpoint cannot stream. Not the tokenizer synthesized from a GGUF after the
  // weights. Checked against measured builds within 25 % (tests/cli/test_info_memory.py).
  uint64_t peak_bytes = 0;
  // The disk that build's package takes (package/writer.h graph_disk_bytes over its graphs, and
  // the tokenizer and config files it copies; not a tokenizer synthesized from a GGUF): the build
  // refuses to start when OUTPUT_DIR's file system has less free (check_free_space).
  uint64_t disk_bytes = 0;
  std::vector<EpReport> eps;  // every --ep value
};

// Inspects options.config_dir (a directory or a Hugging Face id, driver/source_path.h) or
// options.gguf_file with options' dtype, ep and quantization. Throws mobius::Error as build_package
// does for a source or config it cannot read (one line naming the file and field); an unregistered
// model_type (not_registered) and a directory whose tensors cannot be listed (no_weights, e.g. a
// .bin-only checkpoint) are reported, not thrown; a build's sizes then stay 0.
CheckpointInfo inspect_checkpoint(const BuildOptions& options);

// Why the build that `info` describes for `ep` would fail, in one line as the build's error would
// say it, or "" when it would run: an unregistered model_type ("<config>: field 'model_type': ..."),
// tensors that cannot be listed (no_weights), the build refused for `ep`. `mobius info` exits 1
// exactly when this is not empty; mobius_cpp.inspect() raises it.
std::string build_failure(const CheckpointInfo& info, const std::string& ep);

}  // namespace mobius
