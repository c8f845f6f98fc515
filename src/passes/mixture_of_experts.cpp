// mixture_of_experts: mobius' dense sparse-MoE (blocks/moe.h SparseMoE) with a softmax top-k router
// and per-expert SiLU-gated experts, no shared expert (Mixtral, Qwen3-MoE, OLMoE, the generic MoE
// decoder of --try-generic):
//   P = Softmax(L)                                   L: the router logits [tokens, E]
//   v, i = TopK(P, k);  w = v, or v / ReduceSum(v, -1) (renormalized)
//   R = ScatterElements(Expand(0, Shape(P)), i, w, axis=1)
//   g = MatMul(x, G);  u = MatMul(x, U)              x [tokens, H]; G, U [E, H, I]
//   out = ReduceSum(MatMul(Mul(Mul(g, Sigmoid(g)), u), D) * Unsqueeze(Transpose(R), -1), 0)    D [E, I, H]
// → out = com.microsoft MoE(x, L, fc1, , fc2; k, normalize_routing_weights = renormalized,
//   activation_type swiglu, swiglu_fusion 1, activation_alpha 1, activation_beta 0), which runs
// the picked experts only (the dense form runs E / k times their work). onnxruntime 1.31's CPU
// MoE kernel (contrib_ops/cpu/moe/moe_cpu.cc) takes float32, no fc3 and only the interleaved SwiGLU
// (fc1 rows 2j = gate j, 2j + 1 = up j). The experts' checkpoint matrices are written anew for it,
// untransposed ([out, in], as the op reads them): expert e's gate_proj and up_proj concatenated
// along their last axis at write time ([I, 2H], whose rows are gate j | up j: [2I, H] interleaved
// as bytes), down_proj as [H, I]; the graph stacks them (Reshape to [1, 2I, H] / Unsqueeze, then
// Concat), which onnxruntime folds at session creation as it folds the dense form's stacking. Measured against the dense form in bench/bench_moe.py
// (docs/benchmarks.md "moe"). Any other router, activation, bias or dtype stays canonical.
#include <variant>

