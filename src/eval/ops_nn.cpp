// Linear algebra and the LLM ops: MatMul, Gemm, RMSNormalization (opset 23), RotaryEmbedding
// (opset 23), Attention (opset 23/24), and the mixture-of-experts router's Softmax (opset 13) and
// TopK (opset 11). Float32 only; the semantics follow onnx/docs/Operators.md
// and its executable form onnx/reference/ops/op_{attention,rotary_embedding,rms_normalization}.py.
#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/op_util.h"

namespace mobius::eval {
namespace {

// C[M, N] += A[M, K] * B[K, N], row-major. Columns go in blocks so that each row of B is read
// once per block for all M rows (B is the weight, A a few tokens); every C[i, j] sums over k in
// order, so a row's result does not depend on M.
void gemm_nn(const float* A, const float* B, float* C, int64_t M, int64_t K, int64_t N) {
  constexpr int64_t kBlock = 512;
  for (int64_t j0 = 0; j0 < N; j0 += kBlock) {
    const int64_t j1 = std::min(N, j0 + kBlock);
    for (int64_t k = 0; k < K; ++k) {
      const float* b = B + k * N;
      for (int64_t i = 0; i < M; ++i) {
        const float a = A[i * K + k];
        float* c = C + i * N;
        for (int64_t j = j0; j < j1; ++j) c[j] += a * b[j];
      }
    }
  }
}

// MatMul (opset 13): numpy.matmul, batch axes broadcast; a 1-D operand gets a unit axis that is
// removed from the result.
Outputs MatMul(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& a = float_input(in, 0);
  const Tensor& b = float_input(in, 1);
  if (a.shape.empty() || b.shape.empty()) throw Error("MatMul of a scalar");
  Shape as = a.shape, bs = b.shape;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K) throw Error("shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) + " do not multiply");
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch);
  Shape shape = batch;
  if (!a_vec) shape.push_back(M);
  if (!b_vec) shape.push_back(N);
  Tensor out = Tensor::zeros(DataType::FLOAT, shape);
  // strides in units of whole matrices
  for_each_index<2>(batch, {broadcast_strides(a_batch, batch), broadcast_strides(b_batch, batch)},
                    [&](int64_t k, const std::array<int64_t, 2>& o) {
                      gemm_nn(a.floats() + o[0] * M * K, b.floats() + o[1] * K * N, out.f.data() + k * M * N, M, K, N);
                    });
  return {std::move(out)};
}

// Gemm (opset 13): Y = alpha * A' B' + beta * C with A' = transA ? A^T : A (B' alike); C
// broadcasts to [M, N].
Outputs Gemm(const onnx::NodeProto& n, const Inputs& in) {
  Tensor a = float_input(in, 0);
  const Tensor& b = float_input(in, 1);
  if (a.shape.size() != 2 || b.shape.size() != 2) throw Error("A and B must be 2-D");
  if (attr_int(n, "transA", 0)) a = op_table().at("Transpose")(onnx::NodeProto{}, {&a})[0];  // no perm: reversed
  const bool tb = attr_int(n, "transB", 0) != 0;
  const int64_t M = a.shape[0], K = a.shape[1], N = tb ? b.shape[0] : b.shape[1];
  if ((tb ? b.shape[1] : b.shape[0]) != K) throw Error("shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) + " do not multiply");
  Tensor out = Tensor::zeros(DataType::FLOAT, {M, N});
  if (tb) {  // rows of B are the columns of B': dot products
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const float* x = a.floats() + i * K;
        const float* w = b.floats() + j * K;
        float s = 0.0f;
        for (int64_t k = 0; k < K; ++k) s += x[k] * w[k];
        out.f[i * N + j] = s;
      }
  } else {
    gemm_nn(a.floats(), b.floats(), out.f.data(), M, K, N);
  }
  const float alpha = attr_float(n, "alpha", 1.0f), beta = attr_float(n, "beta", 1.0f);
  for (float& v : out.f) v *= alpha;
  if (const Tensor* c = optional_input(in, 2)) {
    const Shape st = broadcast_strides(c->shape, out.shape);
    for_each_index<1>(out.shape, {st}, [&](int64_t k, const std::array<int64_t, 1>& o) { out.f[k] += beta * c->floats()[o[0]]; });
  }
  return {std::move(out)};
}

// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over axes axis..) + epsilon) * scale, scale
// broadcast against X; the mean is computed in double (stash_type 1 asks for at least float).
Outputs RMSNormalization(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& x = float_input(in, 0);
  const Tensor& scale = float_input(in, 1);
  if (attr_int(n, "stash_type", 1) != 1) throw Error("stash_type other than 1 is not implemented");
  const auto rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = normalize_axis(attr_int(n, "axis", -1), rank);
  const double eps = attr_float(n, "epsilon", 1e-5f);
  const int64_t inner = numel(Shape(x.shape.begin() + axis, x.shape.end()));
  Tensor normed = Tensor::zeros(DataType::FLOAT, x.shape);
  for (int64_t o = 0; o * inner < x.numel(); ++o) {
    const float* row = x.floats() + o * inner;
    double ss = 0.0;
    for (int64_t k = 0; k < inner; ++k) ss += static_cast<double>(row[k]) * row[k];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(inner) + eps);
    for (int64_t k = 0; k < inner; ++k) normed.f[o * inner + k] = static_cast<float>(row[k] * inv);
  }
  if (broadcast_shapes(x.shape, scale.shape) != x.shape)
    throw Error("scale " + shape_str(scale.shape) + " does not broadcast to X " + shape_str(x.shape));
  return op_table().at("Mul")(n, {&normed, &scale});
}

