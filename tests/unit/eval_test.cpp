// The float32 reference evaluator (eval/evaluator.h) on hand-made one-node models, against
// loops written out here; and the self-check's comparison (eval/self_check.h). The evaluator's
// ops against onnxruntime, and whole models, are in tests/eval (pytest).
#include <cmath>
#include <limits>

#include <onnx/onnx.pb.h>

#include "eval/evaluator.h"
#include "eval/self_check.h"
#include "test_util.h"

namespace mobius {
namespace {

using eval::Tensor;

// "x0", "x1", ... (std::string::append: GCC 12 warns falsely (-Wrestrict) on "x" + std::string)
std::string numbered(const char* prefix, size_t k) { return std::string(prefix).append(std::to_string(k)); }

// A model with one node: inputs x0, x1, ... of the given types, outputs y0, y1, ...
struct OneNode {
  onnx::ModelProto model;
  onnx::NodeProto* node;
  explicit OneNode(const std::string& op, std::vector<DataType> inputs, int outputs = 1) {
    model.set_ir_version(10);
    model.add_opset_import()->set_version(24);
    auto* g = model.mutable_graph();
    node = g->add_node();
    node->set_op_type(op);
    node->set_name(std::string(op).append("_0"));
    for (size_t k = 0; k < inputs.size(); ++k) {
      auto* vi = g->add_input();
      vi->set_name(numbered("x", k));
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(inputs[k]));
      node->add_input(vi->name());
    }
    for (int k = 0; k < outputs; ++k) {
      node->add_output(numbered("y", static_cast<size_t>(k)));
      g->add_output()->set_name(numbered("y", static_cast<size_t>(k)));
    }
  }
  void attr_ints(const std::string& name, std::vector<int64_t> v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  std::map<std::string, Tensor> run(std::vector<Tensor> xs) {
    test::TempDir dir;
    std::ofstream f(dir.str("model.onnx"), std::ios::binary);
    model.SerializeToOstream(&f);
    f.close();
    std::map<std::string, Tensor> feeds;
    for (size_t k = 0; k < xs.size(); ++k) feeds[numbered("x", k)] = xs[k];
    return eval::Evaluator(dir.str("model.onnx")).run(feeds);
  }
};

TEST(Evaluator, AddBroadcastsLikeNumpy) {
  OneNode m("Add", {DataType::FLOAT, DataType::FLOAT});
  Tensor a = Tensor::of_floats({2, 1, 3}, test::iota_f32(6));
  Tensor b = Tensor::of_floats({4, 1}, test::iota_f32(4, -1.0f, 0.75f));
  Tensor y = m.run({a, b}).at("y0");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 4, 3}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(y.f[(i * 4 + j) * 3 + k], a.f[i * 3 + k] + b.f[j]);
}

TEST(Evaluator, BatchedMatMulBroadcastsTheWeight) {
  OneNode m("MatMul", {DataType::FLOAT, DataType::FLOAT});
  const int64_t B = 2, M = 3, K = 700, N = 600;  // N past one column block
  Tensor a = Tensor::of_floats({B, M, K}, test::iota_f32(B * M * K, -3.0f, 0.01f));
  std::vector<float> w(K * N);
  for (int64_t k = 0; k < K * N; ++k) w[k] = std::sin(0.37f * static_cast<float>(k));
  Tensor y = m.run({a, Tensor::of_floats({K, N}, w)}).at("y0");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{B, M, N}));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; j += 37) {
        double ref = 0.0, magnitude = 0.0;
        for (int64_t k = 0; k < K; ++k) {
          const double t = static_cast<double>(a.f[(b * M + i) * K + k]) * w[k * N + j];
          ref += t;
          magnitude += std::abs(t);
        }
        // float32 recursive summation: |error| <= K * 2^-24 * sum |terms| (Higham, Thm 3.1)
        EXPECT_NEAR(y.f[(b * M + i) * N + j], ref, static_cast<double>(K) * 0x1p-24 * magnitude);
      }
}

