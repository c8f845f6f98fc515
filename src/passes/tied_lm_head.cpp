// tied_lm_head: the tied LM head (blocks/linear.h Embedding::attend)
//   f = Reshape(x, [-1, K]);  y = Gemm(f, W, transB=1);  logits = Reshape(y, Concat(Shape(x)[0:2], [N]))
//   → logits = MatMul(x, Transpose(W))
// The Gemm form keeps the tied [vocab, hidden] matrix W shared with the embedding, but its final
// Reshape writes a graph output, which onnxruntime cannot alias: it copies every prefill logit
// (batch × seq × vocab floats, 134 MB for a 128-token Gemma 3 prompt); and onnxruntime's CPU
// Gemm/MatMul with a transposed B runs the decode step's [1, hidden] × [hidden, vocab] product
// through a packed transpose (measured on Gemma 3 270M: 36.7 ms a step against 30.5 ms for a
// MatMul by a [hidden, vocab] constant). onnxruntime folds Transpose(W) of an initializer into a
// [hidden, vocab] constant when the session loads (constant folding, graph optimization level
// basic and above, the default): the package keeps one copy of W, the session holds two, as the
// ORT GenAI model builder's packages do (their embedding is a folded Transpose of the LM head).
// A LM head quantized by matmul_nbits (which runs before), Reshape → MatMulNBits → Reshape, loses
// its two Reshapes the same way: MatMulNBits takes x [batch, seq, K] as it is, and its quantized
// W is already [N, K].
// Matched only as built: no bias (C), alpha 1, transA 0, W an initializer, x of rank 3 (where its
// shape is known) and the output shape taken from x's first two dimensions, so that the logits are
// [x.shape[0], x.shape[1], N] in both forms.
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace mobius {
namespace {

class TiedLmHead : public Pass {
 public:
  const char* name() const override { return "tied_lm_head"; }

  int run(Model& model, const PassContext&) const override {
    GraphEditor e(model);
    Graph& g = model.graph;
    int rewrites = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& gemm = g.nodes[i];
      if (!gemm.tags.lm_head) continue;  // the LM head block tagged it (blocks/linear.h)
      const bool nbits = gemm.domain == "com.microsoft" && gemm.op_type == "MatMulNBits";
      if (!nbits) {
        if (!gemm.domain.empty() || gemm.op_type != "Gemm" || gemm.inputs.size() != 2) continue;
        if (GraphEditor::attr_int(gemm, "transB", 0) != 1 || GraphEditor::attr_int(gemm, "transA", 0) != 0 ||
            GraphEditor::attr_float(gemm, "alpha").value_or(1.0f) != 1.0f)
          continue;
      }
      Value* w = gemm.inputs[1];
      if (!e.initializer(w)) continue;
      Node* flat = e.producer_op(gemm.inputs[0], "Reshape");
      if (!flat) continue;
      Value* x = flat->inputs[0];
      if (x->shape && x->shape->size() != 3) continue;
      auto consumers = e.consumers(gemm.outputs[0]);
      if (consumers.size() != 1 || e.is_output(gemm.outputs[0])) continue;
      Node& unflat = g.nodes[consumers[0]];
      if (!unflat.domain.empty() || unflat.op_type != "Reshape" || !leading_dims_of(e, unflat.inputs[1], x))
        continue;
      e.set_scope(GraphEditor::scope_of(gemm));
      if (nbits) {
        std::vector<Value*> inputs = gemm.inputs;
        inputs[0] = x;
        e.add("MatMulNBits", inputs, {unflat.outputs[0]}, gemm.attributes, "com.microsoft").tags = gemm.tags;
      } else {
        Value* wt = e.add1("Transpose", {w}, w->dtype, {{"perm", std::vector<int64_t>{1, 0}}});
        e.add("MatMul", {x, wt}, {unflat.outputs[0]}).tags = gemm.tags;
      }
      e.remove(i);
      e.remove(consumers[0]);
      ++rewrites;
    }
    e.commit();
    return rewrites;
  }

 private:
  // True when `shape` is Concat(Shape(x, start=0, end=2), [n]) for a constant n.
  static bool leading_dims_of(GraphEditor& e, Value* shape, Value* x) {
    Node* concat = e.producer_op(shape, "Concat");
    if (!concat || concat->inputs.size() != 2) return false;
    Node* dims = e.producer_op(concat->inputs[0], "Shape");
    auto last = e.ints(concat->inputs[1]);
    return dims && dims->inputs[0] == x && GraphEditor::attr_int(*dims, "start", 0) == 0 &&
           GraphEditor::attr_int(*dims, "end", -1) == 2 && last && last->size() == 1;
  }
};

}  // namespace

std::unique_ptr<Pass> make_tied_lm_head() { return std::make_unique<TiedLmHead>(); }

}  // namespace mobius
