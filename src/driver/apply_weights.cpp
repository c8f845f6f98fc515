#include "driver/apply_weights.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "util/error.h"

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

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open (apply-weights takes a package directory built by mobius --no-weights)");
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
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
  if (read_file(expected) != serialized)
    throw Error(expected + ": the checkpoint's config gives another graph than this package's (apply-weights binds a "
                "checkpoint of the same architecture and config; build it instead)");
}

BuildReport apply_weights(const std::string& package_dir, const std::string& source, const std::string& output_dir,
                          bool force, bool progress) {
  const std::string model = (fs::path(package_dir) / "model.onnx").string();
  if (!fs::exists(model) && fs::exists(fs::path(package_dir) / "decoder.onnx"))
    throw Error(package_dir + ": a multi-graph package (encoder-decoder, speech-to-text, vision-language): "
                "apply-weights takes single-graph packages for now; build it with the weights instead");
  onnx::ModelProto proto;
  if (!proto.ParseFromString(read_file(model))) throw Error(model + ": not a readable ONNX model");
  const auto& props = proto.metadata_props();
  const auto it = std::find_if(props.begin(), props.end(), [](const auto& p) { return p.key() == kBuildOptionsKey; });
  if (it == props.end())
    throw Error(model + ": no '" + kBuildOptionsKey + "' metadata: not built by this mobius (rebuild it with "
                "`mobius build --no-weights`)");
  BuildOptions o;
  try {
    const nlohmann::json j = nlohmann::json::parse(it->value());
    o.dtype = parse_cli_dtype(j.at("dtype").get<std::string>());
    o.ep = j.at("ep").get<std::string>();
    o.precision = j.at("precision").get<std::string>();
    o.block_size = j.at("block_size").get<int64_t>();
    o.quant_scheme = j.at("quant_scheme").get<std::string>();
    if (!j.at("accuracy_level").is_null()) o.accuracy_level = j["accuracy_level"].get<int>();
    if (!j.at("quantize_lm_head").is_null()) o.quantize_lm_head = j["quantize_lm_head"].get<bool>();
    if (!j.at("quantize_embeddings").is_null()) o.quantize_embeddings = j["quantize_embeddings"].get<bool>();
    o.runtime = j.at("runtime").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(model + ": metadata '" + kBuildOptionsKey + "' is malformed: " + e.what());
  }
  o.config_dir = source;  // any kind of source (driver/source_path.h classify_source)
  o.output_dir = output_dir;
  o.force = force;
  o.progress = progress;
  o.expect_model = model;
  return build_package(o);
}

}  // namespace mobius
