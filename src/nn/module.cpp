#include "nn/module.h"

namespace mobius {

Value* Parameter::value(Ops& op) const {
  WeightRef ref{source_key.empty() ? name : source_key};
  if (transpose) append(ref.transforms, Transpose{});
  append(ref.transforms, Cast{dtype});
  return op.builder().weight(name, dtype, shape, std::move(ref));
}

void Module::set_name(const std::string& local, const std::string& parent_path) {
  const std::string old_path = path_;
  name_ = local;
  path_ = parent_path.empty() ? local : (local.empty() ? parent_path : parent_path + "." + local);
  // Children registered later derive their paths from path_; re-root existing ones.
  for (auto& c : children_) c->set_name(c->name_, path_);
  for (auto& p : params_) {
    // the name relative to this module, which may itself be dotted ("experts.0.w1.weight")
    std::string rel = old_path.empty() ? p->name : p->name.substr(old_path.size() + 1);
    p->name = path_.empty() ? rel : path_ + "." + rel;
  }
}

std::vector<const Parameter*> Module::named_parameters() const {
  std::vector<const Parameter*> out;
  for (const auto& p : params_) out.push_back(p.get());
  for (const auto& c : children_) {
    auto sub = c->named_parameters();
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

Parameter* Module::param(const std::string& name, Shape shape, DataType dtype, bool transpose) {
  auto p = std::make_unique<Parameter>();
  p->name = path_.empty() ? name : path_ + "." + name;
  p->shape = std::move(shape);
  p->dtype = dtype;
  p->transpose = transpose;
  params_.push_back(std::move(p));
  return params_.back().get();
}

}  // namespace mobius
