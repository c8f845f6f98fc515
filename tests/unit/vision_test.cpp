// The vision towers other tasks reuse (archs/vision_towers.h, blocks/vision_transformer.h): built
// from a vision config object under a weight prefix, running all layers or the first k, with the
// checkpoint keys transformers' *VisionModel uses below the prefix.
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "archs/vision_towers.h"
#include "test_util.h"

namespace mobius {
namespace {

// A root module holding a tower under a prefix, as a vision-language model would.
struct Holder : Module {
  VisionTransformer* tower;
  Holder(const std::string& prefix, std::unique_ptr<VisionTransformer> t) { tower = adopt(prefix, std::move(t)); }
};

HfConfig vision_config() {
  return HfConfig(nlohmann::json{{"hidden_size", 32}, {"intermediate_size", 64}, {"num_hidden_layers", 3},
                                 {"num_attention_heads", 2}, {"image_size", 16}, {"patch_size", 8}},
                  "config.json", "vision_config.");
}

std::set<std::string> weights(const Model& m) {
  std::set<std::string> out;
  for (const Initializer& i : m.graph.initializers)
    if (i.weight) out.insert(i.weight->source_key);
  return out;
}

struct TowerRun {
  Model model;
  VisionTransformerOutputs out;
};

TowerRun run(const VisionTransformer& tower, int64_t layers) {
  TowerRun r;
  GraphBuilder b(r.model.graph);
  Ops op(b);
  Value* pixels = b.input("pixel_values", DataType::FLOAT, {"batch", 3, 16, 16});
  r.out = tower.forward(op, pixels, layers);
  return r;
}

TEST(VisionTower, ClipUnderAPrefixAllLayersOrTheFirstK) {
  Holder h("model.vision_tower", clip_vision_tower(vision_config(), DataType::FLOAT));
  EXPECT_EQ(h.tower->sequence_length(), 1 + 4);  // class token + 2 x 2 patches
  EXPECT_EQ(h.tower->hidden_size(), 32);

  TowerRun all = run(*h.tower, -1);
  ASSERT_NE(all.out.last_hidden_state, nullptr);
  ASSERT_EQ(all.out.hidden_states.size(), 4u);  // embeddings (after pre_layrnorm) + 3 layers
  EXPECT_EQ(all.out.hidden_states.back(), all.out.last_hidden_state);  // CLIP: no final norm on the sequence
  std::set<std::string> w = weights(all.model);
  for (const char* key : {"model.vision_tower.embeddings.class_embedding",
                          "model.vision_tower.embeddings.patch_embedding.weight",
                          "model.vision_tower.embeddings.position_embedding.weight",
                          "model.vision_tower.pre_layrnorm.weight",
                          "model.vision_tower.encoder.layers.2.self_attn.out_proj.weight"})
    EXPECT_TRUE(w.count(key)) << key;
  EXPECT_FALSE(w.count("model.vision_tower.embeddings.patch_embedding.bias"));  // CLIP's Conv has none

  // LLaVA's vision_feature_layer -2: the first 2 of 3 layers; the last one is not in the graph
  TowerRun first = run(*h.tower, 2);
  EXPECT_EQ(first.out.last_hidden_state, nullptr);
  EXPECT_EQ(first.out.hidden_states.size(), 3u);
  w = weights(first.model);
  EXPECT_TRUE(w.count("model.vision_tower.encoder.layers.1.mlp.fc2.weight"));
  for (const std::string& key : w) EXPECT_EQ(key.find("layers.2."), std::string::npos) << key;
}

TEST(VisionTower, SiglipNormsTheLastHiddenState) {
  Holder h("vision_tower.vision_model", siglip_vision_tower(vision_config(), DataType::FLOAT));
  EXPECT_EQ(h.tower->sequence_length(), 4);  // patches only
  TowerRun all = run(*h.tower, -1);
  ASSERT_NE(all.out.last_hidden_state, nullptr);
  EXPECT_NE(all.out.hidden_states.back(), all.out.last_hidden_state);  // post_layernorm
  std::set<std::string> w = weights(all.model);
  EXPECT_TRUE(w.count("vision_tower.vision_model.post_layernorm.weight"));
  EXPECT_TRUE(w.count("vision_tower.vision_model.embeddings.patch_embedding.bias"));
}

TEST(VisionTower, ErrorsNameTheSubConfigField) {
  nlohmann::json j = vision_config().json();
  j["patch_size"] = 5;
  test::expect_error([&] { clip_vision_tower(HfConfig(j, "config.json", "vision_config."), DataType::FLOAT); },
                     {"config.json: field 'vision_config.patch_size': 5 must divide image_size " +
                          std::to_string(j["image_size"].get<int64_t>())});
}

}  // namespace
}  // namespace mobius
