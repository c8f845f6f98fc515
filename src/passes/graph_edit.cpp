#include "passes/graph_edit.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <queue>
#include <set>
#include <unordered_map>

#include "util/error.h"
#include "util/float16.h"

namespace mobius {

GraphEditor::GraphEditor(Model& model) : model_(model) { reindex(); }

void GraphEditor::reindex() {
  producer_.clear();
  consumers_.clear();
  initializers_.clear();
  removed_.clear();
  node_names_.clear();
  const Graph& g = model_.graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    node_names_.insert(n.name);
    for (const Value* out : n.outputs)
      if (out) producer_[out] = i;
    for (const Value* in : n.inputs) {
      if (!in) continue;
      auto& c = consumers_[in];
      if (c.empty() || c.back() != i) c.push_back(i);
    }
  }
  for (const Initializer& init : g.initializers) initializers_[init.value->name] = &init;
}

std::optional<size_t> GraphEditor::producer(const Value* v) const {
  auto it = v ? producer_.find(v) : producer_.end();
  if (it == producer_.end() || removed(it->second)) return std::nullopt;
  return it->second;
}

Node* GraphEditor::producer_op(const Value* v, const char* op_type) {
  auto p = producer(v);
  if (!p) return nullptr;
  Node& n = model_.graph.nodes[*p];
  return n.domain.empty() && n.op_type == op_type ? &n : nullptr;
}

std::vector<size_t> GraphEditor::consumers(const Value* v) const {
  std::vector<size_t> out;
  auto it = consumers_.find(v);
  if (it == consumers_.end()) return out;
  for (size_t i : it->second)
    if (!removed(i)) out.push_back(i);
  return out;
}

bool GraphEditor::is_output(const Value* v) const {
  const auto& outs = model_.graph.outputs;
  return std::find(outs.begin(), outs.end(), v) != outs.end();
}

const Initializer* GraphEditor::initializer(const Value* v) const {
  if (!v) return nullptr;
  auto it = initializers_.find(v->name);
  return it != initializers_.end() && it->second->value == v ? it->second : nullptr;
}

std::optional<std::vector<int64_t>> GraphEditor::ints(const Value* v) const {
  const Initializer* init = initializer(v);
  if (!init || init->weight || v->dtype != DataType::INT64) return std::nullopt;
  std::vector<int64_t> out(init->data.size() / 8);
  std::memcpy(out.data(), init->data.data(), out.size() * 8);
  return out;
}

std::optional<std::vector<float>> GraphEditor::floats(const Value* v) const {
  const Initializer* init = initializer(v);
  if (!init || init->weight) return std::nullopt;
  std::vector<float> out;
  if (v->dtype == DataType::FLOAT) {
    out.resize(init->data.size() / 4);
    std::memcpy(out.data(), init->data.data(), out.size() * 4);
  } else if (v->dtype == DataType::FLOAT16 || v->dtype == DataType::BFLOAT16) {
    for (size_t i = 0; i + 1 < init->data.size(); i += 2) {
      uint16_t h;
      std::memcpy(&h, init->data.data() + i, 2);
      out.push_back(v->dtype == DataType::FLOAT16 ? f16_to_f32(h) : bf16_to_f32(h));
    }
  } else {
    return std::nullopt;
  }
  return out;
}

int64_t GraphEditor::attr_int(const Node& n, const std::string& name, int64_t fallback) {
  for (const Attribute& a : n.attributes)
    if (a.name == name && std::holds_alternative<int64_t>(a.value)) return std::get<int64_t>(a.value);
  return fallback;
}

std::optional<float> GraphEditor::attr_float(const Node& n, const std::string& name) {
  for (const Attribute& a : n.attributes)
    if (a.name == name && std::holds_alternative<float>(a.value)) return std::get<float>(a.value);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> GraphEditor::attr_ints(const Node& n, const std::string& name) {
  for (const Attribute& a : n.attributes)
    if (a.name == name && std::holds_alternative<std::vector<int64_t>>(a.value))
      return std::get<std::vector<int64_t>>(a.value);
  return std::nullopt;
}

Value* GraphEditor::new_value(const std::string& base, DataType dtype, std::optional<Shape> shape) {
  std::string name = base;
  for (int i = 0; model_.graph.find_value(name); ++i) name = base + "_" + std::to_string(i);
  return model_.graph.new_value(name, dtype, std::move(shape));
}

Node& GraphEditor::add(const std::string& op_type, std::vector<Value*> inputs,
                       std::vector<Value*> outputs, std::vector<Attribute> attrs,
                       const std::string& domain) {
  Node n;
  n.op_type = op_type;
  n.domain = domain;
  std::string base = scope_ + "/" + op_type;
  n.name = base;
  for (int i = 0; node_names_.count(n.name); ++i) n.name = base + "_" + std::to_string(i);
  node_names_.insert(n.name);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attrs);
  pending_.push_back(std::move(n));
  return pending_.back();
}

Value* GraphEditor::add1(const std::string& op_type, std::vector<Value*> inputs, DataType out,
                         std::vector<Attribute> attrs, const std::string& domain) {
  Value* v = new_value(scope_ + "/" + op_type + "/output", out);
  add(op_type, std::move(inputs), {v}, std::move(attrs), domain);
  return v;
}

Value* GraphEditor::constant(const std::string& base, DataType dtype, Shape shape,
                             std::vector<uint8_t> bytes) {
  Initializer init;
  init.value = new_value(base, dtype, std::move(shape));
  init.data = std::move(bytes);
  return add_initializer(std::move(init));
}

