#include "passes/passes.h"

#include <algorithm>
#include <set>

#include "passes/graph_edit.h"
#include "util/error.h"

namespace mobius {

namespace {
const std::pair<ExecutionProvider, const char*> kNames[] = {
    {ExecutionProvider::default_, "default"}, {ExecutionProvider::onnx_standard, "onnx-standard"},
    {ExecutionProvider::cpu, "cpu"},          {ExecutionProvider::cuda, "cuda"},
    {ExecutionProvider::dml, "dml"},          {ExecutionProvider::webgpu, "webgpu"}};
}  // namespace

ExecutionProvider parse_execution_provider(const std::string& name) {
  for (const auto& [ep, n] : kNames)
    if (name == n) return ep;
  throw Error("unknown execution provider '" + name +
              "' (expected default, onnx-standard, cpu, cuda, dml or webgpu)");
}

std::string to_string(ExecutionProvider ep) {
  for (const auto& [e, n] : kNames)
    if (e == ep) return n;
  return "?";
}

Pipeline Pipeline::for_ep(ExecutionProvider ep, GraphLowering lowering) {
  Pipeline p;
  if (ep == ExecutionProvider::default_ || lowering == GraphLowering::canonical) return p;
  p.passes.push_back(make_pack_matmuls());
  if (ep == ExecutionProvider::onnx_standard) return p;
  if (lowering == GraphLowering::attention) p.passes.push_back(make_multi_head_attention());
  else p.passes.push_back(make_group_query_attention(/*rotary_inside=*/ep != ExecutionProvider::dml));
  p.passes.push_back(make_skip_simplified_layer_norm());
  if (ep == ExecutionProvider::cpu && lowering == GraphLowering::causal_lm) p.passes.push_back(make_mixture_of_experts());
  return p;
}

Pipeline Pipeline::for_context(const PassContext& ctx) {
  Pipeline p = for_ep(ctx.ep, ctx.lowering);
  if (ctx.lowering == GraphLowering::canonical) return p;
  if (ctx.quantize) p.passes.push_back(make_matmul_nbits());
  if (ctx.quantize && ctx.quantize->embeddings) p.passes.push_back(make_gather_block_quantized());
  if (ctx.ep == ExecutionProvider::cpu) p.passes.push_back(make_tied_lm_head());
  return p;
}

std::vector<PassReport> Pipeline::run(Model& model, const PassContext& ctx) const {
  std::vector<PassReport> report;
  for (const auto& pass : passes) report.push_back({pass->name(), pass->run(model, ctx)});
  Graph& g = model.graph;
  if (passes.empty()) return report;  // default: the canonical graph, unchanged
  Value* pos = ctx.ep == ExecutionProvider::default_ ? nullptr : g.find_value("position_ids");
  if (pos) {
    GraphEditor e(model);
    if (e.consumers(pos).empty())
      g.inputs.erase(std::remove(g.inputs.begin(), g.inputs.end(), pos), g.inputs.end());
  }
  bool custom = std::any_of(g.nodes.begin(), g.nodes.end(),
                            [](const Node& n) { return n.domain == "com.microsoft"; });
  bool imported = std::any_of(model.opsets.begin(), model.opsets.end(),
                              [](const OpsetImport& o) { return o.domain == "com.microsoft"; });
  if (custom && !imported) model.opsets.push_back({"com.microsoft", 1});
  return report;
}

bool caches_only_in_group_query_attention(const Graph& graph) {
  std::set<const Value*> past;
  for (const Value* v : graph.inputs)
    if (v->name.rfind("past_key_values.", 0) == 0) past.insert(v);
  if (past.empty()) return false;
  for (const Node& n : graph.nodes)
    for (const Value* in : n.inputs)
      if (past.count(in) && (n.op_type != "GroupQueryAttention" || n.domain != "com.microsoft")) return false;
  return true;
}

QuantizeOptions builder_quantize_defaults(ExecutionProvider ep, int bits, bool tied_embeddings) {
  QuantizeOptions q;
  q.scheme.bits = bits;
  q.accuracy_level = ep == ExecutionProvider::cpu || ep == ExecutionProvider::webgpu ? 4 : 0;
  q.lm_head = true;
  q.embeddings = tied_embeddings && bits == 4;
  return q;
}

bool has_tied_embeddings(const Graph& graph) {
  std::set<const Value*> gathered, multiplied;
  for (const Node& n : graph.nodes) {
    if (!n.domain.empty() || n.inputs.size() < 2) continue;
    if (n.op_type == "Gather") gathered.insert(n.inputs[0]);
    if (n.tags.lm_head) multiplied.insert(n.inputs[1]);
  }
  return std::any_of(graph.initializers.begin(), graph.initializers.end(), [&](const Initializer& i) {
    return i.weight && gathered.count(i.value) && multiplied.count(i.value);
  });
}

size_t count_ops(const Graph& graph, const std::string& op_type, const std::string& domain) {
  return std::count_if(graph.nodes.begin(), graph.nodes.end(), [&](const Node& n) {
    return n.op_type == op_type && n.domain == domain;
  });
}

}  // namespace mobius
