// Ops: one method per ONNX operator, spelled as in the ONNX spec (onnx/docs/Operators.md,
// default domain, opset 24). Attributes are passed as per-op structs with designated
// initializers: op.Softmax(x, {.axis = -1}). A numeric literal where a tensor is expected becomes
// a scalar constant of the other operand's dtype: op.Mul(x, 0.5).
#pragma once

#include <optional>
#include <vector>

#include "builder/builder.h"

namespace mobius {

// A tensor operand or a scalar literal (typed like the other operand).
struct In {
  Value* v = nullptr;
  double s = 0;
  In(Value* value) : v(value) {}  // NOLINT(google-explicit-constructor)
  In(double scalar) : s(scalar) {}  // NOLINT
  In(float scalar) : s(scalar) {}  // NOLINT
  In(int scalar) : s(scalar) {}  // NOLINT
};

struct TopKOutputs {
  Value* values;
  Value* indices;  // int64
};

struct AttentionOutputs {
  Value* y;
  Value* present_key = nullptr;
  Value* present_value = nullptr;
};

// Attributes of the ops below (names and defaults as in the ONNX spec).
struct GeluAttrs { const char* approximate = "none"; };
struct CastAttrs { DataType to; };
struct GemmAttrs { float alpha = 1.0f; float beta = 1.0f; int64_t transA = 0; int64_t transB = 0; };
struct GatherAttrs { int64_t axis = 0; };
struct TransposeAttrs { std::vector<int64_t> perm; };
struct ConcatAttrs { int64_t axis; };
struct SplitAttrs { int64_t axis = 0; };
struct ShapeAttrs { std::optional<int64_t> start; std::optional<int64_t> end; };
struct SoftmaxAttrs { int64_t axis = -1; };
struct ReduceAttrs { int64_t keepdims = 1; };
struct TopKAttrs { int64_t axis = -1; int64_t largest = 1; int64_t sorted = 1; };
struct ScatterElementsAttrs { int64_t axis = 0; };
struct CumSumAttrs { int64_t exclusive = 0; int64_t reverse = 0; };
struct NormAttrs { int64_t axis = -1; float epsilon = 1e-5f; };
struct RotaryEmbeddingAttrs { int64_t interleaved = 0; int64_t rotary_embedding_dim = 0; };
// Conv attributes; an empty list or group 1: the operator's default (kernel_shape from w).
struct ConvAttrs { std::vector<int64_t> kernel_shape; std::vector<int64_t> strides; std::vector<int64_t> pads; int64_t group = 1; };
// Scan attributes besides the body: the scan inputs' and outputs' iterated axes (empty: axis 0).
struct ScanAttrs { int64_t num_scan_inputs; std::vector<int64_t> scan_input_axes; std::vector<int64_t> scan_output_axes; };
// Resize attributes (torch's F.interpolate(mode="nearest"): each output pixel takes the input pixel
// floor(out_index * in_size / out_size)).
struct ResizeAttrs { const char* mode = "nearest"; const char* coordinate_transformation_mode = "asymmetric"; const char* nearest_mode = "floor"; };
struct AttentionAttrs { std::optional<float> scale; float softcap = 0.0f; int64_t is_causal = 0; };

class Ops {
 public:
  explicit Ops(GraphBuilder& b) : b_(b) {}
  GraphBuilder& builder() { return b_; }

  // Element-wise binary (numpy broadcasting).
  Value* Add(In a, In b);
  Value* Sub(In a, In b);
  Value* Mul(In a, In b);
  Value* Div(In a, In b);
  Value* Pow(In a, In b);
  Value* Max(In a, In b);
  Value* Min(In a, In b);
  Value* Equal(In a, In b);
  Value* Less(In a, In b);
  Value* LessOrEqual(In a, In b);
  Value* Greater(In a, In b);
  Value* GreaterOrEqual(In a, In b);
  Value* And(Value* a, Value* b);
  Value* Or(Value* a, Value* b);
  Value* Not(Value* a);
  // Integer element-wise (numpy broadcasting): BitwiseXor (opset 18); Mod (opset 13, fmod 0: the
  // remainder takes the divisor's sign, as torch.remainder).
  Value* BitwiseXor(Value* a, Value* b);
  Value* Mod(Value* a, Value* b);

  // Element-wise unary.
  Value* Neg(Value* x);
  Value* Sqrt(Value* x);
  Value* Reciprocal(Value* x);
  Value* Exp(Value* x);
  Value* Log(Value* x);
  Value* Tanh(Value* x);
  Value* Sigmoid(Value* x);
  Value* Erf(Value* x);
  Value* Cos(Value* x);
  Value* Sin(Value* x);
  Value* Relu(Value* x);
  Value* Softplus(Value* x);
  Value* Abs(Value* x);
  Value* Floor(Value* x);
  Value* Sign(Value* x);
  Value* Identity(Value* x);
  Value* Gelu(Value* x, GeluAttrs a = {});

  Value* Cast(Value* x, CastAttrs a);
  Value* CastLike(Value* x, Value* like);

  Value* MatMul(Value* a, Value* b);
  Value* Gemm(Value* a, Value* b, Value* c = nullptr, GemmAttrs attrs = {});
  // Conv (opset 22, auto_pad NOTSET, dilations 1): x [batch, in_channels, *spatial], w [out_channels,
  // in_channels / group, *kernel_shape], b [out_channels] or null; pads [begin..., end...].
  Value* Conv(Value* x, Value* w, Value* b, ConvAttrs a = {});

