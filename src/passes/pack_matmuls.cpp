// pack_matmuls: y_i = MatMul(x, W_i) [+ b_i] for i < n (n = 2 or 3, sharing x)
//   → [y_0, ..., y_n-1] = Split(MatMul(x, concat(W_i, axis -1)) [+ concat(b_i)], axis -1)
// The packed weight is one initializer whose WeightRef lists every checkpoint tensor
// (a Concat transform, weights/transform.h): the concatenation happens while the writer streams the weights, the graph
// never holds weight data. Preconditions (else the group stays as it is): each W_i a checkpoint
// weight [in, n_i] read by no other node, of one dtype and transpose flag; biases are packed only
// when every y_i is read by exactly one Add with an exclusively-used 1-D weight initializer.
#include <algorithm>
#include <map>

#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace mobius {
namespace {

struct Member {
  size_t matmul;
  const Initializer* weight;
  std::optional<size_t> bias_add;  // the Add of the bias, if any
  const Initializer* bias = nullptr;
};

// An exclusively-used, unpacked checkpoint weight of rank `rank`, or null.
const Initializer* own_weight(GraphEditor& e, Value* v, size_t rank) {
  const Initializer* init = e.initializer(v);
  if (!init || !init->weight || concat_of(init->weight->transforms) || !v->shape ||
      v->shape->size() != rank || e.consumers(v).size() != 1)
    return nullptr;
  return init;
}

std::string packed_name(const std::vector<std::string>& names) {
  // common dotted prefix and suffix: model.layers.0.self_attn.{q_proj,k_proj,v_proj}.weight
  // → model.layers.0.self_attn.q_proj_k_proj_v_proj.weight
  const std::string& first = names[0];
  size_t pre = first.rfind('.', first.size() - 1);
  std::string suffix = pre == std::string::npos ? "" : first.substr(pre);
  std::string stem = first.substr(0, first.size() - suffix.size());
  size_t dot = stem.rfind('.');
  std::string prefix = dot == std::string::npos ? "" : stem.substr(0, dot + 1);
  std::string mid;
  for (const auto& n : names) {
    std::string s = n.substr(0, n.size() - std::min(n.size(), suffix.size()));
    if (s.rfind(prefix, 0) == 0) s = s.substr(prefix.size());
    mid += (mid.empty() ? "" : "_") + s;
  }
  return prefix + mid + suffix;
}

class PackMatMuls : public Pass {
 public:
  const char* name() const override { return "pack_matmuls"; }

  int run(Model& model, const PassContext&) const override {
    GraphEditor e(model);
    Graph& g = model.graph;
    std::map<Value*, std::vector<size_t>> by_input;  // activation → MatMuls reading it
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.domain.empty() && n.op_type == "MatMul" && own_weight(e, n.inputs[1], 2))
        by_input[n.inputs[0]].push_back(i);
    }
    std::vector<std::pair<Value*, std::vector<size_t>>> groups(by_input.begin(), by_input.end());
    std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.second[0] < b.second[0]; });
    int rewrites = 0;
    for (auto& [x, idx] : groups) {
      if (idx.size() < 2 || idx.size() > 3) continue;
      std::vector<Member> group;
      for (size_t i : idx) group.push_back({i, e.initializer(g.nodes[i].inputs[1]), std::nullopt, nullptr});
      const WeightRef& ref0 = *group[0].weight->weight;
      const Value* w0 = group[0].weight->value;
      bool same = std::all_of(group.begin(), group.end(), [&](const Member& m) {
        const Value* w = m.weight->value;
        return w->dtype == w0->dtype && m.weight->weight->transforms == ref0.transforms &&
               !(*w->shape)[0].is_symbolic() && (*w->shape)[0].value == (*w0->shape)[0].value;
      });
      if (!same) continue;
      // biases: every output read only by Add(y, b) with an own 1-D weight b
      bool biases = true;
      for (Member& m : group) {
        Value* y = g.nodes[m.matmul].outputs[0];
        auto c = e.consumers(y);
        Node* add = c.size() == 1 && !e.is_output(y) ? &g.nodes[c[0]] : nullptr;
        if (!add || add->op_type != "Add" || !add->domain.empty()) {
          biases = false;
          break;
        }
        Value* b = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
        const Initializer* bi = own_weight(e, b, 1);
        if (!bi || b->dtype != w0->dtype || bi->weight->transforms != WeightTransforms{Cast{w0->dtype}}) {
          biases = false;
          break;
        }
        m.bias_add = c[0];
        m.bias = bi;
      }
      // the packed initializers (copies of the refs: e.constant() may move the initializers)
      std::vector<std::string> wnames, bnames;
      std::vector<std::string> wkeys, bkeys;
      const WeightTransforms wlist = ref0.transforms;
      const WeightTransforms blist = biases ? group[0].bias->weight->transforms : WeightTransforms{};
      std::vector<int64_t> sizes;
      int64_t total = 0;
      for (const Member& m : group) {
        wnames.push_back(m.weight->value->name);
        wkeys.push_back(m.weight->weight->source_key);
        sizes.push_back((*m.weight->value->shape)[1].value);
        total += sizes.back();
        if (biases) {
          bnames.push_back(m.bias->value->name);
          bkeys.push_back(m.bias->weight->source_key);
        }
      }
      std::string scope = GraphEditor::scope_of(g.nodes[group[0].matmul]);  // ...self_attn.q_proj
      e.set_scope(scope.substr(0, scope.rfind('.') == std::string::npos ? 0 : scope.rfind('.')));
      const int64_t in = (*w0->shape)[0].value;
      const DataType dt = w0->dtype;
      Value* w = pack(e, packed_name(wnames), dt, {in, total}, wkeys, wlist);
      Value* y = e.add1("MatMul", {x, w}, dt);
      if (biases) y = e.add1("Add", {y, pack(e, packed_name(bnames), dt, {total}, bkeys, blist)}, dt);
      std::vector<Value*> outs;
      for (const Member& m : group) {
        const Node& last = g.nodes[biases ? *m.bias_add : m.matmul];
        outs.push_back(last.outputs[0]);
        e.remove(m.matmul);
        if (biases) e.remove(*m.bias_add);
      }
      e.add("Split", {y, e.const_i64(sizes, {static_cast<int64_t>(sizes.size())})}, outs,
            {{"axis", int64_t{-1}}});
      ++rewrites;
    }
    e.commit();
    return rewrites;
  }

 private:
  static Value* pack(GraphEditor& e, const std::string& name, DataType dt, Shape shape,
                     const std::vector<std::string>& keys, WeightTransforms list) {
    append(list, Concat{{keys.begin() + 1, keys.end()}, -1});  // side by side along the outputs
    return e.weight(name, dt, std::move(shape), WeightRef{keys[0], std::move(list)});
  }
};

}  // namespace

std::unique_ptr<Pass> make_pack_matmuls() { return std::make_unique<PackMatMuls>(); }

}  // namespace mobius
