// skip_simplified_layer_norm: the residual add and the RMSNorm after it
//   s = Add(a, b);  y = RMSNormalization(s, gamma, axis=-1, epsilon)
//   → y, _, _, s = com.microsoft SkipSimplifiedLayerNormalization(a, b, gamma, epsilon)
// (contrib op SkipSimplifiedLayerNormalization: output = rmsnorm(input + skip) * gamma, 4th
// output input_skip_bias_sum = input + skip). The kernel needs input and skip of one shape and
// gamma of shape [hidden]: a and b must both be activations (no initializer, which could
// broadcast), gamma a 1-D weight or a 1-D weight shifted by a scalar (Gemma's 1 + weight), and
// the norm over the last axis computed in float32 (stash_type 1).
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace mobius {
namespace {

// True when `v` is a 1-D initializer, or one combined with a scalar constant.
bool is_vector(GraphEditor& e, Value* v) {
  if (e.initializer(v)) return v->shape && v->shape->size() == 1;
  for (const char* op : {"Add", "Sub", "Mul"}) {
    if (Node* n = e.producer_op(v, op)) {
      for (int i = 0; i < 2; ++i) {
        auto s = e.floats(n->inputs[1 - i]);
        if (s && s->size() == 1 && n->inputs[1 - i]->shape && n->inputs[1 - i]->shape->empty())
          return is_vector(e, n->inputs[i]);
      }
    }
  }
  return false;
}

class SkipSimplifiedLayerNorm : public Pass {
 public:
  const char* name() const override { return "skip_simplified_layer_norm"; }

  int run(Model& model, const PassContext&) const override {
    GraphEditor e(model);
    Graph& g = model.graph;
    int rewrites = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& norm = g.nodes[i];
      if (!norm.domain.empty() || norm.op_type != "RMSNormalization" || norm.inputs.size() != 2) continue;
      if (GraphEditor::attr_int(norm, "axis", -1) != -1 || GraphEditor::attr_int(norm, "stash_type", 1) != 1)
        continue;
      const DataType dt = norm.outputs[0]->dtype;
      if (dt != DataType::FLOAT && dt != DataType::FLOAT16 && dt != DataType::BFLOAT16) continue;
      Value* sum = norm.inputs[0];
      auto add_index = e.producer(sum);
      if (!add_index || e.removed(*add_index)) continue;
      Node& add = g.nodes[*add_index];
      if (!add.domain.empty() || add.op_type != "Add") continue;
      Value *a = add.inputs[0], *b = add.inputs[1];
      if (e.initializer(a) || e.initializer(b) || a->dtype != dt || b->dtype != dt) continue;
      if (!is_vector(e, norm.inputs[1])) continue;
      const float eps = GraphEditor::attr_float(norm, "epsilon").value_or(1e-5f);
      const bool sum_read = e.consumers(sum).size() > 1 || e.is_output(sum);
      std::vector<Value*> outs{norm.outputs[0]};
      if (sum_read) outs.insert(outs.end(), {nullptr, nullptr, sum});
      e.set_scope(GraphEditor::scope_of(norm));
      e.add("SkipSimplifiedLayerNormalization", {a, b, norm.inputs[1]}, outs, {{"epsilon", eps}},
            "com.microsoft");
      e.remove(i);
      e.remove(*add_index);
      ++rewrites;
    }
    e.commit();
    return rewrites;
  }
};

}  // namespace

std::unique_ptr<Pass> make_skip_simplified_layer_norm() {
  return std::make_unique<SkipSimplifiedLayerNorm>();
}

}  // namespace mobius
