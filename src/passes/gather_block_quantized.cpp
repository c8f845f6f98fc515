// gather_block_quantized: y = Gather(E, ids) (axis 0) with E a checkpoint embedding matrix
// [vocab, dim], dim a multiple of the block size → com.microsoft GatherBlockQuantized(E_q, ids,
// scales[, zero_points]) {bits, block_size, gather_axis 0, quantize_axis 1}: E_q uint8
// [vocab, dim * bits / 8] holds the rows of E block-quantized as for MatMulNBits (the bytes of
// its B [vocab, dim / block, blob] seen as one row each), scales [vocab, dim / block], zero points
// packed the same way (weights/quantize.h). A symmetric matrix has no zero points: the op's
// default for uint8 data is 2^(bits-1). Operator: onnxruntime contrib op GatherBlockQuantized
// (docs/ContribOperators.md), CPU kernel for uint8 data with float / float16 scales.
// A tied embedding whose LM head matmul_nbits (which runs before) quantized the same way shares
// the head's initializers: GatherBlockQuantized(Reshape(B, [vocab, dim * bits / 8]), ids, scales
// [, zero points]), as the ORT GenAI model builder does; the package stores the matrix once.
// With QuantizeOptions::stored (--precision keep) an embedding takes the quantization its
// checkpoint tensor is stored in, or stays float.
#include <map>

#include "passes/graph_edit.h"
#include "passes/passes.h"
#include "passes/quantized_weights.h"
#include "util/error.h"

namespace mobius {
namespace {

// The data, scales[, zero points] that an earlier pass made by quantizing `ref`'s matrix with
// `q` and scale dtype `dt` (each part an initializer of its own), or none.
std::vector<Value*> quantized_like(const Graph& g, const WeightRef& ref, const BlockQuantization& q, DataType dt) {
  using Part = BlockQuantize::Part;
  Value* parts[3] = {};
  for (const Initializer& init : g.initializers) {
    const BlockQuantize* wq = init.weight ? quantize_of(init.weight->transforms) : nullptr;
    if (!wq) continue;
    const WeightRef& r = *init.weight;
    // the same matrix through the same transforms (the Cast to `dt` among them), then `q`
    const WeightTransforms before(r.transforms.begin(), r.transforms.end() - 1);
    const Cast* cast = cast_of(before);
    if (r.source_key != ref.source_key || before != ref.transforms || !cast || cast->dtype != dt || wq->scheme != q)
      continue;
    parts[static_cast<int>(wq->part)] = init.value;
  }
  if (!parts[static_cast<int>(Part::data)] || !parts[static_cast<int>(Part::scales)] ||
      (!q.symmetric && !parts[static_cast<int>(Part::zero_points)]))
    return {};
  std::vector<Value*> out{parts[0], parts[1]};
  if (!q.symmetric) out.push_back(parts[2]);
  return out;
}

class GatherBlockQuantized : public Pass {
 public:
  const char* name() const override { return "gather_block_quantized"; }

  int run(Model& model, const PassContext& ctx) const override {
    MOBIUS_ASSERT(ctx.quantize.has_value(), "gather_block_quantized needs PassContext::quantize");
    GraphEditor e(model);
    Graph& g = model.graph;
    // embedding name → scheme, data, scales[, zero points]
    std::map<std::string, std::pair<BlockQuantization, std::vector<Value*>>> done;
    int rewrites = 0;
    const size_t count = g.nodes.size();
    for (size_t i = 0; i < count; ++i) {
      const Node& n = g.nodes[i];
      if (!n.domain.empty() || n.op_type != "Gather" || GraphEditor::attr_int(n, "axis", 0) != 0) continue;
      const Value* v = n.inputs[0];
      const Initializer* w = quantizable_weight(e, v);
      if (!w || concat_of(w->weight->transforms)) continue;
      const int64_t vocab = (*v->shape)[0].value, dim = (*v->shape)[1].value;
      const std::string wname = v->name;
      const DataType dt = v->dtype;
      if (!done.count(wname)) {
        WeightRef ref = *w->weight;  // copied: new initializers may move w
        const std::optional<BlockQuantization> q = ctx.quantize->scheme_for(ref);
        if (!q) continue;  // --precision keep: not stored quantized, stays float
        if (dim % q->block_size != 0) continue;  // a padded block would not fit the op's layout
        e.set_scope(GraphEditor::scope_of(n));
        std::vector<Value*> head = quantized_like(g, ref, *q, dt);
        if (!head.empty()) {
          head[0] = e.add1("Reshape", {head[0], e.const_i64({vocab, dim * q->bits / 8}, {2})}, DataType::UINT8);
          head[0]->shape = Shape{vocab, dim * q->bits / 8};
          done[wname] = {*q, head};
        } else {
          done[wname] = {*q, add_quantized_weight(e, ref, wname + "_gather", dt, vocab, dim, *q, /*flat_data=*/true)};
        }
      }
      const auto& [q, quantized] = done[wname];
      const Node& node = g.nodes[i];
      std::vector<Value*> inputs{quantized[0], node.inputs[1]};
      for (size_t p = 1; p < quantized.size(); ++p) inputs.push_back(quantized[p]);
      e.set_scope(GraphEditor::scope_of(node));
      e.add("GatherBlockQuantized", inputs, {node.outputs[0]},
            {{"bits", int64_t{q.bits}}, {"block_size", q.block_size}, {"gather_axis", int64_t{0}},
             {"quantize_axis", int64_t{1}}},
            "com.microsoft");
      e.remove(i);
      ++rewrites;
    }
    e.commit();
    return rewrites;
  }
};

}  // namespace

std::unique_ptr<Pass> make_gather_block_quantized() { return std::make_unique<GatherBlockQuantized>(); }

}  // namespace mobius