// RotaryEmbedding (opset 23), 4-D input [batch, heads, seq, head_size]. cos/sin: [batch, seq,
// rotary_dim / 2], or [max_position, rotary_dim / 2] indexed by position_ids [batch, seq].
// Non-interleaved: the halves x1 = x[:rd/2], x2 = x[rd/2:rd]; interleaved: x[0::2], x[1::2].
// real = cos x1 - sin x2, imag = sin x1 + cos x2; dims past rotary_dim pass through.
Outputs RotaryEmbedding(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& x = float_input(in, 0);
  const Tensor& cos = float_input(in, 1);
  const Tensor& sin = float_input(in, 2);
  const Tensor* pos = optional_input(in, 3);
  if (x.shape.size() != 4) throw Error("a " + std::to_string(x.shape.size()) + "-D input is not implemented (4-D)");
  const int64_t B = x.shape[0], H = x.shape[1], S = x.shape[2], D = x.shape[3];
  const int64_t rd = attr_int(n, "rotary_embedding_dim", 0) ? attr_int(n, "rotary_embedding_dim", 0) : D;
  const int64_t half = rd / 2;
  const bool interleaved = attr_int(n, "interleaved", 0) != 0;
  if (rd > D || rd % 2) throw Error("rotary_embedding_dim " + std::to_string(rd) + " does not fit head size " + std::to_string(D));
  const Shape want = pos ? Shape{cos.shape.empty() ? 0 : cos.shape[0], half} : Shape{B, S, half};
  if (cos.shape != want || sin.shape != want)
    throw Error("cos/sin " + shape_str(cos.shape) + " do not match " + shape_str(want));
  std::vector<int64_t> ids;
  if (pos) {
    ids = int_values(*pos, "position_ids");
    if (pos->shape != Shape{B, S}) throw Error("position_ids " + shape_str(pos->shape) + " is not [batch, seq]");
  }
  Tensor out = x;
  if (x.view) out.f.assign(x.view, x.view + x.numel()), out.view = nullptr;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      int64_t row = b * S + s;
      if (pos) {
        row = ids[b * S + s];
        if (row < 0 || row >= want[0]) throw Error("position id " + std::to_string(row) + " is outside the cache");
      }
      const float* c = cos.floats() + row * half;
      const float* sn = sin.floats() + row * half;
      for (int64_t h = 0; h < H; ++h) {
        float* y = out.f.data() + ((b * H + h) * S + s) * D;
        const float* v = x.floats() + ((b * H + h) * S + s) * D;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
          y[i1] = c[k] * v[i1] - sn[k] * v[i2];
          y[i2] = sn[k] * v[i1] + c[k] * v[i2];
        }
      }
    }
  return {std::move(out)};
}

// Concatenates past [B, H, P, D] and new [B, H, L, D] on the sequence axis.
Tensor concat_seq(const Tensor* past, const Tensor& now) {
  if (!past) return now;
  if (past->shape.size() != 4 || past->shape[0] != now.shape[0] || past->shape[1] != now.shape[1] ||
      past->shape[3] != now.shape[3])
    throw Error("past " + shape_str(past->shape) + " does not match " + shape_str(now.shape));
  onnx::NodeProto concat;
  auto* axis = concat.add_attribute();
  axis->set_name("axis");
  axis->set_i(2);
  return op_table().at("Concat")(concat, {past, &now})[0];
}

