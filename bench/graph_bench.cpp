// Graph-construction benchmark: for each config.json given, times the no-weights front half of a
// build (HfConfig::load + registry lookup and create + build_graphs + to_model_proto) and prints the
// minimum over --reps repetitions. No checkpoint is read and nothing is written.
//
//   mobius_graph_bench [--reps N] CONFIG_JSON...
// Output: one tab-separated line per config: model_type, nodes, min ms, median ms, path.
// Built only with -DMOBIUS_BUILD_BENCH=ON; driven by bench/graph_bench.py.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "config/hf_config.h"
#include "ir/serialize.h"
#include "registry/config_defaults.h"
#include "registry/registry.h"
#include "util/error.h"

namespace {

struct Sample {
  std::string model_type;
  size_t nodes = 0;
  double ms = 0;
};

// One no-weights graph build; weights get external-data locations as in package/writer.cpp.
Sample build_once(const std::string& path) {
  auto t0 = std::chrono::steady_clock::now();
  mobius::HfConfig cfg = mobius::HfConfig::load(path);
  std::string model_type = cfg.get_string("model_type");
  const mobius::RegistryEntry& entry = mobius::find_architecture(model_type, cfg.file());
  auto arch = entry.create(mobius::with_class_defaults(cfg, model_type), mobius::DataType::FLOAT);
  size_t nodes = 0;
  for (const mobius::NamedGraph& g : arch->build_graphs()) {  // every graph of the package
    std::map<std::string, mobius::ExternalLocation> layout;
    uint64_t offset = 0;
    for (const mobius::Initializer& init : g.model.graph.initializers) {
      if (!init.weight) continue;
      layout[init.value->name] = {g.path.name + ".onnx.data", offset, init.nbytes()};
      offset += (init.nbytes() + 63) / 64 * 64;
    }
    onnx::ModelProto proto = mobius::to_model_proto(g.model, layout);
    if (proto.graph().node_size() == 0) throw mobius::Error(path + ": built an empty " + g.path.name + " graph");
    nodes += g.model.graph.nodes.size();
  }
  auto t1 = std::chrono::steady_clock::now();
  return {model_type, nodes, std::chrono::duration<double, std::milli>(t1 - t0).count()};
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 10;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: %s [--reps N] CONFIG_JSON...\n", argv[0]);
      return 0;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty() || reps < 1) {
    std::fprintf(stderr, "usage: %s [--reps N] CONFIG_JSON...\n", argv[0]);
    return 1;
  }
  try {
    for (const std::string& path : paths) {
      std::vector<double> ms;
      Sample s;
      for (int r = 0; r < reps; ++r) {
        s = build_once(path);
        ms.push_back(s.ms);
      }
      std::sort(ms.begin(), ms.end());
      std::printf("%s\t%zu\t%.3f\t%.3f\t%s\n", s.model_type.c_str(), s.nodes, ms.front(),
                  ms[ms.size() / 2], path.c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mobius_graph_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
