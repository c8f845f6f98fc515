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
//
// With weight quantization (PassContext::quantize) of 4 bits the node is com.microsoft QMoE
// instead (float32 activations and scales on onnxruntime 1.31's CPU, contrib_ops/cpu/moe/
// moe_quantization_cpu.cc, which also takes only the interleaved SwiGLU), its experts
// block-quantized while they are written as MatMulNBits' weights are (passes/quantized_weights.h,
// weights/quantize.h; one expert matrix at a time): fc1 uint8 [E, 2I, H / 2] (each row of the
// interleaved [2I, H] in blocks of block_size along H, low nibble first), fc1_scales float
// [E, 2I, H / block_size], fc2 [E, H, I / 2], fc2_scales [E, H, I / block_size], and, asymmetric,
// fc1_zero_points [E, 2I, ceil(H / block_size / 2)] and fc2_zero_points
// [E, H, ceil(I / block_size / 2)] (inputs 11, 12; without them the kernel's zero point is 8, the
// symmetric one); attributes expert_weight_bits 4, block_size, and accuracy_level as MatMulNBits'.
// The 1.31 kernel renormalizes the top-k weights even with normalize_routing_weights 0 (measured
// against MoE): a router without renormalization gives it router_weights = Softmax(L) (input 14),
// which it then weighs the picked experts with as they are.
// Expert e's gate_proj and up_proj are written stacked along the rows ([2I, H], gate rows first:
// the weight path quantizes a Concat along the rows only), each row quantized on its own; the
// graph interleaves the rows of all experts at once (Reshape to [E, 2, I, ·], Transpose
// [0, 2, 1, 3], Reshape to [E, 2I, ·]), which onnxruntime folds at session creation. QMoE wants
// block_size a power of two >= 16 dividing H and I (contrib_defs.cc); a scheme outside that (or
// 8 bits, whose CPU kernel runs int8 activations at every accuracy level; or --precision keep)
// keeps the float MoE node, the experts in float.
#include <variant>

#include "passes/graph_edit.h"
#include "passes/passes.h"
#include "passes/quantized_weights.h"
#include "weights/quantize.h"

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
  Value *x, *logits, *probs, *gate, *up, *down;  // probs: Softmax(logits)
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
  m.logits = softmax->inputs[0], m.probs = softmax->outputs[0], m.down = down->inputs[1], m.k = (*k)[0], m.normalize = *normalize;
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

// The block quantization QMoE takes the experts of `m` in under `ctx`, or nullopt (float MoE):
// 4 bits, not --precision keep, block_size a power of two >= 16 dividing H and I.
std::optional<BlockQuantization> qmoe_scheme(const PassContext& ctx, const MoEMatch& m) {
  if (!ctx.quantize || ctx.quantize->stored) return std::nullopt;
  const BlockQuantization& q = ctx.quantize->scheme;
  const int64_t b = q.block_size;
  if (q.bits != 4 || b < 16 || (b & (b - 1)) != 0 || m.hidden % b != 0 || m.inter % b != 0) return std::nullopt;
  return q;
}

// MoE's fc1 [E, 2I, H] and fc2 [E, H, I], float: each expert's matrices written untransposed
// (gate | up concatenated along the last axis: [I, 2H] whose rows are gate j | up j, the
// interleaved [2I, H] as bytes) and stacked by the graph.
std::vector<Value*> float_experts(GraphEditor& e, const MoEMatch& m, const std::string& scope) {
  const DataType f = DataType::FLOAT;
  std::vector<Value*> gate_up, down;
  for (size_t x = 0; x < m.gate_refs.size(); ++x) {
    WeightRef r = m.gate_refs[x];  // [I, H] | [I, H] along the last axis, before any Cast
    r.transforms.insert(r.transforms.begin(), Concat{{m.up_refs[x].source_key}, -1});
    const std::string base = scope + ".experts." + std::to_string(x);
    Value* w1 = e.weight(base + ".gate_up", f, {m.inter, 2 * m.hidden}, r);
    Value* w2 = e.weight(base + ".down", f, {m.hidden, m.inter}, m.down_refs[x]);
    gate_up.push_back(e.add1("Reshape", {w1, e.const_i64({1, 2 * m.inter, m.hidden}, {3})}, f));
    down.push_back(e.add1("Unsqueeze", {w2, e.const_i64({0}, {1})}, f));
  }
  return {e.add1("Concat", gate_up, f, {{"axis", int64_t{0}}}), e.add1("Concat", down, f, {{"axis", int64_t{0}}})};
}

