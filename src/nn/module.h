// Module / Parameter tree. A Module registers children and parameters explicitly; the dotted
// path of a parameter (e.g. "model.layers.3.self_attn.q_proj.weight") equals the Hugging Face
// state-dict key it binds to. Parameters carry name, shape, dtype and flags, never data.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "builder/ops.h"

namespace mobius {

struct Parameter {
  std::string name;       // full dotted path: the checkpoint key
  Shape shape;            // shape of the ONNX initializer
  DataType dtype;
  bool transpose = false; // initializer = checkpoint tensor with its last two axes swapped
  std::string source_key; // checkpoint key when different from `name` (e.g. tied weights)

  // The initializer of this parameter (created on first use).
  Value* value(Ops& op) const;
};

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& path() const { return path_; }
  // All parameters of this subtree, in registration order.
  std::vector<const Parameter*> named_parameters() const;

  // Sets this module's local name and absolute path; called by child() and for the root.
  void set_name(const std::string& local, const std::string& parent_path);

 protected:
  // Registers a child module `name` constructed with `args`.
  template <typename T, typename... Args>
  T* child(const std::string& name, Args&&... args) {
    return adopt(name, std::make_unique<T>(std::forward<Args>(args)...));
  }
  // Registers `m`, constructed elsewhere (its concrete type chosen from options, e.g. make_norm),
  // as the child `name`.
  template <typename T>
  T* adopt(const std::string& name, std::unique_ptr<T> m) {
    m->set_name(name, path_);
    T* raw = m.get();
    children_.push_back(std::move(m));
    return raw;
  }
  // Registers a parameter named path() + "." + name; `name` may be dotted (a checkpoint key
  // relative to this module, e.g. "experts.0.w1.weight").
  Parameter* param(const std::string& name, Shape shape, DataType dtype, bool transpose = false);
  // Enters this module's scope in the graph builder (node names follow the module path).
  [[nodiscard]] GraphBuilder::Scope enter(Ops& op) const { return op.builder().scope(name_); }

 private:
  std::string name_;
  std::string path_;
  std::vector<std::unique_ptr<Module>> children_;
  std::vector<std::unique_ptr<Parameter>> params_;
};

}  // namespace mobius
