// ir/: dtypes, Graph / Value naming, shapes, and the ModelProto serializer (round trip through
// protobuf bytes, every field checked against onnx/onnx.proto's meaning).
#include "ir/ir.h"

#include "ir/serialize.h"
#include "test_util.h"

namespace mobius {
namespace {

using test::expect_error;

TEST(DType, SizesAndNamesFollowOnnx) {
  EXPECT_EQ(dtype_size(DataType::FLOAT), sizeof(float));
  EXPECT_EQ(dtype_size(DataType::DOUBLE), sizeof(double));
  EXPECT_EQ(dtype_size(DataType::INT64), sizeof(int64_t));
  EXPECT_EQ(dtype_size(DataType::FLOAT16), 2u);
  EXPECT_EQ(dtype_size(DataType::BFLOAT16), 2u);
  EXPECT_EQ(dtype_size(DataType::BOOL), 1u);
  EXPECT_THROW(dtype_size(DataType::UNDEFINED), InternalError);
  // Names and numbers as onnx.proto's TensorProto.DataType.
  for (DataType t : {DataType::FLOAT, DataType::INT64, DataType::FLOAT16, DataType::BFLOAT16,
                     DataType::BOOL, DataType::DOUBLE}) {
    onnx::TensorProto_DataType proto = static_cast<onnx::TensorProto_DataType>(t);
    EXPECT_EQ(dtype_name(t), onnx::TensorProto_DataType_Name(proto));
  }
  EXPECT_TRUE(is_float(DataType::BFLOAT16));
  EXPECT_FALSE(is_float(DataType::INT64));
}

TEST(DType, ParseCliDtype) {
  EXPECT_EQ(parse_cli_dtype("f32"), DataType::FLOAT);
  EXPECT_EQ(parse_cli_dtype("f16"), DataType::FLOAT16);
  EXPECT_EQ(parse_cli_dtype("bf16"), DataType::BFLOAT16);
  expect_error([] { parse_cli_dtype("fp8"); }, {"--dtype", "'fp8'"});
}

TEST(Shape, NumElementsAndString) {
  EXPECT_EQ(num_elements({2, 3, 4}), 24);
  EXPECT_EQ(num_elements({}), 1);  // a scalar
  EXPECT_EQ(num_elements({5, int64_t{0}}), 0);
  EXPECT_THROW(num_elements({2, "batch"}), InternalError);
  EXPECT_EQ(shape_str({"batch", 3}), "[batch, 3]");
  EXPECT_EQ(shape_str({}), "[]");
}

TEST(Graph, ValueNamingAndRename) {
  Graph g;
  Value* a = g.new_value("a", DataType::FLOAT, Shape{2, "n"});
  Value* b = g.new_value("b", DataType::INT64);
  EXPECT_EQ(g.find_value("a"), a);
  EXPECT_EQ(g.find_value("b"), b);
  EXPECT_EQ(g.find_value("c"), nullptr);
  EXPECT_FALSE(b->shape.has_value());
  EXPECT_THROW(g.new_value("a", DataType::FLOAT), InternalError);

  g.nodes.push_back({"Identity", "", "n0", {a}, {b}, {}});
  g.rename(a, "renamed");
  EXPECT_EQ(a->name, "renamed");
  EXPECT_EQ(g.find_value("renamed"), a);
  EXPECT_EQ(g.find_value("a"), nullptr);
  EXPECT_EQ(g.nodes[0].inputs[0]->name, "renamed");  // uses follow the pointer
  EXPECT_THROW(g.rename(a, "b"), InternalError);
  EXPECT_EQ(a->name, "renamed");
  // The old name is free again.
  EXPECT_NE(g.new_value("a", DataType::FLOAT), nullptr);
}

TEST(Graph, InitializerLookupAndSize) {
  Graph g;
  Value* w = g.new_value("w", DataType::FLOAT16, Shape{3, 5});
  g.initializers.push_back({w, {}, WeightRef{"src.w", {Transpose{}}}});
  ASSERT_NE(g.find_initializer("w"), nullptr);
  EXPECT_EQ(g.find_initializer("w")->nbytes(), 3u * 5u * 2u);
  EXPECT_EQ(g.find_initializer("x"), nullptr);
}

// A small model covering every serialized feature.
struct SerializerFixture : ::testing::Test {
  Model model;
  Value *ids, *x, *c, *w, *y, *z;
  std::vector<float> cdata{1.5f, -2.0f, 0.25f};

