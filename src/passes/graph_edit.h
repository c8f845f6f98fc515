// GraphEditor: what the rewrite passes (passes/passes.h) need to edit a built graph in place:
// the producer and consumers of each value, constants read back from initializers, new nodes,
// constants and initializers under fresh names, use replacement, and at the end (commit) dead-node
// and dead-initializer removal and a topological re-sort (ONNX requires sorted nodes).
//
// While matching, node indices refer to graph.nodes as it was at construction (or the last
// commit); new nodes are kept aside until commit(), so those indices stay valid.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace mobius {

class GraphEditor {
 public:
  explicit GraphEditor(Model& model);
  Graph& graph() { return model_.graph; }

  // The index of the node producing `v`, or nullopt (graph input, initializer, null).
  std::optional<size_t> producer(const Value* v) const;
  // The node producing `v` if it is `op_type` in the default domain (and not removed), else null.
  Node* producer_op(const Value* v, const char* op_type);
  // Indices of the (not removed) nodes reading `v`, once per node.
  std::vector<size_t> consumers(const Value* v) const;
  // True when `v` is a graph output.
  bool is_output(const Value* v) const;
  const Initializer* initializer(const Value* v) const;

  // Constant contents of an inline initializer: INT64 values; FLOAT / FLOAT16 / BFLOAT16 values as
  // float. nullopt for anything else (weights, computed values).
  std::optional<std::vector<int64_t>> ints(const Value* v) const;
  std::optional<std::vector<float>> floats(const Value* v) const;
  // Integer / float attribute of a node, or `fallback`.
  static int64_t attr_int(const Node& n, const std::string& name, int64_t fallback);
  static std::optional<float> attr_float(const Node& n, const std::string& name);
  static std::optional<std::vector<int64_t>> attr_ints(const Node& n, const std::string& name);

  // Module path under which the next nodes and values are named ("<scope>/<op_type>"), e.g. the
  // scope of the node being replaced: "model.layers.3.self_attn". Empty: "lowered".
  void set_scope(const std::string& scope) { scope_ = scope.empty() ? "lowered" : scope; }
  // The scope of a node name built by GraphBuilder ("model.layers.3.self_attn/MatMul_0").
  static std::string scope_of(const Node& n) { return n.name.substr(0, n.name.rfind('/') == std::string::npos ? 0 : n.name.rfind('/')); }

  // Adds a node (kept aside until commit()); `outputs` may name existing values, which the node
  // then produces (their old producer must be removed); nullptr = an omitted optional output.
  Node& add(const std::string& op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
            std::vector<Attribute> attrs = {}, const std::string& domain = "");
  // A new value named after `base`, unique in the graph.
  Value* new_value(const std::string& base, DataType dtype, std::optional<Shape> shape = std::nullopt);
  // Single-output node: returns its output (named after the node).
  Value* add1(const std::string& op_type, std::vector<Value*> inputs, DataType out,
              std::vector<Attribute> attrs = {}, const std::string& domain = "");
  Value* const_i64(const std::vector<int64_t>& values, Shape shape);
  // An inline initializer named after `base` (unique) with the given bytes.
  Value* constant(const std::string& base, DataType dtype, Shape shape, std::vector<uint8_t> bytes);
  // A checkpoint weight initializer named after `base` (unique).
  Value* weight(const std::string& base, DataType dtype, Shape shape, WeightRef ref);

  // Every input of every node (and graph output) reading `from` reads `to` instead.
  void replace_uses(Value* from, Value* to);
  // Marks node `index` removed (dropped at commit()).
  void remove(size_t index) { removed_.insert(index); }
  bool removed(size_t index) const { return removed_.count(index) > 0; }

  // Appends the new nodes, drops removed nodes, then nodes whose outputs nobody reads, then
  // initializers nobody reads; sorts the nodes topologically and re-indexes.
  void commit();

 private:
  void reindex();
  Value* add_initializer(Initializer init);
  Model& model_;
  std::map<const Value*, size_t> producer_;
  std::map<const Value*, std::vector<size_t>> consumers_;
  std::map<std::string, const Initializer*> initializers_;
  std::set<size_t> removed_;
  std::vector<Node> pending_;
  std::set<std::string> node_names_;
  std::string scope_ = "lowered";
};

// Replaces the canonical Attention's output old_y [batch, heads, seq, head_dim] by a contrib
// attention's y [batch, seq, heads * head_dim] (GroupQueryAttention, MultiHeadAttention): where
// old_y was read only through Transpose(0, 2, 1, 3) → Reshape [0, 0, -1 or heads * head_dim], that
// Reshape's readers read y; otherwise old_y's readers read y reshaped and transposed back.
void replace_attention_output(GraphEditor& e, Value* old_y, Value* y, int64_t heads, int64_t head_dim);

}  // namespace mobius