// QMoE's fc1, fc1_scales[, fc1_zero_points], fc2, fc2_scales[, fc2_zero_points] (file comment):
// each expert's gate / up stacked [2I, H] and down [H, I] block-quantized by `q` as they are
// written, stacked by the graph, fc1's rows interleaved.
std::vector<Value*> quantized_experts(GraphEditor& e, const MoEMatch& m, const std::string& scope,
                                      const BlockQuantization& q) {
  using Part = BlockQuantize::Part;
  const int parts = q.symmetric ? 2 : 3;  // data, scales[, zero points]
  const int64_t E = m.experts, H = m.hidden, I = m.inter;
  // the width of part p's rows (bytes or blocks) for a matrix of k columns
  auto width = [&](int p, int64_t k) {
    const Shape s = quant_shape(static_cast<Part>(p), 1, k, q);
    return static_cast<Part>(p) == Part::data ? s[1].value * s[2].value : s[1].value;
  };
  // per part p: fc1's (index p) and fc2's (index parts + p) per-expert values
  std::vector<std::vector<Value*>> stacks(2 * static_cast<size_t>(parts));
  for (size_t x = 0; x < m.gate_refs.size(); ++x) {
    WeightRef r = m.gate_refs[x];  // [I, H] over [I, H], before any Cast
    r.transforms.insert(r.transforms.begin(), Concat{{m.up_refs[x].source_key}, -2});
    const std::string base = scope + ".experts." + std::to_string(x);
    const std::vector<Value*> fc1 = add_quantized_weight(e, r, base + ".gate_up", DataType::FLOAT, 2 * I, H, q);
    const std::vector<Value*> fc2 = add_quantized_weight(e, m.down_refs[x], base + ".down", DataType::FLOAT, H, I, q);
    for (int p = 0; p < parts; ++p) {
      const DataType dt = fc1[p]->dtype;
      stacks[p].push_back(e.add1("Reshape", {fc1[p], e.const_i64({1, 2, I, width(p, H)}, {4})}, dt));
      stacks[parts + p].push_back(e.add1("Reshape", {fc2[p], e.const_i64({1, H, width(p, I)}, {3})}, dt));
    }
  }
  std::vector<Value*> out;
  for (int p = 0; p < 2 * parts; ++p) {
    const DataType dt = stacks[p][0]->dtype;
    Value* all = e.add1("Concat", stacks[p], dt, {{"axis", int64_t{0}}});
    if (p < parts) {  // [E, 2, I, w] (gate rows, up rows) -> [E, 2I, w] (gate j, up j)
      Value* t = e.add1("Transpose", {all}, dt, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
      all = e.add1("Reshape", {t, e.const_i64({E, 2 * I, width(p, H)}, {3})}, dt);
    }
    out.push_back(all);
  }
  return out;
}

class MixtureOfExperts : public Pass {
 public:
  const char* name() const override { return "mixture_of_experts"; }

  int run(Model& model, const PassContext& ctx) const override {
    GraphEditor e(model);
    Graph& g = model.graph;
    int rewrites = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const std::optional<MoEMatch> m = match_moe(e, g.nodes[i]);
      if (!m) continue;
      e.set_scope(GraphEditor::scope_of(g.nodes[i]));
      const std::string scope = GraphEditor::scope_of(g.nodes[i]);
      std::vector<Attribute> attrs{{"k", m->k},
                                   {"normalize_routing_weights", int64_t{m->normalize ? 1 : 0}},
                                   {"activation_type", std::string("swiglu")},
                                   {"swiglu_fusion", int64_t{1}},
                                   {"activation_alpha", 1.0f},
                                   {"activation_beta", 0.0f}};
      if (const std::optional<BlockQuantization> q = qmoe_scheme(ctx, *m)) {
        const std::vector<Value*> w = quantized_experts(e, *m, scope, *q);
        // input, router_probs, fc1, fc1_scales, fc1_bias, fc2, fc2_scales[, fc2_bias, fc3 ×3,
        // fc1_zero_points, fc2_zero_points[, fc3_zero_points, router_weights]]
        const size_t fc2 = w.size() / 2;
        std::vector<Value*> inputs{m->x, m->logits, w[0], w[1], nullptr, w[fc2], w[fc2 + 1]};
        if (!q->symmetric || !m->normalize)
          inputs.insert(inputs.end(), {nullptr, nullptr, nullptr, nullptr, q->symmetric ? nullptr : w[2],
                                       q->symmetric ? nullptr : w[fc2 + 2]});
        // the kernel renormalizes the top-k routing weights whatever normalize_routing_weights
        // says; router_weights (input 14) weighs the experts with the softmax as it is
        if (!m->normalize) inputs.insert(inputs.end(), {nullptr, m->probs});
        attrs.push_back({"expert_weight_bits", int64_t{q->bits}});
        attrs.push_back({"block_size", q->block_size});
        if (ctx.quantize->accuracy_level) attrs.push_back({"accuracy_level", int64_t{ctx.quantize->accuracy_level}});
        e.add("QMoE", inputs, {g.nodes[i].outputs[0]}, attrs, "com.microsoft");
      } else {
        const std::vector<Value*> w = float_experts(e, *m, scope);
        e.add("MoE", {m->x, m->logits, w[0], nullptr, w[1]}, {g.nodes[i].outputs[0]}, attrs, "com.microsoft");
      }
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