  void SetUp() override {
    Graph& g = model.graph;
    model.opsets.push_back({"com.microsoft", 1});
    model.metadata["model_type"] = "llama";
    ids = g.new_value("input_ids", DataType::INT64, Shape{"batch", "seq"});
    x = g.new_value("x", DataType::FLOAT, Shape{"batch", 3});
    g.inputs = {ids, x};
    c = g.new_value("const_0", DataType::FLOAT, Shape{3});
    g.initializers.push_back({c, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(cdata.data()),
                                                      reinterpret_cast<uint8_t*>(cdata.data()) + 12),
                              std::nullopt});
    w = g.new_value("model.w", DataType::BFLOAT16, Shape{3, 4});
    g.initializers.push_back({w, {}, WeightRef{"model.w", {Transpose{}}}});
    y = g.new_value("y", DataType::FLOAT);
    z = g.new_value("z", DataType::FLOAT, Shape{"batch", 4});
    g.outputs = {z};
    g.nodes.push_back({"Custom", "com.microsoft", "scope/Custom_0", {x, nullptr, c}, {y},
                       {{"i", int64_t{-7}},
                        {"f", 0.125f},
                        {"s", std::string("tanh")},
                        {"ints", std::vector<int64_t>{0, 2, 1, 3}},
                        {"floats", std::vector<float>{1.0f, -0.5f}}}});
    g.nodes.push_back({"MatMul", "", "MatMul_0", {y, w}, {z}, {}});
  }

