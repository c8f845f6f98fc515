// builder/: GraphBuilder naming, constants and weights; Ops scalar operands and output dtypes.
#include "builder/ops.h"

#include <set>

#include "test_util.h"
#include "util/float16.h"

namespace mobius {
namespace {

struct BuilderTest : ::testing::Test {
  Model model;
  GraphBuilder b{model.graph};
  Ops op{b};
  Graph& g = model.graph;

  const Initializer& init_of(const Value* v) {
    const Initializer* i = g.find_initializer(v->name);
    EXPECT_NE(i, nullptr) << v->name;
    return *i;
  }
  // The value of a rank-0 constant, decoded from its bytes.
  static double scalar_value(const Initializer& init) {
    const auto& d = init.data;
    EXPECT_EQ(d.size(), dtype_size(init.value->dtype));
    uint16_t h = 0;
    std::memcpy(&h, d.data(), 2);
    switch (init.value->dtype) {
      case DataType::FLOAT: return *reinterpret_cast<const float*>(d.data());
      case DataType::INT64: return static_cast<double>(*reinterpret_cast<const int64_t*>(d.data()));
      case DataType::FLOAT16: return f16_to_f32(h);
      default: return bf16_to_f32(h);
    }
  }
  // `v` rounded to `dtype` by the reference rounding.
  static double expected(DataType dtype, double v) {
    switch (dtype) {
      case DataType::FLOAT: return static_cast<float>(v);
      case DataType::FLOAT16: return test::round_f16(v);
      case DataType::BFLOAT16: return test::round_bf16(v);
      default: return v;
    }
  }
  // The node that produces `v`.
  const Node& producer(const Value* v) {
    for (const Node& n : g.nodes)
      for (const Value* o : n.outputs)
        if (o == v) return n;
    ADD_FAILURE() << "no producer of " << v->name;
    return g.nodes.front();
  }
};

TEST_F(BuilderTest, NodeNamesFollowScopes) {
  Value* x = b.input("x", DataType::FLOAT, {2, 2});
  Value* top = op.MatMul(x, x);
  Value *ab0, *ab1, *a0;
  {
    auto sa = b.scope("a");
    {
      auto sb = b.scope("b");
      EXPECT_EQ(b.path(), "a.b");
      ab0 = op.MatMul(x, x);
      ab1 = op.MatMul(x, x);
    }
    EXPECT_EQ(b.path(), "a");
    a0 = op.MatMul(x, x);
  }
  EXPECT_EQ(b.path(), "");
  EXPECT_EQ(producer(top).name, "MatMul_0");
  EXPECT_EQ(producer(ab0).name, "a.b/MatMul_0");
  EXPECT_EQ(producer(ab1).name, "a.b/MatMul_1");
  EXPECT_EQ(producer(a0).name, "a/MatMul_0");
  EXPECT_EQ(ab0->name, "a.b/MatMul_0/output_0");
  {  // Re-entering a scope continues its numbering: names stay unique.
    auto sa = b.scope("a");
    auto sb = b.scope("b");
    EXPECT_EQ(producer(op.MatMul(x, x)).name, "a.b/MatMul_2");
  }
  std::set<std::string> names;
  for (const Node& n : g.nodes) EXPECT_TRUE(names.insert(n.name).second) << n.name;
}

TEST_F(BuilderTest, MultiOutputNodeNamesEachOutput) {
  Value* q = b.input("q", DataType::FLOAT16, {1, 2, 3, 4});
  Value* past = b.input("past", DataType::FLOAT16, {1, 2, "past", 4});
  AttentionOutputs a = op.Attention(q, q, q, nullptr, past, past, {.scale = 0.5f});
  EXPECT_EQ(a.y->name, "Attention_0/output_0");
  EXPECT_EQ(a.present_key->name, "Attention_0/output_1");
  EXPECT_EQ(a.present_value->name, "Attention_0/output_2");
  EXPECT_EQ(a.y->dtype, DataType::FLOAT16);
  const Node& n = producer(a.y);
  ASSERT_EQ(n.inputs.size(), 6u);
  EXPECT_EQ(n.inputs[3], nullptr);  // omitted optional input
  ASSERT_EQ(n.attributes.size(), 2u);  // is_causal, scale; softcap 0 is omitted
  EXPECT_EQ(n.attributes[1].name, "scale");
  EXPECT_EQ(std::get<float>(n.attributes[1].value), 0.5f);
  // Without a cache: no cache inputs, one output.
  AttentionOutputs c = op.Attention(q, q, q, nullptr, nullptr, nullptr);
  EXPECT_EQ(c.y->name, "Attention_1/output_0");
  EXPECT_EQ(c.present_key, nullptr);
  EXPECT_EQ(producer(c.y).inputs.size(), 4u);
  EXPECT_EQ(producer(c.y).outputs.size(), 1u);
}

// A scalar operand becomes a rank-0 constant of the tensor operand's dtype, on either side.
TEST_F(BuilderTest, ScalarOperandsAreTypedLikeTheTensor) {
  struct Case { DataType dtype; double scalar; };
  for (Case c : {Case{DataType::FLOAT, 0.5}, Case{DataType::FLOAT16, 0.1}, Case{DataType::BFLOAT16, 3.0},
                 Case{DataType::INT64, 7}}) {
    Value* x = b.input("x" + dtype_name(c.dtype), c.dtype, {2});
    for (Value* y : {op.Mul(x, c.scalar), op.Sub(c.scalar, x)}) {
      const Node& n = producer(y);
      EXPECT_EQ(y->dtype, c.dtype);
      Value* k = n.inputs[n.op_type == "Mul" ? 1 : 0];
      EXPECT_EQ(k->dtype, c.dtype);
      EXPECT_TRUE(k->shape && k->shape->empty());
      EXPECT_EQ(scalar_value(init_of(k)), expected(c.dtype, c.scalar));
    }
  }
  Value* x = b.input("y", DataType::FLOAT16, {2});
  EXPECT_EQ(op.Less(x, 1.0)->dtype, DataType::BOOL);
  EXPECT_EQ(producer(op.Less(x, 1.0)).inputs[1]->dtype, DataType::FLOAT16);
  EXPECT_THROW(op.Add(In(1.0), In(2.0)), InternalError);
}

TEST_F(BuilderTest, ConstantCacheDedupsByDtypeShapeAndContent) {
  Value* x = b.input("x", DataType::FLOAT, {2});
  Value* h = b.input("h", DataType::FLOAT16, {2});
  Value* c1 = producer(op.Mul(x, 0.5)).inputs[1];
  Value* c2 = producer(op.Add(x, 0.5)).inputs[1];
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(b.constant_f32({0.5f}, {}), c1);
  EXPECT_NE(b.constant_f32({0.5f}, {1}), c1);        // other shape
  EXPECT_NE(producer(op.Mul(h, 0.5)).inputs[1], c1);  // other dtype
  EXPECT_NE(producer(op.Mul(x, 0.25)).inputs[1], c1); // other value
  EXPECT_EQ(b.ints({1, 2}), b.constant_i64({1, 2}, {2}));
  size_t consts = 0;
  for (const Initializer& i : g.initializers) consts += !i.weight;
  EXPECT_EQ(consts, 5u);  // 0.5 [], 0.5 [1], 0.5 f16, 0.25, [1, 2]
}

TEST_F(BuilderTest, WeightCreatesOneInitializerPerName) {
  Value* w1 = b.weight("layer.weight", DataType::FLOAT16, {4, 8}, {"layer.weight", {Transpose{}}});
  Value* w2 = b.weight("layer.weight", DataType::FLOAT16, {4, 8}, {"layer.weight", {Transpose{}}});
  Value* w3 = b.weight("lm_head.weight", DataType::FLOAT16, {8, 4}, {"embed.weight"});
  EXPECT_EQ(w1, w2);
  EXPECT_NE(w1, w3);
  ASSERT_EQ(g.initializers.size(), 2u);
  EXPECT_EQ(w1->name, "layer.weight");
  const Initializer& i3 = init_of(w3);
  ASSERT_TRUE(i3.weight);
  EXPECT_EQ(i3.weight->source_key, "embed.weight");
  EXPECT_TRUE(i3.weight->transforms.empty());
  EXPECT_TRUE(i3.data.empty());  // graph construction never touches weight data
}

TEST_F(BuilderTest, OutputRenamesTheValue) {
  Value* x = b.input("x", DataType::FLOAT, {"batch", 4});
  Value* y = op.Relu(x);
  Value* z = op.Neg(y);
  b.output(y, "logits", {"batch", 4});
  EXPECT_EQ(y->name, "logits");
  EXPECT_EQ(g.find_value("logits"), y);
  EXPECT_EQ(g.find_value("Relu_0/output_0"), nullptr);
  EXPECT_EQ(producer(z).inputs[0]->name, "logits");
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.outputs[0], y);
  EXPECT_EQ(shape_str(*y->shape), "[batch, 4]");
  EXPECT_THROW(b.output(z, "x", {}), InternalError);  // name already used
}

TEST_F(BuilderTest, AttributesAndOptionalInputs) {
  Value* x = b.input("x", DataType::FLOAT, {2, 3});
  const Node& s = producer(op.Shape(x, {.start = 1, .end = {}}));
  ASSERT_EQ(s.attributes.size(), 1u);
  EXPECT_EQ(s.attributes[0].name, "start");
  EXPECT_EQ(producer(op.Shape(x)).attributes.size(), 0u);
  EXPECT_EQ(op.Shape(x)->dtype, DataType::INT64);
  EXPECT_EQ(op.Cast(x, {.to = DataType::FLOAT16})->dtype, DataType::FLOAT16);
  EXPECT_EQ(producer(op.Slice(x, {0}, {1}, {0})).inputs.size(), 4u);
  EXPECT_EQ(producer(op.Gemm(x, x, nullptr, {.transB = 1})).inputs.size(), 2u);
  const Node& t = producer(op.Transpose(x, {.perm = {1, 0}}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(t.attributes[0].value), (std::vector<int64_t>{1, 0}));
}

}  // namespace
}  // namespace mobius