#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace mobius {
namespace {

bool is_op(const Node* n, const char* op) { return n && n->domain.empty() && n->op_type == op; }

// The checkpoint matrix [out, in] behind a per-expert initializer written transposed (its
// transforms a Transpose and at most a Cast), as a WeightRef without the Transpose; nullopt otherwise.
std::optional<WeightRef> untransposed(const Initializer* w) {
  if (!w || !w->weight) return std::nullopt;
  WeightRef r{w->weight->source_key, {}};
  bool transposed = false;
  for (const WeightTransform& t : w->weight->transforms) {
    if (std::holds_alternative<Transpose>(t)) transposed = true;
    else if (std::holds_alternative<Cast>(t)) r.transforms.push_back(t);
    else return std::nullopt;
  }
  if (!transposed) return std::nullopt;
  return r;
}

// [E, rows, cols] when `v` is Concat(axis 0) of Unsqueeze(w_e, [0]) over E 2-D initializers of one
// shape (SparseMoE::stack), each a transposed checkpoint matrix, whose refs (untransposed) go to
// `refs`; else empty.
std::vector<int64_t> stacked_dims(GraphEditor& e, Value* v, std::vector<WeightRef>& refs) {
  Node* cat = e.producer_op(v, "Concat");
  if (!cat || GraphEditor::attr_int(*cat, "axis", 0) != 0 || cat->inputs.empty()) return {};
  std::vector<int64_t> dims;
  for (Value* part : cat->inputs) {
    Node* u = e.producer_op(part, "Unsqueeze");
    if (!u || u->inputs.size() < 2 || !e.ints(u->inputs[1]) || *e.ints(u->inputs[1]) != std::vector<int64_t>{0})
      return {};
    const Initializer* w = e.initializer(u->inputs[0]);
    const Value* wv = u->inputs[0];
    std::optional<WeightRef> ref = untransposed(w);
    if (!ref) return {};
    refs.push_back(*ref);
    if (!wv->shape || wv->shape->size() != 2 || (*wv->shape)[0].is_symbolic() || (*wv->shape)[1].is_symbolic())
      return {};
    const std::vector<int64_t> rc{(*wv->shape)[0].value, (*wv->shape)[1].value};
    if (!dims.empty() && (dims[1] != rc[0] || dims[2] != rc[1])) return {};
    dims = {0, rc[0], rc[1]};
  }
  dims[0] = static_cast<int64_t>(cat->inputs.size());
  return dims;
}

bool ints_are(const GraphEditor& e, const Value* v, std::vector<int64_t> want) {
  auto got = e.ints(v);
  return got && *got == want;
}

// The renormalized flag of the routing weights `w` read from TopK values `values`: v alone, or
// Div(v, ReduceSum(v, axes [-1], keepdims 1)); nullopt for anything else.
std::optional<bool> renormalized(GraphEditor& e, Value* w, Value* values) {
  if (w == values) return false;
  Node* div = e.producer_op(w, "Div");
  if (!div || div->inputs[0] != values) return std::nullopt;
  Node* sum = e.producer_op(div->inputs[1], "ReduceSum");
  if (!sum || sum->inputs.size() < 2 || sum->inputs[0] != values || !ints_are(e, sum->inputs[1], {-1}) ||
      GraphEditor::attr_int(*sum, "keepdims", 1) != 1)
    return std::nullopt;
  return true;
}

// g * sigmoid(g) (blocks/activation.cpp silu): returns g, or null.
Value* silu_input(GraphEditor& e, Value* v) {
  Node* mul = e.producer_op(v, "Mul");
  if (!mul) return nullptr;
  for (int k = 0; k < 2; ++k) {
    Node* sig = e.producer_op(mul->inputs[1 - k], "Sigmoid");
    if (sig && sig->inputs[0] == mul->inputs[k]) return mul->inputs[k];
  }
  return nullptr;
}

struct MoEMatch {
  Value *x, *logits, *gate, *up, *down;
  std::vector<WeightRef> gate_refs, up_refs, down_refs;  // per expert, [out, in]
  int64_t k, experts, hidden, inter;
  bool normalize;
};

// The dense MoE whose output is ReduceSum node `sum`; nullopt when any part differs.
std::optional<MoEMatch> match_moe(GraphEditor& e, const Node& sum) {
  MoEMatch m{};
  if (!is_op(&sum, "ReduceSum") || sum.inputs.size() < 2 || !ints_are(e, sum.inputs[1], {0}) ||
      GraphEditor::attr_int(sum, "keepdims", 1) != 0 || sum.outputs[0]->dtype != DataType::FLOAT)
    return std::nullopt;
  Node* weighted = e.producer_op(sum.inputs[0], "Mul");
  if (!weighted) return std::nullopt;
  Node* down = e.producer_op(weighted->inputs[0], "MatMul");
  Node* unsq = e.producer_op(weighted->inputs[1], "Unsqueeze");
  if (!down || !unsq || unsq->inputs.size() < 2 || !ints_are(e, unsq->inputs[1], {-1})) return std::nullopt;
  Node* tr = e.producer_op(unsq->inputs[0], "Transpose");
  if (!tr || GraphEditor::attr_ints(*tr, "perm") != std::vector<int64_t>{1, 0}) return std::nullopt;
  Node* scatter = e.producer_op(tr->inputs[0], "ScatterElements");
  if (!scatter || GraphEditor::attr_int(*scatter, "axis", 0) != 1) return std::nullopt;
  Node* zeros = e.producer_op(scatter->inputs[0], "Expand");
  auto zero = zeros ? e.floats(zeros->inputs[0]) : std::nullopt;
  if (!zero || zero->size() != 1 || (*zero)[0] != 0.0f) return std::nullopt;
  auto topk_at = e.producer(scatter->inputs[1]);
  if (!topk_at) return std::nullopt;
  Node& topk = e.graph().nodes[*topk_at];
  if (!is_op(&topk, "TopK") || topk.outputs.size() < 2 || topk.outputs[1] != scatter->inputs[1] ||
      GraphEditor::attr_int(topk, "axis", -1) != -1 || GraphEditor::attr_int(topk, "largest", 1) != 1)
    return std::nullopt;
  auto k = e.ints(topk.inputs[1]);
  Node* softmax = e.producer_op(topk.inputs[0], "Softmax");
  Node* shape = e.producer_op(zeros->inputs[1], "Shape");
  if (!k || k->size() != 1 || !softmax || GraphEditor::attr_int(*softmax, "axis", -1) != -1 || !shape ||
      shape->inputs[0] != topk.inputs[0])
    return std::nullopt;
  std::optional<bool> normalize = renormalized(e, scatter->inputs[2], topk.outputs[0]);
  if (!normalize) return std::nullopt;
  Node* h = e.producer_op(down->inputs[0], "Mul");
  if (!h) return std::nullopt;
  for (int a = 0; a < 2 && !m.gate; ++a) {
    Value* g = silu_input(e, h->inputs[a]);
    Node* gate = g ? e.producer_op(g, "MatMul") : nullptr;
    Node* up = e.producer_op(h->inputs[1 - a], "MatMul");
    if (gate && up && gate->inputs[0] == up->inputs[0]) {
      m.x = gate->inputs[0], m.gate = gate->inputs[1], m.up = up->inputs[1];
    }
  }
  if (!m.gate) return std::nullopt;
  m.logits = softmax->inputs[0], m.down = down->inputs[1], m.k = (*k)[0], m.normalize = *normalize;
  Node* flat = e.producer_op(m.x, "Reshape");  // x as [tokens, H]: the MatMuls broadcast it over the experts
  auto flat_shape = flat ? e.ints(flat->inputs[1]) : std::nullopt;
  if (!flat_shape || flat_shape->size() != 2) return std::nullopt;
  const auto g = stacked_dims(e, m.gate, m.gate_refs), u = stacked_dims(e, m.up, m.up_refs),
             d = stacked_dims(e, m.down, m.down_refs);
  if (g.size() != 3 || u != g || d.size() != 3 || d[0] != g[0] || d[1] != g[2] || d[2] != g[1]) return std::nullopt;
  m.experts = g[0], m.hidden = g[1], m.inter = g[2];
  for (Value* v : {m.x, m.logits, m.gate, m.up, m.down})
    if (v->dtype != DataType::FLOAT) return std::nullopt;
  if (m.k < 1 || m.k > m.experts) return std::nullopt;
  for (size_t j = 0; j < m.gate_refs.size(); ++j)  // concatenated at write time: one dtype conversion
    if (m.up_refs[j].transforms != m.gate_refs[j].transforms) return std::nullopt;
  return m;
}

class MixtureOfExperts : public Pass {
 public:
  const char* name() const override { return "mixture_of_experts"; }

