// The fixture of the block unit tests (blocks_test.cpp, gpt_blocks_test.cpp): a graph with an
// input x: [batch, seq, hidden] to build one block on, and readers of what the block emitted
// (op counts, parameters, nodes, attributes).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "builder/builder.h"
#include "builder/ops.h"
#include "nn/module.h"
#include "test_util.h"

namespace mobius::test {

using Counts = std::map<std::string, int>;
using ParamTable = std::vector<std::pair<std::string, std::string>>;  // name, shape

inline ParamTable params(const Module& m) {
  ParamTable out;
  for (const Parameter* p : m.named_parameters()) out.emplace_back(p->name, shape_str(p->shape));
  return out;
}

// A graph with x: [batch, seq, hidden] to run one block on.
struct BlockTest : ::testing::Test {
  Model model;
  GraphBuilder b{model.graph};
  Ops op{b};
  Value* input(int64_t hidden, DataType dtype = DataType::FLOAT) {
    return b.input("x", dtype, {"batch", "seq", hidden});
  }
  Counts counts() { return op_counts(model.graph); }
  int weight_count() {
    int n = 0;
    for (const Initializer& i : model.graph.initializers) n += i.weight.has_value();
    return n;
  }
  const Node& node(const std::string& op_type) {
    for (const Node& n : model.graph.nodes)
      if (n.op_type == op_type) return n;
    ADD_FAILURE() << "no " << op_type << " node";
    return model.graph.nodes.front();
  }
  template <typename T>
  T attr(const Node& n, const std::string& name) {
    for (const Attribute& a : n.attributes)
      if (a.name == name) return std::get<T>(a.value);
    ADD_FAILURE() << n.name << " has no attribute " << name;
    return T{};
  }
};

}  // namespace mobius::test
