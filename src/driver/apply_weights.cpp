#include "driver/apply_weights.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <onnx/onnx.pb.h>

#include "util/error.h"
#include "tasks/text_heads.h"
#include "util/input_files.h"

namespace mobius {

namespace fs = std::filesystem;

namespace {

const char* cli_dtype(DataType t) {
  switch (t) {
    case DataType::FLOAT16: return "f16";
    case DataType::BFLOAT16: return "bf16";
    default: return "f32";
  }
}

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// A model.onnx of a package: a regular file (util/input_files.h) within protobuf's 2 GiB limit.
std::string read_model(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(path + ": cannot open: no such file (apply-weights takes a package directory built by mobius "
                "--no-weights)");
  return read_regular_file(path, kMaxOnnxModelBytes);
}

// The build options recorded in a package's metadata (build_options_metadata), each field checked
// against the values a build takes: the metadata is input like any file, and an error names the
// field, not a command-line option the user never gave.
BuildOptions recorded_options(const std::string& model, const std::string& text) {
  const std::string where = model + ": metadata '" + kBuildOptionsKey + "'";
  const nlohmann::json j = parse_json(text, where);
  auto fail = [&](const std::string& field, const std::string& what) -> void {
    throw Error(where + ": field '" + field + "': " + what + " (not written by this mobius, or changed since: rebuild "
                "the package with `mobius build --no-weights`)");
  };
  if (!j.is_object()) fail("", "expected a JSON object");
  auto one_of = [&](const char* field, std::initializer_list<const char*> choices) {
    std::string list;
    for (const char* c : choices) list += (list.empty() ? "" : ", ") + std::string(c[0] ? c : "\"\"");
    auto it = j.find(field);
    if (it == j.end() || !it->is_string()) fail(field, "expected one of " + list);
    const std::string v = it->get<std::string>();
    for (const char* c : choices)
      if (v == c) return v;
    fail(field, "expected one of " + list + ", got '" + escaped(v.substr(0, 64)) + "'");
    return v;
  };
  auto integer = [&](const char* field, int64_t lo, int64_t hi) -> std::optional<int64_t> {
    auto it = j.find(field);
    if (it == j.end()) fail(field, "missing");
    if (it->is_null()) return std::nullopt;
    if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(hi)) ||
        it->get<int64_t>() < lo || it->get<int64_t>() > hi)
      fail(field, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return it->get<int64_t>();
  };
  auto flag = [&](const char* field) -> std::optional<bool> {
    auto it = j.find(field);
    if (it == j.end()) fail(field, "missing");
    if (it->is_null()) return std::nullopt;
    if (!it->is_boolean()) fail(field, "expected true, false or null");
    return it->get<bool>();
  };
  BuildOptions o;
  o.dtype = parse_cli_dtype(one_of("dtype", {"f32", "f16", "bf16"}));
  o.ep = one_of("ep", {"default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"});
  o.precision = one_of("precision", {"", "int4", "int8", "keep"});
  const std::optional<int64_t> block = integer("block_size", 32, 128);
  if (!block || (*block != 32 && *block != 64 && *block != 128)) fail("block_size", "expected 32, 64 or 128");
  o.block_size = *block;
  o.quant_scheme = one_of("quant_scheme", {"sym", "asym"});
  if (const auto level = integer("accuracy_level", 0, 4)) o.accuracy_level = static_cast<int>(*level);
  o.quantize_lm_head = flag("quantize_lm_head");
  o.quantize_embeddings = flag("quantize_embeddings");
  o.runtime = one_of("runtime", {"ort-genai", "optimum", "none"});
  return o;
}

}  // namespace

std::string build_options_metadata(const BuildOptions& o) {
  return nlohmann::json{{"dtype", cli_dtype(o.dtype)},
                        {"ep", o.ep},
                        {"precision", o.precision},
                        {"block_size", o.block_size},
                        {"quant_scheme", o.quant_scheme},
                        {"accuracy_level", optional_json(o.accuracy_level)},
                        {"quantize_lm_head", optional_json(o.quantize_lm_head)},
                        {"quantize_embeddings", optional_json(o.quantize_embeddings)},
                        {"runtime", o.runtime}}
      .dump();
}

void check_same_model(const std::string& expected, const std::string& serialized) {
  if (read_model(expected) != serialized)
    throw Error(expected + ": the checkpoint's config gives another graph than this package's (apply-weights binds a "
                "checkpoint of the same architecture and config; build it instead)");
}

BuildReport apply_weights(const std::string& package_dir, const std::string& source, const std::string& output_dir,
                          bool force, bool progress) {
  std::error_code ec;
  if (!fs::is_directory(package_dir, ec))
    throw Error(package_dir + ": not a directory (apply-weights takes a package directory built by mobius --no-weights)");
  // the package's layout: where its graph lies (an hf package has onnx/model.onnx)
  const GraphPath& single = model_graph_paths().front();  // "model"
  const PackageLayout layout = fs::exists(checkpoint_file(package_dir, graph_file(single, PackageLayout::hf)), ec)
                                   ? PackageLayout::hf
                                   : PackageLayout::flat;
  // inside PACKAGE, a regular file
  const std::string model = checkpoint_file(package_dir, graph_file(single, layout)).string();
  const auto holds = [&](const GraphPath& g) {
    return fs::exists(fs::path(package_dir) / graph_file(g, PackageLayout::flat), ec) ||
           fs::exists(fs::path(package_dir) / graph_file(g, PackageLayout::hf), ec);
  };
  if (!fs::exists(model, ec) && std::any_of(model_graph_paths().begin() + 1, model_graph_paths().end(), holds))
    throw Error(package_dir + ": a multi-graph package (encoder-decoder, speech-to-text, vision-language): "
                "apply-weights takes single-graph packages for now; build it with the weights instead");
  onnx::ModelProto proto;
  if (!proto.ParseFromString(read_model(model))) throw Error(model + ": not a readable ONNX model");
  const auto& props = proto.metadata_props();
  const auto it = std::find_if(props.begin(), props.end(), [](const auto& p) { return p.key() == kBuildOptionsKey; });
  if (it == props.end())
    throw Error(model + ": no '" + kBuildOptionsKey + "' metadata: not built by this mobius (rebuild it with "
                "`mobius build --no-weights`)");
  BuildOptions o = recorded_options(model, it->value());
  // a text encoder's head (--task) is the package's task; other models have theirs from the config
  const auto task = std::find_if(props.begin(), props.end(), [](const auto& p) { return p.key() == "task"; });
  if (task != props.end() && (is_text_task(task->value()) || task->value() == "sentence-embedding"))
    o.task = task->value();
  o.config_dir = source;  // any kind of source (driver/source_path.h classify_source)
  o.output_dir = output_dir;
  o.layout = layout;  // the graph's external-data locations name the layout's data file
  o.force = force;
  o.progress = progress;
  o.expect_model = model;
  o.expect_package = package_dir;
  return build_package(o);
}

}  // namespace mobius
