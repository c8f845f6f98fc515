// Architecture: the root Module of a model, which knows its task (I/O contract) and builds the
// package's graphs for it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "nn/module.h"
#include "passes/passes.h"

namespace mobius {

// One graph of a package, written as `name`.onnx + `name`.onnx.data (package/writer.h), and the
// --ep lowering its task gives it (passes/passes.h GraphLowering, driver/build.cpp lower_graphs).
struct NamedGraph {
  NamedGraph(std::string n, Model m, GraphLowering l) : name(std::move(n)), model(std::move(m)), lowering(l) {}
  // noexcept, so that a vector moves (Graph's std::deque member does not say so)
  NamedGraph(NamedGraph&&) noexcept = default;
  NamedGraph& operator=(NamedGraph&&) noexcept = default;

  std::string name;  // "model" for single-graph tasks; "encoder", "decoder" for text2text-generation
  Model model;
  GraphLowering lowering;
};

// The package of a single-graph task: `model` as "model", lowered as `lowering`.
inline std::vector<NamedGraph> single_graph(Model model, GraphLowering lowering) {
  std::vector<NamedGraph> graphs;
  graphs.emplace_back("model", std::move(model), lowering);
  return graphs;
}

class Architecture : public Module {
 public:
  // The task name, e.g. "text-generation" (tasks/*.h).
  virtual std::string task() const = 0;
  // Builds the package's graphs, in the order they are written (no weight data is touched).
  virtual std::vector<NamedGraph> build_graphs() const = 0;
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