TEST(Evaluator, TransposeMovesEveryElement) {
  OneNode m("Transpose", {DataType::FLOAT});
  m.attr_ints("perm", {0, 2, 1, 3});
  Tensor x = Tensor::of_floats({2, 3, 4, 5}, test::iota_f32(120));
  Tensor y = m.run({x}).at("y0");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 4, 3, 5}));
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d) EXPECT_EQ(y.f[((a * 4 + c) * 3 + b) * 5 + d], x.f[((a * 3 + b) * 4 + c) * 5 + d]);
}

TEST(Evaluator, ReshapeCopiesZeroAndInfersMinusOne) {
  OneNode m("Reshape", {DataType::FLOAT, DataType::INT64});
  Tensor y = m.run({Tensor::of_floats({2, 3, 4}, test::iota_f32(24)), Tensor::of_ints({3}, {0, -1, 2})}).at("y0");
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 6, 2}));
  EXPECT_EQ(y.f, test::iota_f32(24));
}

TEST(Evaluator, UnimplementedOpIsNamed) {
  OneNode m("Softsign", {DataType::FLOAT});
  test::expect_error([&] { m.run({Tensor::of_floats({1}, {1.0f})}); }, {"Softsign", "not implemented"});
}

TEST(Evaluator, MissingInputIsNamed) {
  OneNode m("Add", {DataType::FLOAT, DataType::FLOAT});
  test::TempDir dir;
  std::ofstream f(dir.str("model.onnx"), std::ios::binary);
  m.model.SerializeToOstream(&f);
  f.close();
  eval::Evaluator ev(dir.str("model.onnx"));
  test::expect_error([&] { ev.run({{"x0", Tensor::of_floats({1}, {1.0f})}}); }, {"x1", "not given"});
}

TEST(Evaluator, ShapeMismatchNamesTheNode) {
  OneNode m("Add", {DataType::FLOAT, DataType::FLOAT});
  test::expect_error([&] { m.run({Tensor::of_floats({2}, {1, 2}), Tensor::of_floats({3}, {1, 2, 3})}); },
                     {"Add_0", "[2]", "[3]", "broadcast"});
}

// --- the self-check's comparison ---------------------------------------------------------------
TEST(SelfCheck, IdenticalLogitsPass) {
  std::vector<float> a = test::iota_f32(64, -8.0f, 0.25f);
  auto r = eval::compare_logits(a, a);
  EXPECT_EQ(r.max_abs_delta, 0.0);
  EXPECT_EQ(r.logit_scale, 8.0);
  EXPECT_DOUBLE_EQ(r.tolerance, eval::kRelativeTolerance * 8.0);
  EXPECT_TRUE(r.finite);
  EXPECT_TRUE(r.passed());
}

TEST(SelfCheck, ADeltaPastTheToleranceFails) {
  std::vector<float> a = test::iota_f32(64, -8.0f, 0.25f), b = a;
  b[17] += 2e-3f;  // tolerance 8e-4 at logit scale 8
  auto r = eval::compare_logits(a, b);
  EXPECT_NEAR(r.max_abs_delta, 2e-3, 1e-6);
  EXPECT_FALSE(r.passed());
  b[17] = a[17] + 5e-4f;  // within
  EXPECT_TRUE(eval::compare_logits(a, b).passed());
}

TEST(SelfCheck, SmallLogitsUseAnAbsoluteFloor) {
  std::vector<float> a(8, 0.01f), b = a;
  b[3] += 5e-5f;  // below 1e-4 * max(1, 0.01)
  EXPECT_TRUE(eval::compare_logits(a, b).passed());
  b[3] = a[3] + 2e-4f;
  EXPECT_FALSE(eval::compare_logits(a, b).passed());
}

TEST(SelfCheck, NonFiniteLogitsFail) {
  std::vector<float> a(8, 1.0f), b = a;
  b[5] = std::numeric_limits<float>::quiet_NaN();
  auto r = eval::compare_logits(a, b);
  EXPECT_FALSE(r.finite);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(eval::describe(r).find("not finite"), std::string::npos);
  a[2] = b[2] = std::numeric_limits<float>::infinity();  // identical, but not finite
  b[5] = 1.0f;
  EXPECT_FALSE(eval::compare_logits(a, b).passed());
}

}  // namespace
}  // namespace mobius
