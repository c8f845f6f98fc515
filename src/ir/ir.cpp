#include "ir/ir.h"

#include "util/error.h"

namespace mobius {

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (const Dim& d : shape) {
    MOBIUS_ASSERT(!d.is_symbolic(), "num_elements of a symbolic shape");
    n *= d.value;
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].is_symbolic() ? shape[i].symbol : std::to_string(shape[i].value);
  }
  return s + "]";
}

size_t Initializer::nbytes() const {
  return static_cast<size_t>(num_elements(data_shape ? *data_shape : *value->shape)) * dtype_size(value->dtype);
}

Value* Graph::new_value(std::string name, DataType dtype, std::optional<Shape> shape) {
  MOBIUS_ASSERT(!by_name_.count(name), "duplicate value name " + name);
  values_.push_back(std::make_unique<Value>(Value{std::move(name), dtype, std::move(shape)}));
  Value* v = values_.back().get();
  by_name_[v->name] = v;
  return v;
}

Value* Graph::add_optional_input(std::string name, DataType dtype, Shape shape, Shape empty) {
  MOBIUS_ASSERT(empty.size() == shape.size(), "optional input " + name + ": default of another rank");
  Value* v = new_value(std::move(name), dtype, std::move(shape));
  inputs.push_back(v);
  Initializer init;
  init.value = v;
  init.data_shape = std::move(empty);
  MOBIUS_ASSERT(init.nbytes() == 0, "optional input " + v->name + ": default not empty");
  initializers.push_back(std::move(init));
  return v;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

void Graph::rename(Value* v, const std::string& new_name) {
  MOBIUS_ASSERT(!by_name_.count(new_name), "duplicate value name " + new_name);
  by_name_.erase(v->name);
  v->name = new_name;
  by_name_[new_name] = v;
}

const Initializer* Graph::find_initializer(const std::string& name) const {
  for (const auto& init : initializers)
    if (init.value->name == name) return &init;
  return nullptr;
}

}  // namespace mobius
