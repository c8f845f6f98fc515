// ScanBody: the body graph of an ONNX Scan (onnx Scan-16: the loop-carried states, then one slice
// of each scan input; the new states, then one slice of each scan output) that a block builds at its
// current module path P: a graph named "P.scan" whose nodes are scoped by that name, its inputs and
// outputs named "P.scan/<name>". Used by the recurrent mixers (blocks/mamba.cpp,
// multi_head_mamba.cpp, rg_lru.cpp, gated_delta_net.cpp, archs/rwkv.cpp).
#pragma once

#include <memory>
#include <string>

#include "builder/ops.h"

namespace mobius {

class ScanBody {
 public:
  explicit ScanBody(Ops& outer)
      : graph_(std::make_shared<Graph>()), prefix_(outer.builder().path() + ".scan"), b_(*graph_), op_(b_),
        scope_(b_, prefix_) {
    graph_->name = prefix_;
  }
  ScanBody(const ScanBody&) = delete;
  ScanBody& operator=(const ScanBody&) = delete;

  // A float32 body input "P.scan/<name>" of `shape` (a state, or one step's slice of a scan input).
  Value* input(const std::string& name, Shape shape) {
    return b_.input(prefix_ + "/" + name, DataType::FLOAT, std::move(shape));
  }
  // Body output "P.scan/<name>": `v` renamed (a new state, or one step's slice of a scan output).
  void output(Value* v, const std::string& name, Shape shape) { b_.output(v, prefix_ + "/" + name, std::move(shape)); }
  // The ops that build the body's nodes.
  Ops& op() { return op_; }
  // The body, for Ops::Scan.
  std::shared_ptr<const Graph> graph() const { return graph_; }

 private:
  std::shared_ptr<Graph> graph_;
  std::string prefix_;
  GraphBuilder b_;
  Ops op_;
  GraphBuilder::Scope scope_;
};

}  // namespace mobius
