#include "builder/ops.h"

#include "util/error.h"

namespace mobius {

Value* Ops::one(const char* op, std::vector<Value*> in, std::vector<Attribute> attrs,
                DataType out) {
  return b_.add_node(op, std::move(in), std::move(attrs), {out})[0];
}

Value* Ops::operand(const In& in, DataType like) {
  if (in.v) return in.v;
  MOBIUS_ASSERT(like != DataType::UNDEFINED, "scalar operand needs a typed tensor operand");
  if (is_float(like)) return b_.constant_float({static_cast<float>(in.s)}, {}, like);
  MOBIUS_ASSERT(like == DataType::INT64, "scalar operand of dtype " + dtype_name(like));
  return b_.scalar_i64(static_cast<int64_t>(in.s));
}

Value* Ops::binary(const char* op, In a, In b, bool to_bool) {
  MOBIUS_ASSERT(a.v || b.v, std::string(op) + " of two scalars");
  DataType t = a.v ? a.v->dtype : b.v->dtype;
  return one(op, {operand(a, t), operand(b, t)}, {}, to_bool ? DataType::BOOL : t);
}

Value* Ops::unary(const char* op, Value* x) { return one(op, {x}, {}, x->dtype); }

Value* Ops::Add(In a, In b) { return binary("Add", a, b); }
Value* Ops::Sub(In a, In b) { return binary("Sub", a, b); }
Value* Ops::Mul(In a, In b) { return binary("Mul", a, b); }
Value* Ops::Div(In a, In b) { return binary("Div", a, b); }
Value* Ops::Pow(In a, In b) { return binary("Pow", a, b); }
Value* Ops::Max(In a, In b) { return binary("Max", a, b); }
Value* Ops::Min(In a, In b) { return binary("Min", a, b); }
Value* Ops::Equal(In a, In b) { return binary("Equal", a, b, true); }
Value* Ops::Less(In a, In b) { return binary("Less", a, b, true); }
Value* Ops::LessOrEqual(In a, In b) { return binary("LessOrEqual", a, b, true); }
Value* Ops::Greater(In a, In b) { return binary("Greater", a, b, true); }
Value* Ops::GreaterOrEqual(In a, In b) { return binary("GreaterOrEqual", a, b, true); }
Value* Ops::And(Value* a, Value* b) { return one("And", {a, b}, {}, DataType::BOOL); }
Value* Ops::Or(Value* a, Value* b) { return one("Or", {a, b}, {}, DataType::BOOL); }
Value* Ops::Not(Value* a) { return one("Not", {a}, {}, DataType::BOOL); }
Value* Ops::BitwiseXor(Value* a, Value* b) { return one("BitwiseXor", {a, b}, {}, a->dtype); }
Value* Ops::Mod(Value* a, Value* b) { return one("Mod", {a, b}, {}, a->dtype); }

Value* Ops::Neg(Value* x) { return unary("Neg", x); }
Value* Ops::Sqrt(Value* x) { return unary("Sqrt", x); }
Value* Ops::Reciprocal(Value* x) { return unary("Reciprocal", x); }
Value* Ops::Exp(Value* x) { return unary("Exp", x); }
Value* Ops::Log(Value* x) { return unary("Log", x); }
Value* Ops::Tanh(Value* x) { return unary("Tanh", x); }
Value* Ops::Sigmoid(Value* x) { return unary("Sigmoid", x); }
Value* Ops::Erf(Value* x) { return unary("Erf", x); }
Value* Ops::Cos(Value* x) { return unary("Cos", x); }
Value* Ops::Sin(Value* x) { return unary("Sin", x); }
Value* Ops::Relu(Value* x) { return unary("Relu", x); }
Value* Ops::Softplus(Value* x) { return unary("Softplus", x); }
Value* Ops::Abs(Value* x) { return unary("Abs", x); }
Value* Ops::Floor(Value* x) { return unary("Floor", x); }
Value* Ops::Sign(Value* x) { return unary("Sign", x); }
Value* Ops::Identity(Value* x) { return unary("Identity", x); }
Value* Ops::Gelu(Value* x, GeluAttrs a) {
  return one("Gelu", {x}, {{"approximate", std::string(a.approximate)}}, x->dtype);
}

Value* Ops::Cast(Value* x, CastAttrs a) {
  return one("Cast", {x}, {{"to", static_cast<int64_t>(a.to)}}, a.to);
}
Value* Ops::CastLike(Value* x, Value* like) { return one("CastLike", {x, like}, {}, like->dtype); }

Value* Ops::MatMul(Value* a, Value* b) { return one("MatMul", {a, b}, {}, a->dtype); }
Value* Ops::Gemm(Value* a, Value* b, Value* c, GemmAttrs g) {
  std::vector<Value*> in{a, b};
  if (c) in.push_back(c);
  return one("Gemm", in,
             {{"alpha", g.alpha}, {"beta", g.beta}, {"transA", g.transA}, {"transB", g.transB}},
             a->dtype);
}

Value* Ops::Conv(Value* x, Value* w, Value* b, ConvAttrs a) {
  std::vector<Value*> in{x, w};
  if (b) in.push_back(b);
  std::vector<Attribute> attrs;
  if (!a.kernel_shape.empty()) attrs.push_back({"kernel_shape", a.kernel_shape});
  if (!a.strides.empty()) attrs.push_back({"strides", a.strides});
  if (!a.pads.empty()) attrs.push_back({"pads", a.pads});
  if (a.group != 1) attrs.push_back({"group", a.group});
  return one("Conv", in, std::move(attrs), x->dtype);
}

Value* Ops::Resize(Value* x, Value* sizes, ResizeAttrs a) {
  return one("Resize", {x, nullptr, nullptr, sizes},
             {{"mode", std::string(a.mode)},
              {"coordinate_transformation_mode", std::string(a.coordinate_transformation_mode)},
              {"nearest_mode", std::string(a.nearest_mode)}},
             x->dtype);
}

Value* Ops::Gather(Value* data, Value* indices, GatherAttrs a) {
  return one("Gather", {data, indices}, {{"axis", a.axis}}, data->dtype);
}
Value* Ops::GatherElements(Value* data, Value* indices, GatherAttrs a) {
  return one("GatherElements", {data, indices}, {{"axis", a.axis}}, data->dtype);
}
Value* Ops::Reshape(Value* x, Value* shape) { return one("Reshape", {x, shape}, {}, x->dtype); }
Value* Ops::Transpose(Value* x, TransposeAttrs a) {
  return one("Transpose", {x}, {{"perm", a.perm}}, x->dtype);
}
Value* Ops::Unsqueeze(Value* x, const std::vector<int64_t>& axes) {
  return one("Unsqueeze", {x, b_.ints(axes)}, {}, x->dtype);
}
Value* Ops::Squeeze(Value* x, const std::vector<int64_t>& axes) {
  return one("Squeeze", {x, b_.ints(axes)}, {}, x->dtype);
}
Value* Ops::Concat(std::vector<Value*> xs, ConcatAttrs a) {
  DataType t = xs.at(0)->dtype;
  return one("Concat", std::move(xs), {{"axis", a.axis}}, t);
}
std::vector<Value*> Ops::Split(Value* x, const std::vector<int64_t>& sizes, SplitAttrs a) {
  return b_.add_node("Split", {x, b_.ints(sizes)}, {{"axis", a.axis}},
                     std::vector<DataType>(sizes.size(), x->dtype));
}
Value* Ops::Slice(Value* x, Value* starts, Value* ends, Value* axes, Value* steps) {
  std::vector<Value*> in{x, starts, ends};
  if (axes || steps) in.push_back(axes);
  if (steps) in.push_back(steps);
  return one("Slice", in, {}, x->dtype);
}
Value* Ops::Slice(Value* x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                  const std::vector<int64_t>& axes) {
  return Slice(x, b_.ints(starts), b_.ints(ends), b_.ints(axes));
}
Value* Ops::Shape(Value* x, ShapeAttrs a) {
  std::vector<Attribute> attrs;
  if (a.start) attrs.push_back({"start", *a.start});
  if (a.end) attrs.push_back({"end", *a.end});
  return one("Shape", {x}, std::move(attrs), DataType::INT64);
}
Value* Ops::Where(Value* cond, In a, In b) {
  MOBIUS_ASSERT(a.v || b.v, "Where of two scalars");
  DataType t = a.v ? a.v->dtype : b.v->dtype;
  return one("Where", {cond, operand(a, t), operand(b, t)}, {}, t);
}
Value* Ops::Range(In start, In limit, In delta) {
  DataType t = start.v ? start.v->dtype : limit.v ? limit.v->dtype : DataType::INT64;
  return one("Range", {operand(start, t), operand(limit, t), operand(delta, t)}, {}, t);
}
Value* Ops::Expand(Value* x, Value* shape) { return one("Expand", {x, shape}, {}, x->dtype); }
Value* Ops::Softmax(Value* x, SoftmaxAttrs a) {
  return one("Softmax", {x}, {{"axis", a.axis}}, x->dtype);
}
Value* Ops::reduce(const char* op, Value* x, const std::vector<int64_t>& axes, ReduceAttrs a) {
  return one(op, {x, b_.ints(axes)}, {{"keepdims", a.keepdims}}, x->dtype);
}
Value* Ops::ReduceMean(Value* x, const std::vector<int64_t>& axes, ReduceAttrs a) {
  return reduce("ReduceMean", x, axes, a);
}
Value* Ops::ReduceMax(Value* x, const std::vector<int64_t>& axes, ReduceAttrs a) {
  return reduce("ReduceMax", x, axes, a);
}
Value* Ops::ReduceSum(Value* x, const std::vector<int64_t>& axes, ReduceAttrs a) {
  return reduce("ReduceSum", x, axes, a);
}
std::vector<Value*> Ops::Scan(std::vector<Value*> inputs, std::shared_ptr<const Graph> body, ScanAttrs a) {
  MOBIUS_ASSERT(body->inputs.size() == inputs.size(), "Scan: one body input per input");
  std::vector<DataType> out;
  for (const Value* v : body->outputs) out.push_back(v->dtype);
  std::vector<Attribute> attrs{{"body", std::move(body)}, {"num_scan_inputs", a.num_scan_inputs}};
  if (!a.scan_input_axes.empty()) attrs.push_back({"scan_input_axes", a.scan_input_axes});
  if (!a.scan_output_axes.empty()) attrs.push_back({"scan_output_axes", a.scan_output_axes});
  return b_.add_node("Scan", std::move(inputs), std::move(attrs), out);
}
Value* Ops::CumSum(Value* x, Value* axis, CumSumAttrs a) {
  return one("CumSum", {x, axis}, {{"exclusive", a.exclusive}, {"reverse", a.reverse}}, x->dtype);
}
TopKOutputs Ops::TopK(Value* x, int64_t k, TopKAttrs a) { return TopK(x, b_.ints({k}), a); }
TopKOutputs Ops::TopK(Value* x, Value* k, TopKAttrs a) {
  auto outs = b_.add_node("TopK", {x, k},
                          {{"axis", a.axis}, {"largest", a.largest}, {"sorted", a.sorted}},
                          {x->dtype, DataType::INT64});
  return {outs[0], outs[1]};
}
Value* Ops::ScatterElements(Value* data, Value* indices, Value* updates, ScatterElementsAttrs a) {
  return one("ScatterElements", {data, indices, updates}, {{"axis", a.axis}}, data->dtype);
}

Value* Ops::InstanceNormalization(Value* x, Value* scale, Value* bias, NormAttrs a) {
  return one("InstanceNormalization", {x, scale, bias}, {{"epsilon", a.epsilon}}, x->dtype);
}
Value* Ops::LayerNormalization(Value* x, Value* scale, Value* bias, NormAttrs a) {
  std::vector<Value*> in{x, scale};
  if (bias) in.push_back(bias);
  return one("LayerNormalization", in, {{"axis", a.axis}, {"epsilon", a.epsilon}}, x->dtype);
}
Value* Ops::RMSNormalization(Value* x, Value* scale, NormAttrs a) {
  return one("RMSNormalization", {x, scale}, {{"axis", a.axis}, {"epsilon", a.epsilon}}, x->dtype);
}

Value* Ops::RotaryEmbedding(Value* x, Value* cos, Value* sin, RotaryEmbeddingAttrs a) {
  std::vector<Attribute> attrs{{"interleaved", a.interleaved}};
  if (a.rotary_embedding_dim) attrs.push_back({"rotary_embedding_dim", a.rotary_embedding_dim});
  return one("RotaryEmbedding", {x, cos, sin}, std::move(attrs), x->dtype);
}

AttentionOutputs Ops::Attention(Value* q, Value* k, Value* v, Value* attn_mask, Value* past_key,
                                Value* past_value, AttentionAttrs a) {
  std::vector<Attribute> attrs{{"is_causal", a.is_causal}};
  if (a.scale) attrs.push_back({"scale", *a.scale});
  if (a.softcap != 0.0f) attrs.push_back({"softcap", a.softcap});
  MOBIUS_ASSERT(!past_key == !past_value, "Attention: past_key and past_value go together");
  if (!past_key)
    return {b_.add_node("Attention", {q, k, v, attn_mask}, std::move(attrs), {q->dtype})[0]};
  auto outs = b_.add_node("Attention", {q, k, v, attn_mask, past_key, past_value},
                          std::move(attrs), {q->dtype, k->dtype, v->dtype});
  return {outs[0], outs[1], outs[2]};
}

}  // namespace mobius
