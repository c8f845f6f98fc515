// group_query_attention: the canonical attention of a decoder layer
//   q4, k4, v4 [batch, seq, heads, head_dim] → Transpose(0, 2, 1, 3) → (q, k: RotaryEmbedding with
//   cos/sin [batch, seq, rotary_dim / 2]) → Attention(q, k, v, mask, past_key, past_value)
//   → Transpose(0, 2, 1, 3) → Reshape [0, 0, -1]
// → com.microsoft GroupQueryAttention(q, k, v [batch, seq, heads * head_dim], past_key,
//   past_value, seqlens_k, total_sequence_length, cos_cache, sin_cache, -, attention_bias = mask)
// (contrib op GroupQueryAttention, onnxruntime 1.31: BNSH caches, outputs y [batch, seq, hidden]
// and the present caches; past and present may share one buffer, past_present_share_buffer).
//
// Left padding. onnxruntime's CPU kernel reads seqlens_k[b] + 1 as the number of valid keys of
// row b counted from the left (right padding), and with do_rotary it rotates query i of row b at
// position seqlens_k[b] + 1 - seq + i (prompt: i). With sum(attention_mask) - 1 a left-padded row
// would attend its padding and miss its last tokens (measured: max|Δ| ~2 on the parity batch), so
// every row is given the full length: seqlens_k = total_sequence_length - 1, and the canonical
// additive mask (causal, padding, sliding window, ALiBi) goes in as attention_bias. Rotation then
// uses the key's index in the cache, not position_ids: a left-padded row is rotated PAD positions
// further than transformers rotates it, for queries and keys alike, which RoPE's scores do not
// see (they depend on position differences only). This holds for the static tables (default,
// linear, llama3, yarn); "dynamic" and "longrope" pick their frequencies from max(position_ids),
// so their RotaryEmbedding nodes stay outside (do_rotary 0), as they do for dml and for rotary
// parts onnxruntime rejects (rotary_dim / 2 not a multiple of 8).
//
// Conservative: the layer stays canonical unless the Attention has past and present caches (graph
// inputs [batch, kv_heads, past, head_dim]), no is_causal / qk output (softcap carries over), q,
// k and v are [batch, heads, seq, head_dim] (read as they are, or from [batch, seq, heads, head_dim]
// tensors through Transpose(0, 2, 1, 3), then maybe per-head RoPE, norms or scaling, which stay),
// its presents are only graph outputs (no other layer reads them), the Attention carries the head
// counts and size its block tagged (ir.h NodeTags), head sizes a multiple of 8 (onnxruntime's kernel requires it), and float or
// float16. Rotary goes inside only when q and k are rotated alike right before the Attention.
// GroupQueryAttention's causal masking is left on only when the mask is the decoder's causal mask
// (blocks/attention.h causal_mask); otherwise causal = 0 and the mask alone decides.
#include <cmath>
#include <cstring>
#include <map>

#include "passes/graph_edit.h"
#include "passes/passes.h"
#include "util/error.h"
#include "util/float16.h"

