#include "package/layout.h"

#include "util/strings.h"
#include "util/error.h"

namespace mobius {
namespace {

// The folder part of `hf` ("onnx/" for "onnx/model"), "" for a file at the top.
std::string_view folder_of(std::string_view hf) {
  const size_t slash = hf.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : hf.substr(0, slash + 1);
}

}  // namespace

const std::vector<GraphPath>& model_graph_paths() {
  static const std::vector<GraphPath> paths = {{"model", hf_graph::model},     {"encoder", hf_graph::encoder},
                                               {"decoder", hf_graph::decoder}, {"vision", hf_graph::vision},
                                               {"speech", hf_graph::audio},    {"embedding", hf_graph::embed_tokens}};
  return paths;
}

std::string graph_file(const GraphPath& g, PackageLayout layout) {
  return (layout == PackageLayout::flat ? g.name : g.hf) + ".onnx";
}

std::string graph_data_file(const GraphPath& g, PackageLayout layout) {
  if (layout == PackageLayout::flat) return g.name + ".onnx.data";
  return std::string(std::string_view(g.hf).substr(folder_of(g.hf).size())) + ".onnx_data";
}

std::string graph_data_path(const GraphPath& g, PackageLayout layout) {
  return layout == PackageLayout::flat ? graph_data_file(g, layout) : g.hf + ".onnx_data";
}

GraphPath with_suffix(const GraphPath& g, std::string_view suffix) {
  return {g.name + std::string(suffix), g.hf + std::string(suffix)};
}

const char* layout_word(PackageLayout layout) { return layout == PackageLayout::flat ? "flat" : "hf"; }

PackageLayout parse_layout(std::string_view word) {
  const std::string w = ascii_lower(word);
  if (w == "hf") return PackageLayout::hf;
  if (w == "flat") return PackageLayout::flat;
  throw Error("unknown --layout '" + std::string(word) + "' (expected hf or flat)");
}

}  // namespace mobius