  // Resize (opset 19) of x to `sizes` (int64 [rank of x], the output's full shape), no roi or
  // scales; ResizeAttrs' defaults: nearest neighbour as torch's F.interpolate(mode="nearest").
  Value* Resize(Value* x, Value* sizes, ResizeAttrs a = {});

  Value* Gather(Value* data, Value* indices, GatherAttrs a = {});
  // GatherElements (opset 13): out[..., i, ...] = data[..., indices[..., i, ...], ...] along
  // `axis` (GatherAttrs::axis); indices int64 of the same rank as data; out has indices' shape.
  Value* GatherElements(Value* data, Value* indices, GatherAttrs a = {});
  Value* Reshape(Value* x, Value* shape);
  Value* Reshape(Value* x, const std::vector<int64_t>& shape) { return Reshape(x, b_.ints(shape)); }
  Value* Transpose(Value* x, TransposeAttrs a);
  Value* Unsqueeze(Value* x, const std::vector<int64_t>& axes);
  Value* Squeeze(Value* x, const std::vector<int64_t>& axes);
  Value* Concat(std::vector<Value*> xs, ConcatAttrs a);
  // Split (opset 18) into pieces of the given sizes along `axis`; one output per size.
  std::vector<Value*> Split(Value* x, const std::vector<int64_t>& sizes, SplitAttrs a);
  // Slice along `axes` with int64 tensors or constants for starts/ends.
  Value* Slice(Value* x, Value* starts, Value* ends, Value* axes = nullptr, Value* steps = nullptr);
  Value* Slice(Value* x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
               const std::vector<int64_t>& axes);
  Value* Shape(Value* x, ShapeAttrs a = {});
  Value* Where(Value* cond, In a, In b);
  Value* Range(In start, In limit, In delta);
  Value* Expand(Value* x, Value* shape);
  Value* Softmax(Value* x, SoftmaxAttrs a = {});
  Value* ReduceMean(Value* x, const std::vector<int64_t>& axes, ReduceAttrs a = {});
  Value* ReduceMax(Value* x, const std::vector<int64_t>& axes, ReduceAttrs a = {});
  Value* ReduceSum(Value* x, const std::vector<int64_t>& axes, ReduceAttrs a = {});
  Value* CumSum(Value* x, Value* axis, CumSumAttrs a = {});
  // TopK (opset 11): the k largest (or smallest) entries along `axis` and their int64 indices.
  TopKOutputs TopK(Value* x, int64_t k, TopKAttrs a = {});
  // ... with k an int64 [1] tensor computed in the graph (at most the axis' size).
  TopKOutputs TopK(Value* x, Value* k, TopKAttrs a = {});
  // ScatterElements (opset 18, no reduction): data with data[..., indices[i], ...] = updates[i]
  // along `axis`; indices int64, same rank as data, same shape as updates.
  Value* ScatterElements(Value* data, Value* indices, Value* updates, ScatterElementsAttrs a = {});

  // Normalizations (opset 17 LayerNormalization, opset 23 RMSNormalization): normalize over the
  // trailing axes from `axis` on, computed in float32 (stash_type 1).
  Value* LayerNormalization(Value* x, Value* scale, Value* bias, NormAttrs a);
  Value* RMSNormalization(Value* x, Value* scale, NormAttrs a);
  // InstanceNormalization (opset 6): x [N, C, ...] normalized over the spatial axes per (n, c),
  // then * scale[c] + bias[c] (torch GroupNorm with num_groups = C). NormAttrs::axis is unused.
  Value* InstanceNormalization(Value* x, Value* scale, Value* bias, NormAttrs a);

  // RotaryEmbedding (opset 23). x: [batch, num_heads, seq, head_dim]; cos/sin:
  // [batch, seq, rotary_embedding_dim / 2] (no position_ids input).
  Value* RotaryEmbedding(Value* x, Value* cos, Value* sin, RotaryEmbeddingAttrs a = {});

  // Attention (opset 23/24). q: [batch, q_heads, seq, head_dim]; k, v: [batch, kv_heads, seq,
  // head_dim]; attn_mask: additive float mask broadcastable to [batch, q_heads, seq, total];
  // past_key/past_value: [batch, kv_heads, past, head_dim]. Returns Y and the present caches;
  // with past_key and past_value both null the node has no cache inputs or outputs and
  // present_key/present_value are null.
  AttentionOutputs Attention(Value* q, Value* k, Value* v, Value* attn_mask, Value* past_key,
                             Value* past_value, AttentionAttrs a = {});

  // Scan (opset 21+): `inputs` are the N initial states then the a.num_scan_inputs sequences;
  // `body` (a self-contained graph, ir.h AttributeValue) maps N states and one slice of each
  // sequence to N states and K per-step outputs. Returns the N final states then the K stacked
  // outputs, in the dtypes of body's outputs.
  std::vector<Value*> Scan(std::vector<Value*> inputs, std::shared_ptr<const Graph> body, ScanAttrs a);

 private:
  Value* unary(const char* op, Value* x);
  Value* binary(const char* op, In a, In b, bool to_bool = false);
  Value* reduce(const char* op, Value* x, const std::vector<int64_t>& axes, ReduceAttrs a);
  Value* operand(const In& in, DataType like);
  Value* one(const char* op, std::vector<Value*> in, std::vector<Attribute> attrs, DataType out);
  GraphBuilder& b_;
};

}  // namespace mobius