// Attention (opset 23/24), 4-D Q [B, Hq, S, Dk], K [B, Hkv, L, Dk], V [B, Hkv, L, Dv]; GQA: query
// head h reads kv head h / (Hq / Hkv). present = concat(past, new) on the sequence axis (T).
// scores = Q K^T * scale (default 1/sqrt(Dk)), softcap c > 0: c tanh(scores / c); then + bias:
// attn_mask (bool: -inf where false; float: added) broadcast to [B, Hq, S, T] with missing
// trailing key positions -inf, and with is_causal key j <= i + past. Softmax over keys; a row
// whose bias is all -inf gives 0. Y = P V.
Outputs Attention(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& q = float_input(in, 0);
  const Tensor& k_new = float_input(in, 1);
  const Tensor& v_new = float_input(in, 2);
  const Tensor* mask = optional_input(in, 3);
  const Tensor* past_k = optional_input(in, 4);
  const Tensor* past_v = optional_input(in, 5);
  if (optional_input(in, 6)) throw Error("nonpad_kv_seqlen is not implemented");
  if (q.shape.size() != 4 || k_new.shape.size() != 4 || v_new.shape.size() != 4)
    throw Error("3-D inputs are not implemented (4-D)");
  if (n.output_size() > 3 && !n.output(3).empty()) throw Error("the qk_matmul_output output is not implemented");
  if (!!past_k != !!past_v) throw Error("past_key and past_value must be given together");
  const Tensor K = concat_seq(past_k, k_new), V = concat_seq(past_v, v_new);
  const int64_t B = q.shape[0], Hq = q.shape[1], S = q.shape[2], Dk = q.shape[3];
  const int64_t Hkv = K.shape[1], T = K.shape[2], Dv = V.shape[3];
  if (K.shape[0] != B || V.shape[0] != B || K.shape[3] != Dk || V.shape[1] != Hkv || V.shape[2] != T ||
      Hkv == 0 || Hq % Hkv)
    throw Error("Q " + shape_str(q.shape) + ", K " + shape_str(K.shape) + " and V " + shape_str(V.shape) + " do not fit");
  const float scale = has_attr(n, "scale") ? attr_float(n, "scale", 0) : 1.0f / std::sqrt(static_cast<float>(Dk));
  const float softcap = attr_float(n, "softcap", 0.0f);
  const bool causal = attr_int(n, "is_causal", 0) != 0;
  const int64_t past = T - k_new.shape[2];
  // the mask read as [B, Hq, S, mask_T]
  int64_t mask_T = 0;
  Shape ms(4, 0);
  if (mask) {
    if (mask->shape.empty() || mask->shape.size() > 4) throw Error("attn_mask must have rank 1 to 4");
    mask_T = mask->shape.back();
    if (mask_T > T) throw Error("attn_mask has " + std::to_string(mask_T) + " key positions, more than " + std::to_string(T));
    const Shape full{B, Hq, S, mask_T};
    if (broadcast_shapes(mask->shape, full) != full)
      throw Error("attn_mask " + shape_str(mask->shape) + " does not broadcast to " + shape_str(full));
    ms = broadcast_strides(mask->shape, full);
  }
  const double neg_inf = -std::numeric_limits<double>::infinity();
  Tensor y = Tensor::zeros(DataType::FLOAT, {B, Hq, S, Dv});
  std::vector<double> score(T), bias(T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t kv = h / (Hq / Hkv);
      const float* kb = K.floats() + (b * Hkv + kv) * T * Dk;
      const float* vb = V.floats() + (b * Hkv + kv) * T * Dv;
      for (int64_t i = 0; i < S; ++i) {
        const float* qi = q.floats() + ((b * Hq + h) * S + i) * Dk;
        double max_bias = neg_inf, max_score = neg_inf;
        for (int64_t j = 0; j < T; ++j) {
          float dot = 0.0f;
          for (int64_t d = 0; d < Dk; ++d) dot += qi[d] * kb[j * Dk + d];
          double s = static_cast<double>(dot * scale);
          if (softcap > 0.0f) s = softcap * std::tanh(s / softcap);
          double bj = 0.0;
          if (mask) {
            if (j >= mask_T) {
              bj = neg_inf;
            } else {
              const int64_t off = b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3];
              bj = mask->dtype == DataType::BOOL ? (mask->i[off] ? 0.0 : neg_inf) : mask->at(off);
            }
          }
          if (causal && j > i + past) bj = neg_inf;
          bias[j] = bj;
          score[j] = s + bj;
          max_bias = std::max(max_bias, bj);
          max_score = std::max(max_score, score[j]);
        }
        float* yi = y.f.data() + ((b * Hq + h) * S + i) * Dv;
        if (max_bias == neg_inf) continue;  // every key masked: Y = 0
        double sum = 0.0;
        for (int64_t j = 0; j < T; ++j) sum += (score[j] = std::exp(score[j] - max_score));
        std::vector<double> acc(Dv, 0.0);
        for (int64_t j = 0; j < T; ++j)
          for (int64_t d = 0; d < Dv; ++d) acc[d] += score[j] / sum * vb[j * Dv + d];
        for (int64_t d = 0; d < Dv; ++d) yi[d] = static_cast<float>(acc[d]);
      }
    }
  return {std::move(y), K, V};
}