Value* GraphEditor::weight(const std::string& base, DataType dtype, Shape shape, WeightRef ref) {
  Initializer init;
  init.value = new_value(base, dtype, std::move(shape));
  init.weight = std::move(ref);
  return add_initializer(std::move(init));
}

Value* GraphEditor::add_initializer(Initializer init) {
  Value* v = init.value;
  std::vector<Initializer>& all = model_.graph.initializers;
  const Initializer* before = all.data();
  all.push_back(std::move(init));
  if (all.data() == before) {
    initializers_[v->name] = &all.back();
  } else {  // the vector moved (log N times in N additions): re-point the name index
    initializers_.clear();
    for (const Initializer& i : all) initializers_[i.value->name] = &i;
  }
  return v;
}

Value* GraphEditor::const_i64(const std::vector<int64_t>& values, Shape shape) {
  std::vector<uint8_t> bytes(values.size() * 8);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return constant(scope_ + "/const", DataType::INT64, std::move(shape), std::move(bytes));
}

void GraphEditor::replace_uses(Value* from, Value* to) {
  for (Node& n : model_.graph.nodes)
    for (Value*& in : n.inputs)
      if (in == from) in = to;
  for (Node& n : pending_)
    for (Value*& in : n.inputs)
      if (in == from) in = to;
  for (Value*& out : model_.graph.outputs) MOBIUS_ASSERT(out != from, "replace_uses of a graph output");
  auto it = consumers_.find(from);
  if (it != consumers_.end()) {
    auto& dst = consumers_[to];
    for (size_t i : it->second) dst.push_back(i);
    consumers_.erase(from);
  }
}

void GraphEditor::commit() {
  Graph& g = model_.graph;
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed(i)) nodes.push_back(std::move(g.nodes[i]));
  for (Node& n : pending_) nodes.push_back(std::move(n));
  pending_.clear();

  // dead nodes: no output read by a live node or the graph (a walk back from the outputs)
  std::unordered_map<const Value*, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value* out : nodes[i].outputs)
      if (out) producer[out] = i;
  std::set<const Value*> needed;
  std::vector<bool> live(nodes.size(), false);
  std::vector<const Value*> walk(g.outputs.begin(), g.outputs.end());
  while (!walk.empty()) {
    const Value* v = walk.back();
    walk.pop_back();
    if (!needed.insert(v).second) continue;
    auto p = producer.find(v);
    if (p == producer.end() || live[p->second]) continue;
    live[p->second] = true;
    for (const Value* in : nodes[p->second].inputs)
      if (in) walk.push_back(in);
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (live[i]) kept.push_back(std::move(nodes[i]));

  // topological order (Kahn), stable: of the nodes ready, the first in the current order
  std::set<const Value*> ready(g.inputs.begin(), g.inputs.end());
  for (const Initializer& init : g.initializers) ready.insert(init.value);
  producer.clear();
  for (size_t i = 0; i < kept.size(); ++i)
    for (const Value* out : kept[i].outputs)
      if (out) producer[out] = i;
  std::vector<std::vector<size_t>> users(kept.size());
  std::vector<size_t> waiting(kept.size(), 0);  // inputs not computed yet
  for (size_t i = 0; i < kept.size(); ++i)
    for (const Value* in : kept[i].inputs) {
      if (!in || ready.count(in)) continue;
      auto p = producer.find(in);
      MOBIUS_ASSERT(p != producer.end(), "graph rewrite left a dangling input " + in->name);
      users[p->second].push_back(i);
      ++waiting[i];
    }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> next;
  for (size_t i = 0; i < kept.size(); ++i)
    if (!waiting[i]) next.push(i);
  std::vector<Node> sorted;
  while (!next.empty()) {
    const size_t i = next.top();
    next.pop();
    for (size_t u : users[i])
      if (--waiting[u] == 0) next.push(u);
    sorted.push_back(std::move(kept[i]));
  }
  MOBIUS_ASSERT(sorted.size() == kept.size(), "graph rewrite left a cycle");
  g.nodes = std::move(sorted);

  // initializers nobody reads
  std::vector<Initializer> inits;
  for (Initializer& init : g.initializers)
    if (needed.count(init.value)) inits.push_back(std::move(init));
  g.initializers = std::move(inits);
  reindex();
}

void replace_attention_output(GraphEditor& e, Value* old_y, Value* y, int64_t heads, int64_t head_dim) {
  auto c = e.consumers(old_y);
  if (c.size() == 1 && !e.is_output(old_y)) {
    Node& t = e.graph().nodes[c[0]];
    auto c2 = e.consumers(t.outputs[0]);
    if (t.domain.empty() && t.op_type == "Transpose" &&
        GraphEditor::attr_ints(t, "perm") == std::vector<int64_t>{0, 2, 1, 3} && c2.size() == 1 &&
        !e.is_output(t.outputs[0])) {
      Node& r = e.graph().nodes[c2[0]];
      auto s = r.op_type == "Reshape" ? e.ints(r.inputs[1]) : std::nullopt;
      if (s && (*s == std::vector<int64_t>{0, 0, -1} || *s == std::vector<int64_t>{0, 0, heads * head_dim}) &&
          !e.is_output(r.outputs[0])) {
        e.replace_uses(r.outputs[0], y);
        return;
      }
    }
  }
  Value* y4 = e.add1("Reshape", {y, e.const_i64({0, 0, heads, head_dim}, {4})}, y->dtype);
  e.replace_uses(old_y, e.add1("Transpose", {y4}, y->dtype, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
}

}  // namespace mobius