  onnx::ModelProto round_trip(const std::map<std::string, ExternalLocation>& ext) {
    std::string bytes;
    EXPECT_TRUE(to_model_proto(model, ext).SerializeToString(&bytes));
    onnx::ModelProto p;
    EXPECT_TRUE(p.ParseFromString(bytes));
    return p;
  }
};

void expect_value_info(const onnx::ValueInfoProto& info, const Value& v) {
  EXPECT_EQ(info.name(), v.name);
  const auto& t = info.type().tensor_type();
  EXPECT_EQ(t.elem_type(), static_cast<int32_t>(v.dtype));
  ASSERT_EQ(t.shape().dim_size(), static_cast<int>(v.shape->size()));
  for (size_t i = 0; i < v.shape->size(); ++i) {
    const Dim& d = (*v.shape)[i];
    const auto& pd = t.shape().dim(static_cast<int>(i));
    if (d.is_symbolic()) {
      EXPECT_EQ(pd.value_case(), onnx::TensorShapeProto_Dimension::kDimParam);
      EXPECT_EQ(pd.dim_param(), d.symbol);
    } else {
      EXPECT_EQ(pd.value_case(), onnx::TensorShapeProto_Dimension::kDimValue);
      EXPECT_EQ(pd.dim_value(), d.value);
    }
  }
}

TEST_F(SerializerFixture, RoundTripKeepsEveryField) {
  onnx::ModelProto p = round_trip({{"model.w", {"model.onnx.data", 128, 24}}});
  EXPECT_EQ(p.ir_version(), model.ir_version);
  EXPECT_EQ(p.producer_name(), "mobius");
  EXPECT_EQ(p.producer_version(), model.producer_version);
  ASSERT_EQ(p.opset_import_size(), 2);
  EXPECT_EQ(p.opset_import(0).domain(), "");
  EXPECT_EQ(p.opset_import(0).version(), 24);
  EXPECT_EQ(p.opset_import(1).domain(), "com.microsoft");
  EXPECT_EQ(p.opset_import(1).version(), 1);
  ASSERT_EQ(p.metadata_props_size(), 1);
  EXPECT_EQ(p.metadata_props(0).key(), "model_type");
  EXPECT_EQ(p.metadata_props(0).value(), "llama");

  const onnx::GraphProto& g = p.graph();
  EXPECT_EQ(g.name(), "main_graph");
  ASSERT_EQ(g.input_size(), 2);
  expect_value_info(g.input(0), *ids);
  expect_value_info(g.input(1), *x);
  ASSERT_EQ(g.output_size(), 1);
  expect_value_info(g.output(0), *z);

  ASSERT_EQ(g.initializer_size(), 2);
  const onnx::TensorProto& ct = g.initializer(0);
  EXPECT_EQ(ct.name(), "const_0");
  EXPECT_EQ(ct.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(std::vector<int64_t>(ct.dims().begin(), ct.dims().end()), std::vector<int64_t>{3});
  EXPECT_EQ(ct.raw_data(), test::as_bytes(cdata));
  EXPECT_NE(ct.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(ct.external_data_size(), 0);

  const onnx::TensorProto& wt = g.initializer(1);
  EXPECT_EQ(wt.name(), "model.w");
  EXPECT_EQ(wt.data_type(), onnx::TensorProto::BFLOAT16);
  EXPECT_EQ(std::vector<int64_t>(wt.dims().begin(), wt.dims().end()), (std::vector<int64_t>{3, 4}));
  EXPECT_FALSE(wt.has_raw_data());
  EXPECT_EQ(wt.data_location(), onnx::TensorProto::EXTERNAL);
  std::map<std::string, std::string> ext;
  for (const auto& e : wt.external_data()) ext[e.key()] = e.value();
  EXPECT_EQ(ext, (std::map<std::string, std::string>{
                     {"location", "model.onnx.data"}, {"offset", "128"}, {"length", "24"}}));

  ASSERT_EQ(g.node_size(), 2);
  const onnx::NodeProto& n = g.node(0);
  EXPECT_EQ(n.op_type(), "Custom");
  EXPECT_EQ(n.domain(), "com.microsoft");
  EXPECT_EQ(n.name(), "scope/Custom_0");
  EXPECT_EQ(std::vector<std::string>(n.input().begin(), n.input().end()),
            (std::vector<std::string>{"x", "", "const_0"}));  // "" = omitted optional input
  EXPECT_EQ(std::vector<std::string>(n.output().begin(), n.output().end()), std::vector<std::string>{"y"});
  ASSERT_EQ(n.attribute_size(), 5);
  EXPECT_EQ(n.attribute(0).name(), "i");
  EXPECT_EQ(n.attribute(0).type(), onnx::AttributeProto::INT);
  EXPECT_EQ(n.attribute(0).i(), -7);
  EXPECT_EQ(n.attribute(1).name(), "f");
  EXPECT_EQ(n.attribute(1).type(), onnx::AttributeProto::FLOAT);
  EXPECT_EQ(n.attribute(1).f(), 0.125f);
  EXPECT_EQ(n.attribute(2).name(), "s");
  EXPECT_EQ(n.attribute(2).type(), onnx::AttributeProto::STRING);
  EXPECT_EQ(n.attribute(2).s(), "tanh");
  EXPECT_EQ(n.attribute(3).name(), "ints");
  EXPECT_EQ(n.attribute(3).type(), onnx::AttributeProto::INTS);
  EXPECT_EQ(std::vector<int64_t>(n.attribute(3).ints().begin(), n.attribute(3).ints().end()),
            (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(n.attribute(4).name(), "floats");
  EXPECT_EQ(n.attribute(4).type(), onnx::AttributeProto::FLOATS);
  EXPECT_EQ(std::vector<float>(n.attribute(4).floats().begin(), n.attribute(4).floats().end()),
            (std::vector<float>{1.0f, -0.5f}));
  EXPECT_EQ(g.node(1).op_type(), "MatMul");
  EXPECT_EQ(g.node(1).domain(), "");
  EXPECT_EQ(g.node(1).input(1), "model.w");
}

TEST_F(SerializerFixture, WeightWithoutExternalLocationIsAnInternalError) {
  EXPECT_THROW(to_model_proto(model, {}), InternalError);
}

}  // namespace
}  // namespace mobius
