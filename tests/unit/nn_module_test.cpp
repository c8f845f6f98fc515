// nn/module: dotted parameter names of a nested module tree equal the Hugging Face state-dict keys
// (modules register their children in their constructors, before their own path is known).
#include "nn/module.h"

#include "test_util.h"

namespace mobius {
namespace {

struct Proj : Module {
  Parameter *weight, *bias;
  explicit Proj(int64_t n) {
    weight = param("weight", {n, n}, DataType::FLOAT, /*transpose=*/true);
    bias = param("bias", {n}, DataType::FLOAT);
  }
};

struct Layer : Module {
  Proj* q_proj;
  Proj* up_proj;
  explicit Layer(int64_t n) {
    param("scale", {1}, DataType::FLOAT);
    q_proj = child<Proj>("q_proj", n);
    up_proj = child<Proj>("up_proj", n);
  }
};

struct Stack : Module {
  std::vector<Layer*> layers;
  explicit Stack(int layers_n) {
    for (int i = 0; i < layers_n; ++i) layers.push_back(child<Layer>("layers." + std::to_string(i), 2));
    param("norm_weight", {2}, DataType::FLOAT16);
  }
};

struct Root : Module {
  Stack* model;
  Proj* lm_head;
  Root() {
    model = child<Stack>("model", 2);
    lm_head = child<Proj>("lm_head", 3);
  }
};

std::vector<std::string> names(const Module& m) {
  std::vector<std::string> out;
  for (const Parameter* p : m.named_parameters()) out.push_back(p->name);
  return out;
}

TEST(Module, ParameterNamesAreStateDictKeys) {
  Root root;
  EXPECT_EQ(root.path(), "");
  EXPECT_EQ(root.model->path(), "model");
  EXPECT_EQ(root.model->layers[1]->path(), "model.layers.1");
  EXPECT_EQ(root.model->layers[1]->q_proj->path(), "model.layers.1.q_proj");
  const std::vector<std::string> want = {
      "model.norm_weight",
      "model.layers.0.scale",
      "model.layers.0.q_proj.weight", "model.layers.0.q_proj.bias",
      "model.layers.0.up_proj.weight", "model.layers.0.up_proj.bias",
      "model.layers.1.scale",
      "model.layers.1.q_proj.weight", "model.layers.1.q_proj.bias",
      "model.layers.1.up_proj.weight", "model.layers.1.up_proj.bias",
      "lm_head.weight", "lm_head.bias"};
  EXPECT_EQ(names(root), want);
  // A subtree lists its own parameters under their full paths.
  EXPECT_EQ(names(*root.model->layers[0]->q_proj),
            (std::vector<std::string>{"model.layers.0.q_proj.weight", "model.layers.0.q_proj.bias"}));
}

TEST(Module, ParametersCarryShapeDtypeAndFlagsNoData) {
  Root root;
  const Parameter* w = root.lm_head->weight;
  EXPECT_EQ(shape_str(w->shape), "[3, 3]");
  EXPECT_EQ(w->dtype, DataType::FLOAT);
  EXPECT_TRUE(w->transpose);
  EXPECT_FALSE(root.lm_head->bias->transpose);
  EXPECT_EQ(root.model->named_parameters()[0]->dtype, DataType::FLOAT16);
}

TEST(Module, RenamingTheRootReRootsEverything) {
  Proj p(2);
  EXPECT_EQ(names(p), (std::vector<std::string>{"weight", "bias"}));
  p.set_name("encoder", "");
  EXPECT_EQ(names(p), (std::vector<std::string>{"encoder.weight", "encoder.bias"}));
  p.set_name("proj", "model.encoder");
  EXPECT_EQ(names(p), (std::vector<std::string>{"model.encoder.proj.weight", "model.encoder.proj.bias"}));
}

TEST(Module, ParameterValueCreatesOneWeightBoundToItsKey) {
  Root root;
  Model m;
  GraphBuilder b(m.graph);
  Ops op(b);
  Parameter* w = root.model->layers[1]->up_proj->weight;
  Value* v1 = w->value(op);
  Value* v2 = w->value(op);
  EXPECT_EQ(v1, v2);
  EXPECT_EQ(v1->name, "model.layers.1.up_proj.weight");
  ASSERT_EQ(m.graph.initializers.size(), 1u);
  EXPECT_EQ(m.graph.initializers[0].weight->source_key, "model.layers.1.up_proj.weight");
  EXPECT_EQ(to_string(m.graph.initializers[0].weight->transforms), "transpose, cast(" + dtype_name(v1->dtype) + ")");
  // source_key redirects the checkpoint key (tied weights) without changing the name.
  root.lm_head->bias->source_key = "model.norm_weight";
  Value* tied = root.lm_head->bias->value(op);
  EXPECT_EQ(tied->name, "lm_head.bias");
  EXPECT_EQ(m.graph.find_initializer("lm_head.bias")->weight->source_key, "model.norm_weight");
}

}  // namespace
}  // namespace mobius
