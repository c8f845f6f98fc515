// mobius_cpp._core: the native part of the Python module, a thin layer over the same library the
// CLI uses (driver/build.h build_package, driver/info.h inspect_checkpoint, registry/registry.h),
// returning plain dicts that python/mobius_cpp/__init__.py turns into typed objects.
// nanobind (https://nanobind.readthedocs.io): see docs/python.md for why.
#include <filesystem>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <onnx/onnx.pb.h>

#include "driver/apply_weights.h"
#include "driver/build.h"
#include "driver/option_words.h"
#include "driver/info.h"
#include "registry/custom.h"
#include "registry/diffusers_registry.h"
#include "registry/registry.h"
#include "util/error.h"
#include "util/input_files.h"
#include "util/progress_hook.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// dict(key=value, ...): Python's dict called with keyword arguments ("key"_a = value).
template <typename... Args>
nb::dict kw(Args&&... args) {
  return nb::borrow<nb::dict>(nb::handle(reinterpret_cast<PyObject*>(&PyDict_Type))(std::forward<Args>(args)...));
}

nb::list strings(const std::vector<std::string>& v) {
  nb::list out;
  for (const auto& s : v) out.append(s);
  return out;
}

nb::list passes(const std::vector<mobius::PassReport>& v) {
  nb::list out;
  for (const auto& p : v) out.append(nb::make_tuple(p.pass, p.rewrites));
  return out;
}

nb::dict report_dict(const mobius::BuildReport& r) {
  nb::dict d;
  d["model_type"] = r.model_type;
  d["task"] = r.task;
  d["num_nodes"] = r.num_nodes;
  d["num_weights"] = r.num_weights;
  d["tokenizer_files"] = r.tokenizer_files;
  d["unused_tensors"] = strings(r.unused_tensors);
  d["generic"] = r.generic;
  d["self_check"] = r.self_check ? nb::cast(mobius::eval::describe(*r.self_check)) : nb::none();
  d["passes"] = passes(r.passes);
  if (r.quantize) {
    const mobius::QuantizeOptions& q = *r.quantize;
    d["quantize"] = kw("bits"_a = q.scheme.bits, "block_size"_a = q.scheme.block_size,
                             "symmetric"_a = q.scheme.symmetric, "accuracy_level"_a = q.accuracy_level,
                             "lm_head"_a = q.lm_head, "embeddings"_a = q.embeddings);
  } else {
    d["quantize"] = nb::none();
  }
  d["warnings"] = strings(r.warnings);
  return d;
}

// Runs `run` (a build) without the GIL; between two written chunks the observer takes the GIL back
// to let Python handle a pending signal (Ctrl-C raises KeyboardInterrupt there, which stops the
// write: util/progress_hook.h) and to call `progress`.
template <typename Run>
nb::dict streaming(Run run, const std::optional<nb::callable>& progress) {
  mobius::BuildReport report;
  {
    nb::gil_scoped_release released;
    mobius::ScopedProgressObserver observer([&](const std::string& label, uint64_t done, uint64_t total) {
      nb::gil_scoped_acquire held;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      if (progress) (*progress)(label, done, total);
    });
    report = run();
  }
  return report_dict(report);
}

nb::dict build(const mobius::BuildOptions& options, std::optional<nb::callable> progress) {
  return streaming([&] { return mobius::build_package(options); }, progress);
}

nb::dict apply_weights(const std::string& package_dir, const std::string& source, const std::string& output_dir,
                       bool force, std::optional<nb::callable> progress) {
  return streaming([&] { return mobius::apply_weights(package_dir, source, output_dir, force, false); }, progress);
}

nb::dict inspect(const mobius::BuildOptions& options) {
  const mobius::CheckpointInfo info = mobius::inspect_checkpoint(options);
  nb::dict stored;
  for (const auto& [dtype, s] : info.stored)
    stored[dtype.c_str()] = kw("tensors"_a = s.tensors, "elements"_a = s.elements, "bytes"_a = s.bytes);
  nb::dict data_files;
  for (const auto& [name, bytes] : info.data_files) data_files[name.c_str()] = bytes;
  nb::list eps;
  for (const auto& e : info.eps)
    eps.append(kw("ep"_a = e.ep, "passes"_a = passes(e.passes), "refused"_a = e.refused));
  return kw("source"_a = info.source, "format"_a = info.format, "model_type"_a = info.model_type,
                  "task"_a = info.task, "not_registered"_a = info.not_registered, "llama_like"_a = info.llama_like,
                  "no_weights"_a = info.no_weights, "parameters"_a = info.parameters, "stored"_a = stored,
                  "data_files"_a = data_files, "peak_bytes"_a = info.peak_bytes, "disk_bytes"_a = info.disk_bytes,
                  "eps"_a = eps,
                  "failure"_a = mobius::build_failure(info, options.ep));
}

nb::list list_models() {
  nb::list out;
  for (const auto& e : mobius::registry())
    out.append(kw("model_type"_a = e.model_type, "family"_a = e.family, "task"_a = e.task,
                  "genai_type"_a = mobius::genai_model_type(e)));
  return out;
}

nb::list list_components() {
  nb::list out;
  for (const auto& e : mobius::diffusers_registry())
    out.append(kw("class_name"_a = e.class_name, "family"_a = e.family, "task"_a = e.task));
  return out;
}

