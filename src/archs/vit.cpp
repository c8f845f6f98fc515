// The ViT family (transformers/models/<type>/modeling_<type>.py, configuration_<type>.py): one
// tower (archs/vision_towers.h vit_options with the ViT child names: embeddings.cls_token,
// embeddings.position_embeddings [1, positions, hidden], embeddings.patch_embeddings.projection,
// encoder.layer.{i}.{layernorm_before, attention.attention.{query,key,value},
// attention.output.dense, layernorm_after, intermediate.dense, output.dense}, layernorm), members
// differing in tokens, pooler and head:
//   vit      ViTModel: pooler_output = pooler_act(pooler.dense(x[:, 0])) (width pooler_output_size);
//            ViTForImageClassification (weights under vit.): logits = classifier(x[:, 0])
//   deit     as vit with a distillation_token after cls_token (DeiTPooler);
//            DeiTForImageClassification (deit.): classifier(x[:, 0]);
//            DeiTForImageClassificationWithTeacher: (cls_classifier(x[:, 0]) +
//            distillation_classifier(x[:, 1])) / 2
//   vit_msn  ViTMSNModel: no pooler; ViTMSNForImageClassification: classifier(x[:, 0]), its
//            checkpoints with vit.embeddings and vit.layernorm but encoder.layer at the top level
//            (transformers/conversion_mapping.py renames ^encoder. to vit.encoder. on load)
//   ijepa    IJepaModel: no class token, no pooler; IJepaForImageClassification (ijepa.):
//            classifier(x.mean(1))
// x = last_hidden_state (after layernorm). Classification is chosen by config.json's
// architectures (tasks/image_classification.h).
#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "blocks/activation.h"

namespace mobius {
namespace {

enum class Head { first_token, cls_and_distillation, mean };

struct VitMember {
  const char* prefix;               // the backbone's weights in a classification checkpoint
  std::vector<std::string> tokens;  // prepended learned tokens
  bool pooler;                      // *Model has the dense + activation pooler
  Head head;
  bool encoder_at_root = false;     // classification checkpoint: encoder.layer outside `prefix`
};

VisionTransformerOptions vit_family_options(const HfConfig& c, DataType dtype, const VitMember& m) {
  VisionTransformerOptions o = vit_options(c, dtype);
  o.layer.intermediate_size = c.get_int("intermediate_size");
  o.embedding.patch = "patch_embeddings.projection";
  o.embedding.tokens = m.tokens;
  o.embedding.position = "position_embeddings";
  o.embedding.position_rank3 = true;
  o.layers = "encoder.layer";
  o.layer.names = {.norm1 = "layernorm_before", .attention = "attention", .norm2 = "layernorm_after",
                   .fc1 = "intermediate.dense", .fc2 = "output.dense", .layer_scale1 = "", .layer_scale2 = ""};
  o.layer.attention.names = {"attention.query", "attention.key", "attention.value", "output.dense"};
  o.layer.attention.qkv_bias = c.bool_or("qkv_bias", true);
  read_head_dim(c, o);
  o.post_norm = "layernorm";
  return o;
}

class VitModel : public TowerModel<ImageEncoder> {
 public:
  VitModel(const HfConfig& c, DataType dtype, const VitMember& m) {
    set_tower("", std::make_unique<VisionTransformer>(vit_family_options(c, dtype, m)));
    if (!m.pooler) return;
    pooler_size_ = c.opt_int("pooler_output_size").value_or(hidden_size());
    pooler_act_ = c.string_or("pooler_act", "tanh");
    if (!is_known_activation(pooler_act_) || pooler_act_ == "xielu")
      c.fail("pooler_act", "unsupported activation '" + pooler_act_ + "'");
    pooler = child<Linear>("pooler.dense", LinearOptions{hidden_size(), pooler_size_, true, dtype});
  }
  int64_t pooler_size() const override { return pooler_size_; }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    Value* last = tower->forward(op, pixel_values).last_hidden_state;
    if (!pooler) return {last};
    return {last, activation(op, pooler_act_, pooler->forward(op, token_at(op, last, 0)))};
  }

  Linear* pooler = nullptr;

 private:
  int64_t pooler_size_ = 0;
  std::string pooler_act_;
};

class VitClassifier : public TowerModel<ImageClassifier> {
 public:
  VitClassifier(const HfConfig& c, DataType dtype, const VitMember& m) : head_(m.head), labels_(label_count(c)) {
    VisionTransformerOptions o = vit_family_options(c, dtype, m);
    const std::string prefix = m.prefix;
    if (m.encoder_at_root) {
      o.embeddings = prefix + ".embeddings";
      o.post_norm = prefix + ".layernorm";
    }
    set_tower(m.encoder_at_root ? "" : prefix, std::make_unique<VisionTransformer>(o));
    const LinearOptions linear{hidden_size(), labels_, true, dtype};
    const std::string arch = c.json()["architectures"][0].get<std::string>();
    if (m.head == Head::cls_and_distillation && arch == "DeiTForImageClassificationWithTeacher") {
      classifier = child<Linear>("cls_classifier", linear);
      distillation_classifier = child<Linear>("distillation_classifier", linear);
    } else {
      classifier = child<Linear>("classifier", linear);
    }
  }
  int64_t num_labels() const override { return labels_; }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    Value* last = tower->forward(op, pixel_values).last_hidden_state;
    Value* logits = classifier->forward(op, head_ == Head::mean ? mean_tokens(op, last) : token_at(op, last, 0));
    if (distillation_classifier)
      logits = op.Div(op.Add(logits, distillation_classifier->forward(op, token_at(op, last, 1))), 2.0);
    return {last, nullptr, logits};
  }

  Linear* classifier;
  Linear* distillation_classifier = nullptr;

 private:
  Head head_;
  int64_t labels_;
};

std::unique_ptr<Architecture> make(const HfConfig& c, DataType dtype, const VitMember& m) {
  if (is_image_classification(c)) return std::make_unique<VitClassifier>(c, dtype, m);
  return std::make_unique<VitModel>(c, dtype, m);
}

}  // namespace

std::unique_ptr<Architecture> create_vit(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {"vit", {"cls_token"}, true, Head::first_token});
}

std::unique_ptr<Architecture> create_deit(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {"deit", {"cls_token", "distillation_token"}, true, Head::cls_and_distillation});
}

std::unique_ptr<Architecture> create_vit_msn(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {"vit", {"cls_token"}, false, Head::first_token, true});
}

std::unique_ptr<Architecture> create_ijepa(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {"ijepa", {}, false, Head::mean});
}

}  // namespace mobius
