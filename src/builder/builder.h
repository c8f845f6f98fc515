// GraphBuilder: appends nodes to a Graph under a stack of module scopes, gives every node and
// value a unique name derived from the module path (e.g. "model.layers.3.self_attn/MatMul_0"),
// caches constants, and creates each weight initializer once.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace mobius {

// Elements of one weight: 64 x the largest released (a 256k x 16k embedding takes 2^32).
constexpr int64_t kMaxWeightElements = int64_t{1} << 36;

class GraphBuilder {
 public:
  explicit GraphBuilder(Graph& graph) : graph_(graph) {}
  Graph& graph() { return graph_; }

  // RAII module scope: while alive, node names are prefixed by the dotted module path.
  class Scope {
   public:
    Scope(GraphBuilder& b, const std::string& name) : b_(b) { b_.scopes_.push_back(name); }
    ~Scope() { b_.scopes_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    GraphBuilder& b_;
  };
  [[nodiscard]] Scope scope(const std::string& name) { return Scope(*this, name); }
  // Dotted module path of the current scope, e.g. "model.layers.3.self_attn".
  std::string path() const;

  // Appends a node; creates one output value per entry of out_dtypes.
  std::vector<Value*> add_node(const std::string& op_type, std::vector<Value*> inputs,
                               std::vector<Attribute> attrs, std::vector<DataType> out_dtypes,
                               const std::string& domain = "");

  // The node that produced `v` (searched from the newest node back), for a block to tag what it
  // knows of it (ir.h NodeTags). Throws mobius::Error (internal) when no node produced `v`.
  Node& producer(const Value* v);

  // Graph inputs / outputs. output() renames `v` to `name` (the I/O contract's spelling).
  Value* input(const std::string& name, DataType dtype, Shape shape);
  void output(Value* v, const std::string& name, Shape shape);

  // Constants (inline initializers), cached by content.
  Value* constant(DataType dtype, Shape shape, std::span<const uint8_t> bytes);
  Value* constant_f32(const std::vector<float>& values, Shape shape);
  // A float constant converted to `dtype` (FLOAT, FLOAT16 or BFLOAT16).
  Value* constant_float(const std::vector<float>& values, Shape shape, DataType dtype);
  Value* constant_i64(const std::vector<int64_t>& values, Shape shape);
  Value* scalar_i64(int64_t v) { return constant_i64({v}, {}); }
  Value* ints(const std::vector<int64_t>& v) { return constant_i64(v, {static_cast<int64_t>(v.size())}); }

  // A weight initializer named `name` with bytes from the checkpoint; created once per name.
  // Throws mobius::Error naming it and its shape when a dimension is below 1 or it has more than
  // kMaxWeightElements elements (shapes come from config fields: this bounds every product of
  // them that a weight takes).
  Value* weight(const std::string& name, DataType dtype, Shape shape, WeightRef ref);

 private:
  std::string unique_name(const std::string& base);
  Graph& graph_;
  std::vector<std::string> scopes_;
  std::map<std::string, int> name_counts_;
  std::map<std::string, Value*> constants_;
  std::map<std::string, Value*> weights_;
};

}  // namespace mobius
