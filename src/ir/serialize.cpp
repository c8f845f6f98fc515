#include "ir/serialize.h"

#include "util/error.h"

namespace mobius {
namespace {

void set_type(onnx::TypeProto* type, const Value& v) {
  auto* tensor = type->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(v.dtype));
  if (!v.shape) return;
  auto* shape = tensor->mutable_shape();
  for (const Dim& d : *v.shape) {
    auto* dim = shape->add_dim();
    if (d.is_symbolic())
      dim->set_dim_param(d.symbol);
    else
      dim->set_dim_value(d.value);
  }
}

void set_value_info(onnx::ValueInfoProto* info, const Value& v) {
  info->set_name(v.name);
  set_type(info->mutable_type(), v);
}

void write_graph(onnx::GraphProto* graph, const Graph& g, const std::map<std::string, ExternalLocation>& external);

struct AttrWriter {
  onnx::AttributeProto* a;
  const std::map<std::string, ExternalLocation>& external;
  void operator()(int64_t i) const {
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(i);
  }
  void operator()(float f) const {
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(f);
  }
  void operator()(const std::string& s) const {
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(s);
  }
  void operator()(const std::vector<int64_t>& v) const {
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  void operator()(const std::vector<float>& v) const {
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  }
  void operator()(const std::shared_ptr<const Graph>& g) const {
    a->set_type(onnx::AttributeProto::GRAPH);
    write_graph(a->mutable_g(), *g, external);
  }
};

void add_external(onnx::TensorProto* t, const std::string& key, const std::string& value) {
  auto* e = t->add_external_data();
  e->set_key(key);
  e->set_value(value);
}

void write_graph(onnx::GraphProto* graph, const Graph& g, const std::map<std::string, ExternalLocation>& external) {
  graph->set_name(g.name);
  for (const Value* v : g.inputs) set_value_info(graph->add_input(), *v);
  for (const Value* v : g.outputs) set_value_info(graph->add_output(), *v);
  for (const Initializer& init : g.initializers) {
    auto* t = graph->add_initializer();
    const Value& v = *init.value;
    t->set_name(v.name);
    t->set_data_type(static_cast<int32_t>(v.dtype));
    for (const Dim& d : init.data_shape ? *init.data_shape : *v.shape) t->add_dims(d.value);
    if (init.weight || external.count(v.name)) {
      auto it = external.find(v.name);
      MOBIUS_ASSERT(it != external.end(), "no external location for weight " + v.name);
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      add_external(t, "location", it->second.file);
      add_external(t, "offset", std::to_string(it->second.offset));
      add_external(t, "length", std::to_string(it->second.length));
    } else {
      t->set_raw_data(init.data.data(), init.data.size());
    }
  }
  for (const Node& n : g.nodes) {
    auto* node = graph->add_node();
    node->set_op_type(n.op_type);
    node->set_domain(n.domain);
    node->set_name(n.name);
    for (const Value* in : n.inputs) node->add_input(in ? in->name : "");
    for (const Value* out : n.outputs) node->add_output(out ? out->name : "");  // null: omitted
    for (const Attribute& attr : n.attributes) {
      auto* a = node->add_attribute();
      a->set_name(attr.name);
      std::visit(AttrWriter{a, external}, attr.value);
    }
  }
}

}  // namespace

onnx::ModelProto to_model_proto(const Model& model,
                                const std::map<std::string, ExternalLocation>& external) {
  onnx::ModelProto proto;
  proto.set_ir_version(model.ir_version);
  proto.set_producer_name(model.producer_name);
  proto.set_producer_version(model.producer_version);
  for (const auto& op : model.opsets) {
    auto* o = proto.add_opset_import();
    o->set_domain(op.domain);
    o->set_version(op.version);
  }
  for (const auto& [k, v] : model.metadata) {
    auto* p = proto.add_metadata_props();
    p->set_key(k);
    p->set_value(v);
  }
  write_graph(proto.mutable_graph(), model.graph, external);
  return proto;
}

}  // namespace mobius
