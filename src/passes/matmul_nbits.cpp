// matmul_nbits: y = MatMul(x, W) with W a checkpoint weight [K, N] (a Linear, possibly packed by
// pack_matmuls) → y = com.microsoft MatMulNBits(x, B, scales[, zero_points]) {K, N, bits,
// block_size[, accuracy_level]}, the three new initializers being the block quantization of the
// matrix [N, K] = W^T (a BlockQuantize appended to its WeightRef, weights/transform.h and quantize.h) produced by the writer row by row.
// A tied LM head, Gemm(x, E, transB=1[, C]) with E the embedding [vocab, hidden] = [N, K], becomes
// MatMulNBits(x, …) [+ C]. The LM head (the MatMul or Gemm its block tagged NodeTags::lm_head)
// stays float unless QuantizeOptions::lm_head. Weights of rank ≠ 2 (stacked MoE experts) stay float
// (under --ep cpu mixture_of_experts, which runs first, quantizes them itself for QMoE).
// Bias Adds stay as they are. With QuantizeOptions::stored (--precision keep) each weight takes the
// quantization its checkpoint tensor is stored in (bits and block size per node), one stored in
// none stays float. Operator: onnxruntime contrib op MatMulNBits (docs/ContribOperators.md;
// onnxruntime/core/graph/contrib_ops/contrib_defs.cc), whose CPU kernel takes float and float16.
#include <map>

#include "passes/graph_edit.h"
#include "passes/passes.h"
#include "passes/quantized_weights.h"
#include "util/error.h"

namespace mobius {
namespace {

class MatMulNBits : public Pass {
 public:
  const char* name() const override { return "matmul_nbits"; }

  int run(Model& model, const PassContext& ctx) const override {
    MOBIUS_ASSERT(ctx.quantize.has_value(), "matmul_nbits needs PassContext::quantize");
    const QuantizeOptions& o = *ctx.quantize;
    GraphEditor e(model);
    Graph& g = model.graph;
    std::map<std::string, std::pair<BlockQuantization, std::vector<Value*>>> done;  // weight name → scheme, B, scales[, zero_points]
    int rewrites = 0;
    const size_t count = g.nodes.size();
    for (size_t i = 0; i < count; ++i) {
      const Node& n = g.nodes[i];
      if (!n.domain.empty() || (n.op_type != "MatMul" && n.op_type != "Gemm")) continue;
      if (n.tags.lm_head && !o.lm_head) continue;  // the LM head block tagged it (blocks/linear.h)
      const bool gemm = n.op_type == "Gemm";
      // Gemm: only y = x @ E^T [+ C] (alpha = beta = 1, transA = 0, transB = 1)
      if (gemm && (GraphEditor::attr_int(n, "transA", 0) != 0 || GraphEditor::attr_int(n, "transB", 0) != 1 ||
                   GraphEditor::attr_float(n, "alpha").value_or(1.0f) != 1.0f ||
                   GraphEditor::attr_float(n, "beta").value_or(1.0f) != 1.0f))
        continue;
      const Initializer* w = quantizable_weight(e, n.inputs[1]);
      if (!w) continue;
      const Shape& shape = *w->value->shape;
      // the matrix [N, K]: MatMul's weight is [K, N], the Gemm's (transB) already [N, K]
      const int64_t k = shape[gemm ? 1 : 0].value, nn = shape[gemm ? 0 : 1].value;
      const std::string wname = w->value->name;
      const DataType dt = w->value->dtype;
      if (!done.count(wname)) {
        WeightRef ref = *w->weight;                // copied: new initializers may move w
        if (!gemm) append(ref.transforms, Transpose{});  // the source as [N, K]
        const std::optional<BlockQuantization> scheme = o.scheme_for(ref);
        if (!scheme) continue;  // --precision keep: not stored quantized, stays float
        e.set_scope(GraphEditor::scope_of(n));
        done[wname] = {*scheme, add_quantized_weight(e, ref, wname, dt, nn, k, *scheme)};
      }
      const auto& [scheme, quantized] = done[wname];
      const Node& node = g.nodes[i];  // re-read: nothing moved the nodes, but be explicit
      std::vector<Value*> inputs{node.inputs[0]};
      for (Value* v : quantized) inputs.push_back(v);
      std::vector<Attribute> attrs{{"K", k}, {"N", nn}, {"bits", int64_t{scheme.bits}},
                                   {"block_size", scheme.block_size}};
      if (o.accuracy_level) attrs.push_back({"accuracy_level", int64_t{o.accuracy_level}});
      e.set_scope(GraphEditor::scope_of(node));
      Value* out = node.outputs[0];
      const bool bias = gemm && node.inputs.size() > 2 && node.inputs[2];
      Value* y = bias ? e.new_value(node.name + "/MatMulNBits", dt) : out;
      e.add("MatMulNBits", inputs, {y}, attrs, "com.microsoft").tags = node.tags;
      if (bias) e.add("Add", {y, node.inputs[2]}, {out});
      e.remove(i);
      ++rewrites;
    }
    e.commit();
    return rewrites;
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_nbits() { return std::make_unique<MatMulNBits>(); }

}  // namespace mobius