  int run(Model& model, const PassContext&) const override {
    GraphEditor e(model);
    Graph& g = model.graph;
    int rewrites = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const std::optional<MoEMatch> m = match_moe(e, g.nodes[i]);
      if (!m) continue;
      const DataType f = DataType::FLOAT;
      e.set_scope(GraphEditor::scope_of(g.nodes[i]));
      const std::string scope = GraphEditor::scope_of(g.nodes[i]);
      std::vector<Value*> gate_up, down;
      for (size_t x = 0; x < m->gate_refs.size(); ++x) {
        WeightRef r = m->gate_refs[x];  // [I, H] | [I, H] along the last axis, before any Cast
        r.transforms.insert(r.transforms.begin(), Concat{{m->up_refs[x].source_key}, -1});
        const std::string base = scope + ".experts." + std::to_string(x);
        Value* w1 = e.weight(base + ".gate_up", f, {m->inter, 2 * m->hidden}, r);
        Value* w2 = e.weight(base + ".down", f, {m->hidden, m->inter}, m->down_refs[x]);
        gate_up.push_back(e.add1("Reshape", {w1, e.const_i64({1, 2 * m->inter, m->hidden}, {3})}, f));
        down.push_back(e.add1("Unsqueeze", {w2, e.const_i64({0}, {1})}, f));
      }
      Value* fc1 = e.add1("Concat", gate_up, f, {{"axis", int64_t{0}}});  // [E, 2I, H]
      Value* fc2 = e.add1("Concat", down, f, {{"axis", int64_t{0}}});    // [E, H, I]
      e.add("MoE", {m->x, m->logits, fc1, nullptr, fc2}, {g.nodes[i].outputs[0]},
            {{"k", m->k},
             {"normalize_routing_weights", int64_t{m->normalize ? 1 : 0}},
             {"activation_type", std::string("swiglu")},
             {"swiglu_fusion", int64_t{1}},
             {"activation_alpha", 1.0f},
             {"activation_beta", 0.0f}},
            "com.microsoft");
      e.remove(i);
      ++rewrites;
    }
    e.commit();
    return rewrites;
  }
};

}  // namespace

std::unique_ptr<Pass> make_mixture_of_experts() { return std::make_unique<MixtureOfExperts>(); }

}  // namespace mobius