namespace mobius {
namespace {

struct RopeTable {
  std::vector<float> inv_freq;  // [rotary_dim / 2]
  float attention_factor = 1.0f;
  DataType dtype;
};

// cos = [Cast](Cos(f) [* af]), sin = [Cast](Sin(f) [* af]) with
// f = Unsqueeze(Cast(position_ids, float), -1) * inv_freq (blocks/rope.cpp rope_tables, static
// frequencies): the table as constants, or nullopt (dynamic frequencies, anything else).
std::optional<RopeTable> static_rope_table(GraphEditor& e, Value* cos, Value* sin) {
  RopeTable t{{}, 1.0f, cos->dtype};
  auto strip = [&](Value* v, const char* trig, float* af) -> Value* {
    if (Node* c = e.producer_op(v, "Cast")) v = c->inputs[0];
    if (Node* m = e.producer_op(v, "Mul")) {
      auto s = e.floats(m->inputs[1]);
      if (!s || s->size() != 1) return nullptr;
      *af = (*s)[0];
      v = m->inputs[0];
    }
    Node* f = e.producer_op(v, trig);
    return f ? f->inputs[0] : nullptr;
  };
  float af_cos = 1.0f, af_sin = 1.0f;
  Value* f = strip(cos, "Cos", &af_cos);
  if (!f || f != strip(sin, "Sin", &af_sin) || af_cos != af_sin || sin->dtype != cos->dtype) return std::nullopt;
  t.attention_factor = af_cos;
  Node* mul = e.producer_op(f, "Mul");
  if (!mul) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    auto inv = e.floats(mul->inputs[1 - i]);
    Node* unsq = e.producer_op(mul->inputs[i], "Unsqueeze");
    if (!inv || mul->inputs[1 - i]->dtype != DataType::FLOAT || !unsq) continue;
    auto axes = e.ints(unsq->inputs[1]);
    Node* cast = e.producer_op(unsq->inputs[0], "Cast");
    if (!axes || *axes != std::vector<int64_t>{-1} || !cast || cast->inputs[0]->name != "position_ids" ||
        GraphEditor::attr_int(*cast, "to", 0) != static_cast<int64_t>(DataType::FLOAT))
      continue;
    t.inv_freq = *inv;
    return t;
  }
  return std::nullopt;
}

// The packed projection P [batch, seq, (heads + 2 kv_heads) * head_dim] when q4, k4, v4 are
// Reshape(Split(P, [heads * d, kv * d, kv * d], axis -1)[j], [0, 0, n_j, d]) and P is a MatMul of a
// 2-D weight (passes/pack_matmuls.cpp), possibly plus a bias: GroupQueryAttention's packed query.
Value* packed_qkv(GraphEditor& e, Value* const x4[3], int64_t heads, int64_t kv, int64_t d) {
  Node* split = nullptr;
  for (int j = 0; j < 3; ++j) {
    Node* r = e.producer_op(x4[j], "Reshape");
    auto shape = r ? e.ints(r->inputs[1]) : std::nullopt;
    if (!shape || *shape != std::vector<int64_t>{0, 0, j ? kv : heads, d}) return nullptr;
    Node* s = e.producer_op(r->inputs[0], "Split");
    if (!s || (split && s != split) || s->outputs.size() != 3 || s->outputs[j] != r->inputs[0]) return nullptr;
    split = s;
  }
  auto sizes = split->inputs.size() == 2 ? e.ints(split->inputs[1]) : std::nullopt;
  if (GraphEditor::attr_int(*split, "axis", 0) != -1 || !sizes ||
      *sizes != std::vector<int64_t>{heads * d, kv * d, kv * d})
    return nullptr;
  Value* p = split->inputs[0];
  Value* mm = p;
  if (Node* add = e.producer_op(p, "Add")) mm = add->inputs[0];
  Node* matmul = e.producer_op(mm, "MatMul");
  const Initializer* w = matmul ? e.initializer(matmul->inputs[1]) : nullptr;
  return w && w->value->shape && w->value->shape->size() == 2 ? p : nullptr;
}

bool from_causal_mask(GraphEditor& e, Value* mask) {
  for (int step = 0; step < 8; ++step) {
    auto p = e.producer(mask);
    if (!p) return false;
    const Node& n = e.graph().nodes[*p];
    if (n.op_type == "Where") return n.name.find("causal_mask/") != std::string::npos;
    if (n.op_type != "Add") return false;  // + ALiBi bias: the causal part is the first operand
    mask = n.inputs[0];
  }
  return false;
}

std::vector<uint8_t> to_bytes(const std::vector<float>& v, DataType dt) {
  std::vector<uint8_t> out(v.size() * dtype_size(dt));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DataType::FLOAT) {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    } else {
      uint16_t h = f32_to_f16(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

class GroupQueryAttentionPass : public Pass {
 public:
  explicit GroupQueryAttentionPass(bool rotary_inside) : rotary_inside_(rotary_inside) {}
  const char* name() const override { return "group_query_attention"; }

  int run(Model& model, const PassContext& ctx) const override {
    GraphEditor e(model);
    Graph& g = model.graph;
    Value* mask_input = g.find_value("attention_mask");
    if (!mask_input) return 0;
    Value *seqlens_k = nullptr, *total = nullptr;
    std::map<Value*, std::pair<Value*, Value*>> caches;  // cos table value → (cos_cache, sin_cache)
    int rewrites = 0;
    const size_t n_nodes = g.nodes.size();
    for (size_t i = 0; i < n_nodes; ++i) {
      Node& att = g.nodes[i];
      if (!att.domain.empty() || att.op_type != "Attention") continue;
      if (att.inputs.size() != 6 || att.outputs.size() != 3) continue;
      bool plain = true;
      for (const Attribute& a : att.attributes)
        plain &= a.name == "scale" || a.name == "softcap" ||
                 (a.name == "is_causal" && std::get<int64_t>(a.value) == 0);
      if (!plain) continue;
      Value *q = att.inputs[0], *k = att.inputs[1], *v = att.inputs[2], *mask = att.inputs[3];
      Value *past_k = att.inputs[4], *past_v = att.inputs[5];
      const DataType dt = q->dtype;
      if ((dt != DataType::FLOAT && dt != DataType::FLOAT16) || !mask || mask->dtype != dt) continue;
      if (!past_k || !past_v || !mask || e.producer(past_k) || e.producer(past_v)) continue;
      // presents read by other layers (Gemma 4's KV-shared layers attend to them as the canonical
      // cache): the layer stays canonical; GroupQueryAttention's present is not that cache (its keys
      // are rotated by cache index, see above; lowered, Gemma 4's rows missed by max|Δ| ~2)
      if (!e.consumers(att.outputs[1]).empty() || !e.consumers(att.outputs[2]).empty()) continue;
      // heads and head size as the attention block tagged them (blocks/attention.cpp, moa.cpp);
      // an untagged Attention (MLA's) stays canonical, as one without cache inputs (an encoder's, a
      // cross-attention) did above
      const int64_t num_heads = att.tags.num_heads, kv_heads = att.tags.kv_num_heads, head_dim = att.tags.head_size;
      if (!num_heads || num_heads % kv_heads != 0) continue;
      if (head_dim % 8 != 0) continue;  // onnxruntime 1.31: "head_size must be a multiple of 8"

      // q, k, v: [RotaryEmbedding](Transpose(x4, 0 2 1 3)); otherwise (q/k norms after RoPE, a
      // query scale, ...) any [batch, heads, seq, head_dim] tensor, read as it is (rotary stays
      // where it is), whose head count a walk back to such a Transpose finds
      Node *rot[2] = {nullptr, nullptr};
      Value* x4[3] = {nullptr, nullptr, nullptr};
      for (int j = 0; j < 3; ++j) {
        Value* x = att.inputs[j];
        if (j < 2 && (rot[j] = e.producer_op(x, "RotaryEmbedding"))) x = rot[j]->inputs[0];
        Node* t = e.producer_op(x, "Transpose");
        if (t && GraphEditor::attr_ints(*t, "perm") == std::vector<int64_t>{0, 2, 1, 3}) x4[j] = t->inputs[0];
      }
      const bool direct = x4[0] && x4[1] && x4[2] && !rot[0] == !rot[1];
      if (!direct) rot[0] = rot[1] = nullptr;

      // rotary: inside (static table) or outside (the RotaryEmbedding nodes stay)
      std::optional<RopeTable> table;
      if (rot[0]) {
        const Node &rq = *rot[0], &rk = *rot[1];
        if (rq.inputs.size() != 3 || rk.inputs.size() != 3 || rq.inputs[1] != rk.inputs[1] ||
            rq.inputs[2] != rk.inputs[2] || rq.attributes.size() != rk.attributes.size())
          continue;
        const int64_t interleaved = GraphEditor::attr_int(rq, "interleaved", 0);
        const int64_t rdim = GraphEditor::attr_int(rq, "rotary_embedding_dim", 0);
        if (interleaved != GraphEditor::attr_int(rk, "interleaved", 0) ||
            rdim != GraphEditor::attr_int(rk, "rotary_embedding_dim", 0))
          continue;
        if (rotary_inside_) table = static_rope_table(e, rq.inputs[1], rq.inputs[2]);
        // onnxruntime 1.31 (group_query_attention_helper.h): "cos_cache dimension 1 must be <=
        // head_size / 2 and a multiple of 8"; a smaller rotary part is rotated outside
        const int64_t half = static_cast<int64_t>(table ? table->inv_freq.size() : 0);
        if (table && (half * 2 != (rdim ? rdim : head_dim) || half % 8 != 0)) table.reset();
        if (table && table->dtype != dt) table.reset();
      }
      e.set_scope(GraphEditor::scope_of(att));
      auto bsd = [&](Value* x, int64_t heads_n) {  // [b, s, h, d] → [b, s, h * d]
        return e.add1("Reshape", {x, e.const_i64({0, 0, heads_n * head_dim}, {3})}, dt);
      };
      auto bsd_from_bnsh = [&](Value* x, int64_t heads_n) {
        return bsd(e.add1("Transpose", {x}, dt, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}), heads_n);
      };
      Value *gq, *gk = nullptr, *gv = nullptr;
      if (!direct) {
        gq = bsd_from_bnsh(q, num_heads);
        gk = bsd_from_bnsh(k, kv_heads);
        gv = x4[2] ? bsd(x4[2], kv_heads) : bsd_from_bnsh(v, kv_heads);
      } else if (Value* packed = !rot[0] || table ? packed_qkv(e, x4, num_heads, kv_heads, head_dim) : nullptr) {
        gq = packed;  // key and value omitted: query holds all three
      } else if (!rot[0] || table) {
        gq = bsd(x4[0], num_heads);
        gk = bsd(x4[1], kv_heads);
      } else {
        gq = bsd_from_bnsh(q, num_heads);  // rotated outside
        gk = bsd_from_bnsh(k, kv_heads);
      }
      if (!gv && gk) gv = bsd(x4[2], kv_heads);

      e.set_scope("model");
      if (!seqlens_k) {  // once: total_sequence_length and seqlens_k from the attention mask
        const std::vector<Attribute> to32{{"to", static_cast<int64_t>(DataType::INT32)}};
        Value* total64 = e.add1("Shape", {mask_input}, DataType::INT64, {{"start", int64_t{1}}, {"end", int64_t{2}}});
        Value* batch = e.add1("Shape", {mask_input}, DataType::INT64, {{"start", int64_t{0}}, {"end", int64_t{1}}});
        total = e.new_value("total_sequence_length", DataType::INT32);
        e.add("Squeeze", {e.add1("Cast", {total64}, DataType::INT32, to32), e.const_i64({0}, {1})}, {total});
        Value* last = e.add1("Cast", {e.add1("Sub", {total64, e.const_i64({1}, {1})}, DataType::INT64)},
                             DataType::INT32, to32);
        seqlens_k = e.new_value("seqlens_k", DataType::INT32);
        e.add("Expand", {last, batch}, {seqlens_k});
      }
      e.set_scope(GraphEditor::scope_of(att));
      Value *cos_cache = nullptr, *sin_cache = nullptr;
      if (table) {
        Value* key = rot[0]->inputs[1];
        if (!caches.count(key)) caches[key] = make_caches(e, *table, ctx.max_sequence_length);
        std::tie(cos_cache, sin_cache) = caches[key];
      }
      const float scale = GraphEditor::attr_float(att, "scale")
                              .value_or(1.0f / std::sqrt(static_cast<float>(head_dim)));
      std::vector<Attribute> attrs{{"num_heads", num_heads}, {"kv_num_heads", kv_heads}, {"scale", scale}};
      if (table) {
        attrs.push_back({"do_rotary", int64_t{1}});
        if (GraphEditor::attr_int(*rot[0], "interleaved", 0)) attrs.push_back({"rotary_interleaved", int64_t{1}});
      }
      if (!from_causal_mask(e, mask)) attrs.push_back({"causal", int64_t{0}});
      if (auto softcap = GraphEditor::attr_float(att, "softcap"); softcap && *softcap != 0.0f)
        attrs.push_back({"softcap", *softcap});
      Value* y = e.new_value(att.name + "/GroupQueryAttention", dt);
      e.add("GroupQueryAttention",
            {gq, gk, gv, past_k, past_v, seqlens_k, total, cos_cache, sin_cache, nullptr, mask},
            {y, att.outputs[1], att.outputs[2]}, std::move(attrs), "com.microsoft");
      replace_attention_output(e, att.outputs[0], y, num_heads, head_dim);
      e.remove(i);
      ++rewrites;
    }
    e.commit();
    return rewrites;
  }

 private:
  // cos_cache / sin_cache [max_sequence_length, rotary_dim / 2]: cos(p * inv_freq) * af, computed
  // in float32 as the canonical graph computes it per position, then stored in the model dtype.
  // Both tables together may take kMaxCacheBytes in float32 (a 1M-token context with head_dim
  // 128 takes 512 MiB): a longer context is refused, naming the field it comes from.
  static constexpr int64_t kMaxCacheBytes = int64_t{2} << 30;
  static std::pair<Value*, Value*> make_caches(GraphEditor& e, const RopeTable& t, int64_t rows) {
    const int64_t half = static_cast<int64_t>(t.inv_freq.size());
    if (rows < 1 || rows > kMaxCacheBytes / 8 / std::max<int64_t>(half, 1))
      throw FieldError("field 'max_position_embeddings': a context of " + std::to_string(rows) + " positions needs " +
                       "GroupQueryAttention cos/sin caches over mobius' limit of 2 GiB; build with --ep default or "
                       "dml (RoPE computed per position at run time)");
    std::vector<float> c(static_cast<size_t>(rows * half)), s(c.size());
    for (int64_t p = 0; p < rows; ++p)
      for (int64_t i = 0; i < half; ++i) {
        const float f = static_cast<float>(p) * t.inv_freq[static_cast<size_t>(i)];
        c[static_cast<size_t>(p * half + i)] = std::cos(f) * t.attention_factor;
        s[static_cast<size_t>(p * half + i)] = std::sin(f) * t.attention_factor;
      }
    return {e.constant("cos_cache", t.dtype, {rows, half}, to_bytes(c, t.dtype)),
            e.constant("sin_cache", t.dtype, {rows, half}, to_bytes(s, t.dtype))};
  }

  bool rotary_inside_;
};

}  // namespace

std::unique_ptr<Pass> make_group_query_attention(bool rotary_inside) {
  return std::make_unique<GroupQueryAttentionPass>(rotary_inside);
}

}  // namespace mobius
