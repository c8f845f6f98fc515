// The ONNX IR mobius builds: values, nodes, initializers, graph, model.
//
// A Graph owns its Values; Nodes refer to them by pointer. Initializers are either small
// constants with inline bytes, or weights whose bytes are produced at write time from a
// checkpoint (see weights/weight_plan.h): graph construction never touches weight data.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "weights/transform.h"

namespace mobius {

// One dimension: a fixed size, or a symbolic name such as "batch".
struct Dim {
  int64_t value = -1;
  std::string symbol;
  Dim(int64_t v) : value(v) {}  // NOLINT(google-explicit-constructor)
  Dim(const char* s) : symbol(s) {}  // NOLINT
  Dim(std::string s) : symbol(std::move(s)) {}  // NOLINT
  bool is_symbolic() const { return !symbol.empty(); }
};
using Shape = std::vector<Dim>;

// Element count of a fully static shape; throws InternalError on a symbolic dim.
int64_t num_elements(const Shape& shape);
std::string shape_str(const Shape& shape);

struct Value {
  std::string name;
  DataType dtype = DataType::UNDEFINED;
  std::optional<Shape> shape;
};

class Graph;
// A graph attribute (the body of Scan) holds its own graph: its values, nodes and inline constants,
// self-contained (it reads no value of the outer graph but through the node's inputs).
using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                                    std::vector<float>, std::shared_ptr<const Graph>>;
struct Attribute {
  std::string name;
  AttributeValue value;
};

// What the block that emitted a node knows of it, for the passes to read instead of re-deriving it
// from the graph around the node (docs/design.md "Passes read what blocks know"). In memory only:
// not written to the ONNX file. A pass that replaces a node carries its tags to the replacement.
struct NodeTags {
  bool lm_head = false;      // the product by the LM head matrix (blocks/linear.h LMHead, Embedding::attend)
  int64_t num_heads = 0;     // Attention on [batch, heads, seq, head_size]: query heads; 0 = untagged
  int64_t kv_num_heads = 0;  // ... key/value heads
  int64_t head_size = 0;     // ... of the queries, keys and values
};

struct Node {
  std::string op_type;
  std::string domain;  // "" = ai.onnx
  std::string name;
  std::vector<Value*> inputs;  // nullptr = omitted optional input
  std::vector<Value*> outputs;  // nullptr = omitted optional output
  std::vector<Attribute> attributes;
  NodeTags tags;
};

// How a weight initializer gets its bytes: from checkpoint tensor `source_key` through
// `transforms`, applied in order (weights/transform.h: transpose, concat, cast, block-quantize).
// Passes that change how a weight is stored append a transform (weights/transform.h append).
struct WeightRef {
  std::string source_key;
  WeightTransforms transforms = {};
};

struct Initializer {
  Value* value = nullptr;               // name, dtype and (static) shape
  std::vector<uint8_t> data;            // inline bytes for constants
  std::optional<WeightRef> weight;      // set for checkpoint weights (bytes written externally)
  // An inline initializer that is also a graph input whose shape has a symbolic dim (the default
  // of an optional input, e.g. a runtime LoRA weight with lora_r = 0, package/lora_runtime.h):
  // the dims of its data. nullopt: the value's shape.
  std::optional<Shape> data_shape = {};
  size_t nbytes() const;
};

class Graph {
 public:
  std::string name = "main_graph";
  std::vector<Node> nodes;
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
  std::vector<Initializer> initializers;

  // Creates a value owned by this graph. Names must be unique (the builder guarantees it).
  Value* new_value(std::string name, DataType dtype, std::optional<Shape> shape = std::nullopt);
  Value* find_value(const std::string& name) const;
  // Renames a value (nodes refer to values by pointer, so every use follows).
  void rename(Value* v, const std::string& new_name);
  const Initializer* find_initializer(const std::string& name) const;
  // A graph input that a caller may leave out: `shape` (with a symbolic dim), whose default is
  // the empty tensor of `empty` (the same dims with that one 0): an inline initializer of the
  // same name (ONNX: an initializer that is also an input is an overridable default).
  Value* add_optional_input(std::string name, DataType dtype, Shape shape, Shape empty);

 private:
  std::deque<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> by_name_;
};

struct OpsetImport {
  std::string domain;
  int64_t version;
};

struct Model {
  Graph graph;
  int64_t ir_version = 11;
  std::vector<OpsetImport> opsets{{"", 24}};
  std::string producer_name = "mobius";
  std::string producer_version = "0.1.0";
  std::map<std::string, std::string> metadata;
};

}  // namespace mobius