// The rows of x along `axis`: calls fn(offset of the row's first element, stride) for each.
template <typename Fn>
void for_each_row(const Tensor& x, int64_t axis, Fn&& fn) {
  const int64_t dim = x.shape[axis];
  const int64_t inner = numel(Shape(x.shape.begin() + axis + 1, x.shape.end()));
  const int64_t outer = dim && inner ? x.numel() / (dim * inner) : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) fn(o * dim * inner + j, inner);
}

// Softmax (opset 13): exp(x - max) / sum along `axis` (default -1), in double.
Outputs Softmax(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& x = float_input(in, 0);
  const int64_t axis = normalize_axis(attr_int(n, "axis", -1), static_cast<int64_t>(x.shape.size()));
  const int64_t dim = x.shape[axis];
  Tensor y = Tensor::zeros(DataType::FLOAT, x.shape);
  const float* xf = x.floats();
  std::vector<double> e(static_cast<size_t>(dim));
  for_each_row(x, axis, [&](int64_t first, int64_t stride) {
    double m = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (int64_t k = 0; k < dim; ++k) m = std::max(m, static_cast<double>(xf[first + k * stride]));
    for (int64_t k = 0; k < dim; ++k) sum += (e[k] = std::exp(xf[first + k * stride] - m));
    for (int64_t k = 0; k < dim; ++k) y.f[first + k * stride] = static_cast<float>(e[k] / sum);
  });
  return {std::move(y)};
}

// TopK (opset 11): the K (input 1, one INT64) largest (largest=1) or smallest values along `axis`
// and their INT64 indices, sorted (sorted=0 leaves the order open: sorted is one); equal values
// in index order; NaN counts as larger than any number.
Outputs TopK(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& x = float_input(in, 0);
  const std::vector<int64_t> kv = int_values(input(in, 1), "K");
  const auto rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = normalize_axis(attr_int(n, "axis", -1), rank);
  const int64_t dim = x.shape[axis];
  if (kv.size() != 1 || kv[0] < 0 || kv[0] > dim)
    throw Error("K must be one value between 0 and the axis size " + std::to_string(dim));
  const int64_t K = kv[0];
  const bool largest = attr_int(n, "largest", 1) != 0;
  Shape shape = x.shape;
  shape[axis] = K;
  Tensor values = Tensor::zeros(DataType::FLOAT, shape), indices = Tensor::zeros(DataType::INT64, shape);
  const float* xf = x.floats();
  const int64_t inner = numel(Shape(x.shape.begin() + axis + 1, x.shape.end()));
  std::vector<int64_t> order(static_cast<size_t>(dim));
  for_each_row(x, axis, [&](int64_t first, int64_t stride) {
    auto at = [&](int64_t k) { return xf[first + k * stride]; };
    auto before = [&](int64_t a, int64_t b) {  // a ranks before b
      const float va = at(a), vb = at(b);
      if (std::isnan(va) || std::isnan(vb)) return std::isnan(va) && !std::isnan(vb) ? largest : !std::isnan(va) && !largest;
      return largest ? va > vb : va < vb;
    };
    for (int64_t k = 0; k < dim; ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), before);
    const int64_t out_first = first / (dim * inner) * K * inner + first % inner;
    for (int64_t k = 0; k < K; ++k) {
      values.f[out_first + k * stride] = at(order[k]);
      indices.i[out_first + k * stride] = order[k];
    }
  });
  return {std::move(values), std::move(indices)};
}

}  // namespace

void add_nn_ops(std::map<std::string, OpFn>& t) {
  t["MatMul"] = MatMul, t["Gemm"] = Gemm, t["RMSNormalization"] = RMSNormalization;
  t["RotaryEmbedding"] = RotaryEmbedding, t["Attention"] = Attention;
  t["Softmax"] = Softmax, t["TopK"] = TopK;
}

}  // namespace mobius::eval
