// DINOv2 (transformers/models/dinov2/modeling_dinov2.py, configuration_dinov2.py) and
// DINOv2 with registers (models/dinov2_with_registers/): the ViT tower (archs/vision_towers.h)
// with LayerScale, intermediate_size = hidden_size * mlp_ratio and the child names
// embeddings.{cls_token, position_embeddings, patch_embeddings.projection[, register_tokens]},
// encoder.layer.{i}.{norm1, attention.attention.{query,key,value}, attention.output.dense,
// layer_scale1.lambda1, norm2, mlp.fc1, mlp.fc2, layer_scale2.lambda1}, layernorm.
//   Dinov2Model: pooler_output = last_hidden_state[:, 0]
//   Dinov2ForImageClassification (weights under dinov2. / dinov2_with_registers.):
//     logits = classifier(concat(x[:, 0], x[:, 1 + num_register_tokens:].mean(1)))
// With use_swiglu_ffn (DINOv2 giant) each layer's mlp is Dinov2SwiGLUFFN: down_proj(silu(gate_proj(x))
// * up_proj(x)), biases on, (hidden_size * mlp_ratio * 2 / 3 + 7) / 8 * 8 wide (hidden_act is not
// read there); the checkpoint holds gate_proj and up_proj fused as mlp.weights_in (gate rows first)
// and down_proj as mlp.weights_out. embeddings.mask_token (masked image modelling only) is not read.
#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "registry/config_defaults.h"

namespace mobius {
namespace {

VisionTransformerOptions dinov2_options(const HfConfig& c, DataType dtype, int64_t registers) {
  VisionTransformerOptions o = vit_options(c, dtype);
  const int64_t ratio = c.int_or("mlp_ratio", 4);
  if (ratio < 1 || ratio > 64) c.fail("mlp_ratio", "expected a value in [1, 64]");
  o.layer.intermediate_size = o.layer.hidden_size * ratio;
  if (c.bool_or("use_swiglu_ffn", false)) {
    // Dinov2SwiGLUFFN: two thirds of hidden_size * mlp_ratio, rounded up to a multiple of 8
    const int64_t width = (o.layer.intermediate_size * 2 / 3 + 7) / 8 * 8;
    // as checkpoints hold it: mlp.weights_in [2 * width, hidden] (gate rows, then up rows: the
    // Chunk(dim=0) of transformers' conversion_mapping) and mlp.weights_out (down_proj)
    o.layer.mlp = MLPOptions{.hidden_size = o.layer.hidden_size, .intermediate_size = width, .hidden_act = "silu",
                             .bias = true, .dtype = dtype, .gated = true, .fused_gate_up = true,
                             .gated_down_name = "mlp.weights_out", .gate_up_name = "mlp.weights_in"};
  }
  o.embedding.patch = "patch_embeddings.projection";
  o.embedding.tokens = {"cls_token"};
  o.embedding.position = "position_embeddings";
  o.embedding.position_rank3 = true;
  if (registers > 0) {
    o.embedding.registers = "register_tokens";
    o.embedding.num_registers = registers;
  }
  o.layers = "encoder.layer";
  o.layer.names = {.norm1 = "norm1", .attention = "attention", .norm2 = "norm2", .fc1 = "mlp.fc1",
                   .fc2 = "mlp.fc2", .layer_scale1 = "layer_scale1.lambda1", .layer_scale2 = "layer_scale2.lambda1"};
  o.layer.attention.names = {"attention.query", "attention.key", "attention.value", "output.dense"};
  o.layer.attention.qkv_bias = c.bool_or("qkv_bias", true);
  read_head_dim(c, o);
  o.post_norm = "layernorm";
  return o;
}

class Dinov2Model : public TowerModel<ImageEncoder> {
 public:
  Dinov2Model(const HfConfig& c, DataType dtype, int64_t registers) {
    set_tower("", std::make_unique<VisionTransformer>(dinov2_options(c, dtype, registers)));
  }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    Value* last = tower->forward(op, pixel_values).last_hidden_state;
    return {last, token_at(op, last, 0)};
  }
};

class Dinov2Classifier : public TowerModel<ImageClassifier> {
 public:
  Dinov2Classifier(const HfConfig& c, DataType dtype, const std::string& prefix, int64_t registers)
      : registers_(registers), labels_(label_count(c)) {
    set_tower(prefix, std::make_unique<VisionTransformer>(dinov2_options(c, dtype, registers)));
    classifier = child<Linear>("classifier", LinearOptions{2 * hidden_size(), labels_, true, dtype});
  }
  int64_t num_labels() const override { return labels_; }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    Value* last = tower->forward(op, pixel_values).last_hidden_state;
    Value* features = op.Concat({token_at(op, last, 0), mean_tokens(op, last, 1 + registers_)}, {.axis = -1});
    return {last, nullptr, classifier->forward(op, features)};
  }

  Linear* classifier;

 private:
  int64_t registers_;
  int64_t labels_;
};

std::unique_ptr<Architecture> make(const HfConfig& c, DataType dtype, const std::string& prefix, int64_t registers) {
  if (is_image_classification(c)) return std::make_unique<Dinov2Classifier>(c, dtype, prefix, registers);
  return std::make_unique<Dinov2Model>(c, dtype, registers);
}

}  // namespace

std::unique_ptr<Architecture> create_dinov2(const HfConfig& c, DataType dtype) {
  return make(c, dtype, "dinov2", 0);
}

std::unique_ptr<Architecture> create_dinov2_with_registers(const HfConfig& c, DataType dtype) {
  const int64_t registers = c.int_or("num_register_tokens", 4);
  if (registers < 0 || registers > 1024) c.fail("num_register_tokens", "expected a value in [0, 1024]");
  return make(c, dtype, "dinov2_with_registers", registers);
}

}  // namespace mobius
