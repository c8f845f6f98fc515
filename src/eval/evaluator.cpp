#include "eval/evaluator.h"

#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "eval/op_util.h"
#include "util/error.h"
#include "util/input_files.h"
#include "weights/safetensors.h"  // MappedFile

namespace fs = std::filesystem;

namespace mobius::eval {

const std::map<std::string, OpFn>& op_table() {
  static const std::map<std::string, OpFn> table = [] {
    std::map<std::string, OpFn> t;
    add_elementwise_ops(t);
    add_shape_ops(t);
    add_nn_ops(t);
    return t;
  }();
  return table;
}

std::vector<std::string> Evaluator::supported_ops() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : op_table()) names.push_back(name);
  return names;
}

struct Evaluator::Impl {
  std::string path;
  onnx::ModelProto model;
  std::map<std::string, std::unique_ptr<MappedFile>> files;  // external data, by location
  std::unordered_map<std::string, Tensor> initializers;

  const MappedFile& external_file(const std::string& location) {
    auto& f = files[location];
    if (!f) {  // the location a model names: inside its directory, a regular file (util/input_files.h)
      const fs::path dir = fs::path(path).parent_path();
      f = std::make_unique<MappedFile>(checkpoint_file(dir.empty() ? "." : dir, location, path).string());
    }
    return *f;
  }

  Tensor load_initializer(const onnx::TensorProto& t);
};

namespace {

[[noreturn]] void bad_initializer(const std::string& path, const onnx::TensorProto& t, const std::string& why) {
  throw Error(path + ": initializer '" + t.name() + "': " + why);
}

}  // namespace

// The initializer's bytes: external data (location/offset/length in the mapped file, as
// package/writer.h writes them), raw_data, or the typed repeated fields.
Tensor Evaluator::Impl::load_initializer(const onnx::TensorProto& t) {
  const auto dtype = static_cast<DataType>(t.data_type());
  if (dtype != DataType::FLOAT && dtype != DataType::INT64 && dtype != DataType::BOOL)
    bad_initializer(path, t, "element type " + dtype_name(dtype) + " is not supported by the evaluator (FLOAT, INT64, BOOL)");
  Tensor out;  // no storage yet: a mapped weight is not copied
  out.dtype = dtype;
  out.shape.assign(t.dims().begin(), t.dims().end());
  const auto n = static_cast<size_t>(out.numel());
  const size_t elem = dtype_size(dtype);
  std::span<const uint8_t> bytes;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t offset = 0, length = n * elem;
    for (const auto& e : t.external_data()) {
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset") offset = std::stoull(e.value());
      if (e.key() == "length") length = std::stoull(e.value());
    }
    const auto all = external_file(location).bytes();
    if (length != n * elem || offset > all.size() || all.size() - offset < length)
      bad_initializer(path, t, "external data (" + location + ", offset " + std::to_string(offset) + ", length " +
                                   std::to_string(length) + ") does not hold its " + std::to_string(n) + " elements");
    bytes = all.subspan(offset, length);
    if (dtype == DataType::FLOAT && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) == 0) {
      out.view = reinterpret_cast<const float*>(bytes.data());
      return out;
    }
  } else if (!t.raw_data().empty()) {
    bytes = {reinterpret_cast<const uint8_t*>(t.raw_data().data()), t.raw_data().size()};
  } else {  // typed fields
    dtype == DataType::FLOAT ? out.f.resize(n) : out.i.resize(n);
    if (dtype == DataType::FLOAT && static_cast<size_t>(t.float_data_size()) == n)
      std::copy(t.float_data().begin(), t.float_data().end(), out.f.begin());
    else if (dtype == DataType::INT64 && static_cast<size_t>(t.int64_data_size()) == n)
      std::copy(t.int64_data().begin(), t.int64_data().end(), out.i.begin());
    else if (dtype == DataType::BOOL && static_cast<size_t>(t.int32_data_size()) == n)
      std::copy(t.int32_data().begin(), t.int32_data().end(), out.i.begin());
    else
      bad_initializer(path, t, "holds no data for its " + std::to_string(n) + " elements");
    return out;
  }
  if (bytes.size() != n * elem) bad_initializer(path, t, "data size does not match its shape");
  dtype == DataType::FLOAT ? out.f.resize(n) : out.i.resize(n);
  if (dtype == DataType::FLOAT) {
    std::memcpy(out.f.data(), bytes.data(), bytes.size());
  } else if (dtype == DataType::INT64) {
    std::memcpy(out.i.data(), bytes.data(), bytes.size());
  } else {
    for (size_t k = 0; k < n; ++k) out.i[k] = bytes[k] != 0;
  }
  return out;
}

