#include "package/layout.h"

#include <algorithm>
#include <cctype>

#include "util/error.h"

namespace mobius {
namespace {

const GraphFileName& entry(std::string_view role) {
  for (const GraphFileName& g : kGraphFileNames)
    if (role == g.role) return g;
  throw Error("no package file name for a graph named '" + std::string(role) + "' (package/layout.h kGraphFileNames)");
}

}  // namespace

std::string graph_file(std::string_view role, PackageLayout layout) {
  const GraphFileName& g = entry(role);
  if (layout == PackageLayout::flat) return std::string(g.role) + ".onnx";
  return std::string(kHfGraphDir) + "/" + g.hf_stem + ".onnx";
}

std::string graph_data_file(std::string_view role, PackageLayout layout) {
  const GraphFileName& g = entry(role);
  return layout == PackageLayout::flat ? std::string(g.role) + ".onnx.data" : std::string(g.hf_stem) + ".onnx_data";
}

std::string graph_data_path(std::string_view role, PackageLayout layout) {
  const std::string data = graph_data_file(role, layout);
  return layout == PackageLayout::flat ? data : std::string(kHfGraphDir) + "/" + data;
}

const char* layout_word(PackageLayout layout) { return layout == PackageLayout::flat ? "flat" : "hf"; }

PackageLayout parse_layout(std::string_view word) {
  std::string w(word);
  std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (w == "hf") return PackageLayout::hf;
  if (w == "flat") return PackageLayout::flat;
  throw Error("unknown --layout '" + std::string(word) + "' (expected hf or flat)");
}

}  // namespace mobius
