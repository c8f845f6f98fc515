// Architecture: the root Module of a model, which knows its task (I/O contract) and builds the
// package's graphs for it.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/hf_config.h"
#include "ir/ir.h"
#include "nn/module.h"
#include "package/layout.h"
#include "passes/passes.h"

namespace mobius {

// One graph of a package, written where its GraphPath says in the package layout (package/layout.h,
// package/writer.h), and the --ep lowering its task gives it (passes/passes.h GraphLowering,
// driver/build.cpp lower_graphs).
struct NamedGraph {
  NamedGraph(GraphPath p, Model m, GraphLowering l) : path(std::move(p)), model(std::move(m)), lowering(l) {}
  // noexcept, so that a vector moves (Graph's std::deque member does not say so)
  NamedGraph(NamedGraph&&) noexcept = default;
  NamedGraph& operator=(NamedGraph&&) noexcept = default;

  // its role and files: {"model", hf_graph::model} for single-graph tasks; "encoder", "decoder" for
  // text2text-generation (tasks/*.h name theirs)
  GraphPath path;
  Model model;
  GraphLowering lowering;
};

// The package of a single-graph task: `model` as "model" (onnx/model.onnx), lowered as `lowering`.
inline std::vector<NamedGraph> single_graph(Model model, GraphLowering lowering) {
  std::vector<NamedGraph> graphs;
  graphs.emplace_back(GraphPath{"model", hf_graph::model}, std::move(model), lowering);
  return graphs;
}

// What a task's runtime files are written from (Architecture::write_runtime_files).
struct RuntimeFilesContext {
  const HfConfig& config;           // config.json (a GGUF file's, synthesized from its metadata)
  std::string checkpoint_dir;       // the checkpoint directory; "" for a GGUF file
  std::string ep;                   // --ep: "cpu", "cuda", ... ("" = no lowering)
  std::string runtime;              // --runtime: "ort-genai" or "optimum"
  std::string genai_type;           // onnxruntime-genai's model.type (registry.h genai_model_type)
  const std::vector<NamedGraph>& graphs;     // the package's graphs, lowered, as written
  std::map<std::string, std::string> files;  // each graph's file relative to the package, by role
};

class Architecture : public Module {
 public:
  // The task name, e.g. "text-generation" (tasks/*.h).
  virtual std::string task() const = 0;
  // Builds the package's graphs, in the order they are written (no weight data is touched).
  virtual std::vector<NamedGraph> build_graphs() const = 0;
  // Writes the runtime files the task's package holds besides its graphs and the copied checkpoint
  // files (package/copied_files.h) into the package directory `dir` (package/writer.h
  // write_file_synced): onnxruntime-genai's genai_config.json and processor configs for the tasks
  // it runs (tasks/genai_config.h). Called for --runtime ort-genai and optimum. Throws
  // mobius::Error naming the file and field for a config value the files cannot hold.
  virtual void write_runtime_files(const RuntimeFilesContext& ctx, const std::string& dir) const {
    (void)ctx;
    (void)dir;
  }
  // Whether checkpoint tensor `key` is a training-only tensor that transformers' model holds and
  // inference never reads, so a build does not report it as unused: the vector that replaces
  // masked frames (the wav2vec2 family's masked_spec_embed, for mask_time_indices) or masked
  // patches (embeddings.mask_token, for bool_masked_pos), and BatchNorm's step counter
  // (num_batches_tracked). No graph of any task has an input for those masks.
  virtual bool training_only(const std::string& key) const {
    return key.ends_with("masked_spec_embed") || key.ends_with("embeddings.mask_token") ||
           key.ends_with(".num_batches_tracked");
  }
};

}  // namespace mobius