Evaluator::Evaluator(const std::string& model_path) : impl_(std::make_unique<Impl>()) {
  impl_->path = model_path;
  if (!impl_->model.ParseFromString(read_regular_file(model_path, kMaxOnnxModelBytes)))
    throw Error(model_path + ": not an ONNX ModelProto");
  for (const auto& t : impl_->model.graph().initializer()) impl_->initializers[t.name()] = impl_->load_initializer(t);
}

Evaluator::~Evaluator() = default;

std::map<std::string, Tensor> Evaluator::run(const std::map<std::string, Tensor>& inputs) const {
  const onnx::GraphProto& g = impl_->model.graph();
  for (const auto& vi : g.input()) {
    auto it = inputs.find(vi.name());
    if (it == inputs.end() && impl_->initializers.count(vi.name())) continue;  // its default
    if (it == inputs.end()) throw Error(impl_->path + ": graph input '" + vi.name() + "' was not given");
    const auto want = static_cast<DataType>(vi.type().tensor_type().elem_type());
    if (it->second.dtype != want)
      throw Error(impl_->path + ": graph input '" + vi.name() + "' is " + dtype_name(want) + ", given " +
                  dtype_name(it->second.dtype));
  }
  // Last use of each value, so that intermediates are freed as soon as they are consumed.
  std::unordered_map<std::string, int> last_use;
  for (int k = 0; k < g.node_size(); ++k)
    for (const auto& name : g.node(k).input()) last_use[name] = k;
  for (const auto& o : g.output()) last_use[o.name()] = g.node_size();

  std::unordered_map<std::string, Tensor> values;
  auto lookup = [&](const std::string& name) -> const Tensor* {
    if (auto it = values.find(name); it != values.end()) return &it->second;
    if (auto it = inputs.find(name); it != inputs.end()) return &it->second;
    if (auto it = impl_->initializers.find(name); it != impl_->initializers.end()) return &it->second;
    return nullptr;
  };
  for (int k = 0; k < g.node_size(); ++k) {
    const onnx::NodeProto& node = g.node(k);
    const std::string where = impl_->path + ": node '" + node.name() + "' (" + node.op_type() + ")";
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      throw Error(where + ": domain '" + node.domain() + "' is not implemented by the evaluator");
    auto op = op_table().find(node.op_type());
    if (op == op_table().end()) throw Error(where + ": op " + node.op_type() + " is not implemented by the evaluator");
    Inputs in;
    for (const auto& name : node.input()) {
      const Tensor* t = name.empty() ? nullptr : lookup(name);
      if (!name.empty() && !t) throw Error(where + ": input '" + name + "' is not computed before it");
      in.push_back(t);
    }
    Outputs out = with_context(where, [&] { return op->second(node, in); });
    for (int j = 0; j < node.output_size(); ++j) {
      if (node.output(j).empty()) continue;
      if (j >= static_cast<int>(out.size())) throw Error(where + ": output " + std::to_string(j) + " is not produced");
      values[node.output(j)] = std::move(out[j]);
    }
    for (const auto& name : node.input())
      if (last_use[name] == k) values.erase(name);
  }
  std::map<std::string, Tensor> result;
  for (const auto& o : g.output()) {
    const Tensor* t = lookup(o.name());
    if (!t) throw Error(impl_->path + ": graph output '" + o.name() + "' is not computed");
    Tensor& r = result[o.name()] = *t;
    if (r.view) r.f.assign(r.view, r.view + r.numel()), r.view = nullptr;  // owned, outliving the mapping
  }
  return result;
}

}  // namespace mobius::eval
