#include "builder/builder.h"

#include "util/error.h"
#include "util/float16.h"

namespace mobius {

std::string GraphBuilder::path() const {
  std::string p;
  for (const auto& s : scopes_) {
    if (s.empty()) continue;  // a module that shares its parent's path (e.g. OPT's fc1/fc2)
    if (!p.empty()) p += '.';
    p += s;
  }
  return p;
}

std::string GraphBuilder::unique_name(const std::string& base) {
  int& n = name_counts_[base];
  return base + "_" + std::to_string(n++);
}

Node& GraphBuilder::producer(const Value* v) {
  for (auto it = graph_.nodes.rbegin(); it != graph_.nodes.rend(); ++it)
    for (const Value* out : it->outputs)
      if (out == v) return *it;
  assert_failed("producer(v)", __FILE__, __LINE__, "no node produces " + v->name);
}

std::vector<Value*> GraphBuilder::add_node(const std::string& op_type, std::vector<Value*> inputs,
                                           std::vector<Attribute> attrs,
                                           std::vector<DataType> out_dtypes,
                                           const std::string& domain) {
  std::string p = path();
  Node node;
  node.op_type = op_type;
  node.domain = domain;
  node.name = unique_name(p.empty() ? op_type : p + "/" + op_type);
  node.inputs = std::move(inputs);
  node.attributes = std::move(attrs);
  for (size_t i = 0; i < out_dtypes.size(); ++i)
    node.outputs.push_back(
        graph_.new_value(node.name + "/output_" + std::to_string(i), out_dtypes[i]));
  graph_.nodes.push_back(std::move(node));
  return graph_.nodes.back().outputs;
}

Value* GraphBuilder::input(const std::string& name, DataType dtype, Shape shape) {
  Value* v = graph_.new_value(name, dtype, std::move(shape));
  graph_.inputs.push_back(v);
  return v;
}

void GraphBuilder::output(Value* v, const std::string& name, Shape shape) {
  MOBIUS_ASSERT(!graph_.find_value(name), "output name already used: " + name);
  graph_.rename(v, name);
  v->shape = std::move(shape);
  graph_.outputs.push_back(v);
}

Value* GraphBuilder::constant(DataType dtype, Shape shape, std::span<const uint8_t> bytes) {
  std::string key = std::to_string(static_cast<int>(dtype)) + shape_str(shape);
  key.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  Value* v = graph_.new_value(unique_name("const"), dtype, std::move(shape));
  Initializer init;
  init.value = v;
  init.data.assign(bytes.begin(), bytes.end());
  graph_.initializers.push_back(std::move(init));
  constants_[key] = v;
  return v;
}

Value* GraphBuilder::constant_f32(const std::vector<float>& values, Shape shape) {
  return constant_float(values, std::move(shape), DataType::FLOAT);
}

Value* GraphBuilder::constant_float(const std::vector<float>& values, Shape shape,
                                    DataType dtype) {
  if (dtype == DataType::FLOAT) {
    auto* p = reinterpret_cast<const uint8_t*>(values.data());
    return constant(dtype, std::move(shape), {p, values.size() * 4});
  }
  MOBIUS_ASSERT(dtype == DataType::FLOAT16 || dtype == DataType::BFLOAT16,
                "constant_float: unsupported dtype " + dtype_name(dtype));
  std::vector<uint16_t> h(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    h[i] = dtype == DataType::FLOAT16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
  auto* p = reinterpret_cast<const uint8_t*>(h.data());
  return constant(dtype, std::move(shape), {p, h.size() * 2});
}

Value* GraphBuilder::constant_i64(const std::vector<int64_t>& values, Shape shape) {
  auto* p = reinterpret_cast<const uint8_t*>(values.data());
  return constant(DataType::INT64, std::move(shape), {p, values.size() * 8});
}

Value* GraphBuilder::weight(const std::string& name, DataType dtype, Shape shape, WeightRef ref) {
  auto it = weights_.find(name);
  if (it != weights_.end()) return it->second;
  // Every weight's shape comes from config fields: checked here, where every weight is created,
  // before anything is allocated, streamed or written for it.
  int64_t elements = 1;
  for (const Dim& d : shape) {
    MOBIUS_ASSERT(!d.is_symbolic(), "weight " + name + " with a symbolic dimension");
    if (d.value < 1 || __builtin_mul_overflow(elements, d.value, &elements) || elements > kMaxWeightElements)
      throw Error("the config gives weight '" + name + "' the shape " + shape_str(shape) + ", " +
                  (d.value < 1 ? std::string("with a dimension below 1")
                               : "more than mobius' limit of 2^36 elements per weight") +
                  ": a size field of config.json is out of the range any real model has");
  }
  Value* v = graph_.new_value(name, dtype, std::move(shape));
  Initializer init;
  init.value = v;
  init.weight = std::move(ref);
  graph_.initializers.push_back(std::move(init));
  weights_[name] = v;
  return v;
}

}  // namespace mobius