// A graph's inputs or outputs: name, element type (ONNX TensorProto name, e.g. "FLOAT"), shape
// (an int per fixed dimension, the symbol's name per symbolic one, None for an unnamed one).
nb::list values(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vs) {
  nb::list out;
  for (const onnx::ValueInfoProto& v : vs) {
    const onnx::TypeProto_Tensor& t = v.type().tensor_type();
    nb::list shape;
    for (const auto& d : t.shape().dim())
      shape.append(d.has_dim_value() ? nb::cast(d.dim_value())
                                     : d.has_dim_param() ? nb::cast(d.dim_param()) : nb::none());
    out.append(kw("name"_a = v.name(), "dtype"_a = onnx::TensorProto_DataType_Name(t.elem_type()),
                        "shape"_a = shape));
  }
  return out;
}

// The I/O contract of a written model.onnx (its weights are external: the file is small), read
// as untrusted input (util/input_files.h): inside its package directory after links, a regular
// file (a FIFO does not block), within protobuf's 2 GiB, parsed with protobuf's nesting limit.
nb::dict io_contract(const std::string& model_path) {
  const std::filesystem::path p(model_path);
  const std::string text = mobius::read_regular_file(
      mobius::checkpoint_file(p.parent_path().empty() ? "." : p.parent_path(), p.filename().string()).string(),
      mobius::kMaxOnnxModelBytes);
  onnx::ModelProto model;
  if (!model.ParseFromString(text)) throw mobius::Error(model_path + ": not a readable ONNX model");
  nb::dict metadata;
  for (const auto& p : model.metadata_props()) metadata[p.key().c_str()] = p.value();
  return kw("inputs"_a = values(model.graph().input()), "outputs"_a = values(model.graph().output()),
                  "metadata"_a = metadata);
}

}  // namespace

NB_MODULE(_core, m) {
  m.attr("__version__") = MOBIUS_VERSION;
  nb::exception<mobius::Error>(m, "Error");

  nb::class_<mobius::BuildOptions>(m, "BuildOptions")
      .def(nb::init<>())
      .def_rw("config_dir", &mobius::BuildOptions::config_dir)
      .def_rw("gguf_file", &mobius::BuildOptions::gguf_file)
      .def_rw("output_dir", &mobius::BuildOptions::output_dir)
      .def_prop_rw(
          "dtype", [](const mobius::BuildOptions& o) { return mobius::dtype_name(o.dtype); },
          [](mobius::BuildOptions& o, const std::string& s) { o.dtype = mobius::parse_cli_dtype(mobius::dtype_word(s)); })
      .def_prop_rw(
          "layout", [](const mobius::BuildOptions& o) { return std::string(mobius::layout_word(o.layout)); },
          [](mobius::BuildOptions& o, const std::string& s) { o.layout = mobius::parse_layout(s); })
      .def_rw("weights", &mobius::BuildOptions::weights)
      .def_rw("force", &mobius::BuildOptions::force)
      .def_rw("variant", &mobius::BuildOptions::variant)
      .def_rw("progress", &mobius::BuildOptions::progress)
      .def_rw("runtime", &mobius::BuildOptions::runtime)
      // the CLI's spellings (driver/option_words.h): ep="CPU", precision="fp16" (the builder's
      // precision of the whole model: dtype f16)
      .def_prop_rw(
          "ep", [](const mobius::BuildOptions& o) { return o.ep; },
          [](mobius::BuildOptions& o, const std::string& s) { o.ep = mobius::ep_word(s); })
      .def_prop_rw(
          "precision", [](const mobius::BuildOptions& o) { return o.precision; },
          [](mobius::BuildOptions& o, const std::string& s) {
            std::string dtype;
            mobius::precision_word(s, o.precision, dtype);
            if (!dtype.empty()) o.dtype = mobius::parse_cli_dtype(dtype);
          })
      .def_rw("task", &mobius::BuildOptions::task)
      .def_rw("block_size", &mobius::BuildOptions::block_size)
      .def_rw("quant_scheme", &mobius::BuildOptions::quant_scheme)
      .def_rw("accuracy_level", &mobius::BuildOptions::accuracy_level)
      .def_rw("quantize_lm_head", &mobius::BuildOptions::quantize_lm_head)
      .def_rw("quantize_embeddings", &mobius::BuildOptions::quantize_embeddings)
      .def_rw("try_generic", &mobius::BuildOptions::try_generic)
      .def_rw("lora_dir", &mobius::BuildOptions::lora_dir)
      .def_rw("lora_runtime", &mobius::BuildOptions::lora_runtime);

  nb::class_<mobius::CustomType>(m, "CustomType")
      .def(nb::init<>())
      .def_rw("model_type", &mobius::CustomType::model_type)
      .def_rw("base", &mobius::CustomType::base)
      .def_rw("config_renames", &mobius::CustomType::config_renames)
      .def_rw("key_renames", &mobius::CustomType::key_renames)
      .def_rw("fused_qkv", &mobius::CustomType::fused_qkv)
      .def_rw("fused_gate_up", &mobius::CustomType::fused_gate_up);
  m.def("register_custom_type", &mobius::register_custom_type, "custom_type"_a);
  m.def("register_custom_types_file", &mobius::register_custom_types_file, "path"_a);
  m.def("build", &build, "options"_a, "progress"_a.none());
  m.def("apply_weights", &apply_weights, "package_dir"_a, "source"_a, "output_dir"_a, "force"_a, "progress"_a.none());
  m.def("inspect", &inspect, "options"_a);
  // {role: its graph file relative to the package} in `layout` for the graphs of one model's
  // package (package/layout.h model_graph_paths)
  m.def(
      "graph_files",
      [](const std::string& layout) {
        nb::dict files;
        for (const mobius::GraphPath& g : mobius::model_graph_paths())
          files[g.name.c_str()] = mobius::graph_file(g, mobius::parse_layout(layout));
        return files;
      },
      "layout"_a);
  m.def("list_models", &list_models);
  m.def("list_components", &list_components);
  m.def("io_contract", &io_contract, "model_path"_a);
}
