// multi_head_attention: the canonical attention of an encoder, seq2seq or speech graph
//   q, k, v [batch, heads, seq, head_dim] (each maybe Transpose(0, 2, 1, 3) of [batch, seq, heads,
//   head_dim]) → Attention(q, k, v, mask[, past_key, past_value]) → y [batch, heads, seq, head_dim]
// → com.microsoft MultiHeadAttention(query [batch, seq, heads * head_dim], key, value, -, -,
//   attention_bias = mask[, past_key, past_value]) → y [batch, seq, heads * head_dim][, present_key,
//   present_value]
// (contrib op MultiHeadAttention, onnxruntime 1.31, onnxruntime/core/graph/contrib_ops/bert_defs.cc;
// CPU kernel contrib_ops/cpu/bert/multihead_attention.cc). Key and value are [batch, kv_seq,
// heads * head_dim] (then past_key / past_value [batch, heads, past, head_dim] are concatenated in
// front, as the ONNX Attention does, into the present outputs), or, without a past, already
// [batch, heads, kv_seq, head_dim] (the cross-attention keys and values a seq2seq or speech decoder
// reads from its cache inputs: format Q_K_V_BSNH_BNSH_BNSH). attention_bias is the canonical
// additive mask, [batch or 1, 1 or heads, seq, total_seq] (blocks/attention.h: the query axis is
// expanded for onnxruntime's Attention kernel already); the kernel adds it to the scaled scores
// and takes the softmax in float32, as the ONNX Attention's CPU kernel does.
//
// Conservative: the node stays canonical unless its block tagged the head counts and size
// (ir.h NodeTags) with as many key/value heads as query heads (MultiHeadAttention has one head
// count), it has no is_causal, softcap or qk output, its dtype is float or float16 (the CPU
// kernel's types) with a mask of the same dtype, and a present output is read only with a past.
#include <cmath>

#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace mobius {
namespace {

class MultiHeadAttentionPass : public Pass {
 public:
  const char* name() const override { return "multi_head_attention"; }

  int run(Model& model, const PassContext&) const override {
    GraphEditor e(model);
    Graph& g = model.graph;
    int rewrites = 0;
    const size_t n_nodes = g.nodes.size();
    for (size_t i = 0; i < n_nodes; ++i) {
      Node& att = g.nodes[i];
      if (!att.domain.empty() || att.op_type != "Attention" || att.inputs.size() < 3) continue;
      bool plain = true;
      for (const Attribute& a : att.attributes)
        plain &= a.name == "scale" || (a.name == "is_causal" && std::get<int64_t>(a.value) == 0);
      if (!plain || (att.outputs.size() > 3 && att.outputs[3])) continue;
      const int64_t heads = att.tags.num_heads, d = att.tags.head_size;
      if (!heads || !d || att.tags.kv_num_heads != heads) continue;
      auto input = [&](size_t j) { return j < att.inputs.size() ? att.inputs[j] : nullptr; };
      Value *q = att.inputs[0], *k = att.inputs[1], *v = att.inputs[2], *mask = input(3);
      Value *past_k = input(4), *past_v = input(5);
      const DataType dt = q->dtype;
      if ((dt != DataType::FLOAT && dt != DataType::FLOAT16) || (mask && mask->dtype != dt)) continue;
      if (!past_k != !past_v) continue;
      bool present_read = false;
      for (size_t j = 1; j < att.outputs.size() && j < 3; ++j)
        present_read |= att.outputs[j] && (!e.consumers(att.outputs[j]).empty() || e.is_output(att.outputs[j]));
      if (present_read && !past_k) continue;

      // [batch, seq, heads, head_dim] under the Transpose(0, 2, 1, 3) that made x, or null
      auto bsnh = [&](Value* x) -> Value* {
        Node* t = e.producer_op(x, "Transpose");
        return t && GraphEditor::attr_ints(*t, "perm") == std::vector<int64_t>{0, 2, 1, 3} ? t->inputs[0] : nullptr;
      };
      e.set_scope(GraphEditor::scope_of(att));
      auto flat = [&](Value* x) -> Value* {  // [b, h, s, d] → [b, s, h * d]
        Value* x4 = bsnh(x);
        if (!x4) x4 = e.add1("Transpose", {x}, dt, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
        return e.add1("Reshape", {x4, e.const_i64({0, 0, heads * d}, {3})}, dt);
      };
      Value* query = flat(q);
      const bool kv_as_is = !past_k && !(bsnh(k) && bsnh(v));  // a cache tensor [b, h, kv_seq, d]
      Value* key = kv_as_is ? k : flat(k);
      Value* value = kv_as_is ? v : flat(v);
      const float scale = GraphEditor::attr_float(att, "scale").value_or(1.0f / std::sqrt(static_cast<float>(d)));
      std::vector<Value*> inputs{query, key, value, nullptr, nullptr, mask, past_k, past_v};
      while (!inputs.back()) inputs.pop_back();
      Value* y = e.new_value(att.name + "/MultiHeadAttention", dt);
      std::vector<Value*> outputs{y};
      if (past_k) outputs.insert(outputs.end(), {input_or_null(att.outputs, 1), input_or_null(att.outputs, 2)});
      e.add("MultiHeadAttention", inputs, outputs, {{"num_heads", heads}, {"scale", scale}}, "com.microsoft").tags =
          att.tags;
      replace_attention_output(e, att.outputs[0], y, heads, d);
      e.remove(i);
      ++rewrites;
    }
    e.commit();
    return rewrites;
  }

 private:
  static Value* input_or_null(const std::vector<Value*>& values, size_t j) {
    return j < values.size() ? values[j] : nullptr;
  }
};

}  // namespace

std::unique_ptr<Pass> make_multi_head_attention() { return std::make_unique<MultiHeadAttentionPass>(); }

}  // namespace mobius
