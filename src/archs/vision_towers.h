// The vision towers other tasks reuse (the vision-language families: LLaVA's CLIP or SigLIP
// tower, Gemma 3's SigLIP tower). Each factory reads a vision config object (a standalone
// *_vision_model config.json, or the vision_config of a dual or vision-language config), fills
// the fields it leaves out with the transformers config-class defaults, and returns the tower;
// register it under the checkpoint prefix of its weights, e.g. in a root module
//   tower_ = adopt("model.vision_tower", clip_vision_tower(*cfg.sub("vision_config"), dtype));
// and run tower_->forward(op, pixel_values[, layers]) (blocks/vision_transformer.h):
// last_hidden_state, and hidden_states[k] after k layers (LLaVA's vision_feature_layer).
// Parameter names below the prefix are transformers' checkpoint keys of *VisionModel:
// "embeddings.patch_embedding.weight", "encoder.layers.{i}.self_attn.q_proj.weight", ...
// Throws mobius::Error naming the field for a config it cannot build (image_size or patch_size
// not an integer, patch_size not dividing image_size, heads not dividing hidden_size, an
// unknown hidden_act).
#pragma once

#include <memory>

#include "blocks/vision_transformer.h"
#include "config/hf_config.h"
#include "tasks/feature_extraction.h"
#include "tasks/image_classification.h"

namespace mobius {

// SiglipVisionModel's tower (transformers/models/siglip/modeling_siglip.py): patch Conv with
// bias, no class token, position_embedding [patches, hidden], CLIP-style layers,
// post_layernorm on last_hidden_state. Config: siglip_vision_model (SiglipVisionConfig).
std::unique_ptr<VisionTransformer> siglip_vision_tower(const HfConfig& vision_config, DataType dtype);

// CLIPVisionModel's tower (transformers/models/clip/modeling_clip.py): patch Conv without bias,
// class_embedding [hidden], position_embedding [patches + 1, hidden], pre_layrnorm, CLIP
// layers; last_hidden_state is the last layer's output (post_layernorm belongs to the pooler,
// not to the tower). Config: clip_vision_model (CLIPVisionConfig).
std::unique_ptr<VisionTransformer> clip_vision_tower(const HfConfig& vision_config, DataType dtype);

// The sizes every ViT-style config spells the same way (hidden_size, num_hidden_layers,
// num_attention_heads, hidden_act, layer_norm_eps, image_size, patch_size, num_channels), read
// from `c` (after its class defaults) into tower options with CLIP's child names; the family
// factories set the feed-forward width (intermediate_size, or DINOv2's hidden_size * mlp_ratio)
// and rename what differs.
VisionTransformerOptions vit_options(const HfConfig& c, DataType dtype);
// The layer part of vit_options (hidden_size, hidden_act, layer_norm_eps, num_attention_heads;
// intermediate_size left to the family): for a tower without a square image_size (SigLIP 2).
VisionLayerOptions vit_layer_options(const HfConfig& c, DataType dtype);
// The part of a layer every ViT-style config spells the same way, read from `c` (after its class
// defaults): hidden_size, hidden_act (`act` where the config and its class leave it out) and
// num_attention_heads, the attention's projections q_proj, k_proj, v_proj, out_proj with biases;
// the norms, their eps and the feed-forward width are the family's. Throws mobius::Error naming
// hidden_act (unknown) or num_attention_heads (not dividing hidden_size).
VisionLayerOptions vit_attention_layer(const HfConfig& c, const char* act, DataType dtype);

// The SigLIP-like tower over patches some of which are padding (Idefics3VisionTransformer,
// modeling_idefics3.py; Phi4MultimodalVisionModel, modeling_phi4_multimodal.py): children
// embeddings.patch_embedding (Conv with bias), embeddings.position_embedding.weight
// [side^2, hidden] (side = image_size / patch_size), encoder.layers.{i} (SigLIP layers),
// post_layernorm. The real patches of an image take the learned positions by bucketing their
// fractional (row, column) coordinates (NaViT's patch positions, Idefics3VisionEmbeddings /
// Phi4MultimodalVisionEmbeddings: torch.bucketize of min(i / n, 1 - 1e-6) against
// torch.arange(1/side, 1, 1/side) in float32, bit for bit), the padded ones position 0; attention
// skips the padded patches as keys (create_bidirectional_mask).
class MaskedPatchVisionTower : public Module {
 public:
  explicit MaskedPatchVisionTower(const VisionTransformerOptions& o);
  // pixels [N, C, image_size, image_size] in the model dtype, real bool [N, side, side] (true = a
  // real patch) -> [N, side^2, hidden]: after `layers` layers (transformers' hidden_states[layers],
  // without post_layernorm), or with layers -1 the last_hidden_state (every layer, post_layernorm).
  Value* forward(Ops& op, Value* pixels, Value* real, int64_t layers = -1) const;

  int64_t side() const { return side_; }
  int64_t num_hidden_layers() const { return static_cast<int64_t>(layers.size()); }

  PatchEmbedding* patch;
  Parameter* position;
  std::vector<VisionEncoderLayer*> layers;
  LayerNorm* post_layernorm;

 private:
  // Each real-patch count n [N] -> the position-table row (or column) of coordinates 0..side-1.
  Value* bucket(Ops& op, Value* n) const;

  VisionTransformerOptions o_;
  int64_t side_;
};

// The text tower of CLIP and SigLIP (CLIPTextTransformer / SiglipTextModel without pooling):
// embeddings.token_embedding + embeddings.position_embedding (positions 0..seq-1, at most
// max_position_embeddings), CLIP encoder layers (encoder.layers.{i}), final_layer_norm. CLIP's
// attention is causal over the unpadded tokens (create_causal_mask), SigLIP's bidirectional over
// them (create_bidirectional_mask). Config: clip_text_model / siglip_text_model and the CLIP
// copies of other families (`config_type` names the class whose defaults fill omitted fields).
class TextTransformer : public Module {
 public:
  enum class Mask { causal, bidirectional };
  TextTransformer(const HfConfig& text_config, const char* config_type, Mask mask, DataType dtype);
  // The same tower with another family's layers (AIMv2's: RMSNorm, SwiGLU) and final norm, a
  // `layer.norm` named `final_norm`; vocab_size, max_position_embeddings and num_hidden_layers read
  // from `c` (the text config with its class defaults filled in).
  TextTransformer(const HfConfig& c, const VisionLayerOptions& layer, Mask mask, const std::string& final_norm);
  // input_ids, attention_mask: int64 [batch, seq] (1 = token) -> [batch, seq, hidden_size]
  // (after the final norm).
  Value* forward(Ops& op, Value* input_ids, Value* attention_mask) const;
  // The hidden states transformers' output_hidden_states gives: the embeddings' output, then every
  // layer's (num_hidden_layers + 1 of [batch, seq, hidden_size], the last before the final norm).
  std::vector<Value*> hidden_states(Ops& op, Value* input_ids, Value* attention_mask) const;

  int64_t hidden_size() const { return layer_.hidden_size; }

  Embedding *token_embedding, *position_embedding;
  std::vector<VisionEncoderLayer*> layers;
  Norm* final_norm;

 private:
  // The CLIP layers of `c` (its class defaults filled in).
  TextTransformer(const HfConfig& c, Mask mask, DataType dtype);

  Mask mask_;
  VisionLayerOptions layer_;
};

// feature-extraction over one text tower at checkpoint prefix `prefix` ("" the root, or
// "text_model"): input_ids, attention_mask int64 [batch, seq] -> last_hidden_state [batch, seq,
// hidden_size]; no token type ids. The CLIP, SigLIP and AIMv2 text models.
class TextTowerEncoder : public Encoder {
 public:
  TextTowerEncoder(const std::string& prefix, std::unique_ptr<TextTransformer> tower, DataType dtype) : dtype_(dtype) {
    text = adopt(prefix, std::move(tower));
  }
  DataType dtype() const override { return dtype_; }
  int64_t hidden_size() const override { return text->hidden_size(); }
  bool has_token_type_ids() const override { return false; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    return text->forward(op, in.input_ids, in.attention_mask);
  }

  TextTransformer* text;

 private:
  DataType dtype_;
};

// ViTAttention / Dinov2Attention (modeling_vit.py, modeling_dinov2.py): the heads are
// config.json's head_dim wide when it sets one (getattr(config, "head_dim", hidden // heads)), the
// projections num_attention_heads * head_dim. Throws mobius::Error naming head_dim out of range.
void read_head_dim(const HfConfig& c, VisionTransformerOptions& o);

// The sub-config `key` of a dual or vision-language config (text_config, vision_config), or an
// empty object when config.json leaves it out (transformers then uses the sub-config class'
// defaults, which the tower factories fill in). Errors name "key.field".
HfConfig sub_config(const HfConfig& c, const char* key);

// An image-feature-extraction (Task = ImageEncoder) or image-classification (ImageClassifier)
// model whose input and output shapes are those of its tower; the family adds its pooler and
// head and writes forward().
template <class Task>
class TowerModel : public Task {
 public:
  DataType dtype() const override { return tower->options().layer.dtype; }
  int64_t num_channels() const override { return tower->options().embedding.num_channels; }
  int64_t image_size() const override { return tower->options().embedding.image_size; }
  int64_t sequence_length() const override { return tower->sequence_length(); }
  int64_t hidden_size() const override { return tower->hidden_size(); }

  VisionTransformer* tower = nullptr;

 protected:
  // Registers `t` as the tower, its weights under `prefix` ("" = the checkpoint's top level).
  void set_tower(const std::string& prefix, std::unique_ptr<VisionTransformer> t) {
    tower = this->adopt(prefix, std::move(t));
  }
};

// SiglipMultiheadAttentionPoolingHead / Siglip2MultiheadAttentionPoolingHead
// (modeling_siglip.py, modeling_siglip2.py): a learned probe [1, 1, hidden] attends over the
// sequence with torch.nn.MultiheadAttention (attention.in_proj_weight [3 * hidden, hidden] =
// q | k | v, attention.in_proj_bias, attention.out_proj), then h + mlp(layernorm(h)) (mlp.fc1,
// mlp.fc2, the layer's hidden_act). Register it as "head" of the vision model.
class AttentionPoolingHead : public Module {
 public:
  explicit AttentionPoolingHead(const VisionLayerOptions& l);
  // x [batch, seq, hidden] -> [batch, hidden]; mask: null, or an additive mask over the keys
  // [batch, 1, 1, seq] (SigLIP 2's padding patches: blocks/attention.h padding_mask).
  Value* forward(Ops& op, Value* x, Value* mask = nullptr) const;

  Parameter *probe, *in_proj_weight, *in_proj_bias;
  Linear *out_proj, *fc1, *fc2;
  LayerNorm* layernorm;

 private:
  VisionLayerOptions l_;
};

// A *ForImageClassification head over a tower whose weights are under vision_model.: logits =
// classifier(mean of the last hidden state's tokens from `first_token` on) (transformers
// CLIPForImageClassification: the patch tokens, first_token 1; SiglipForImageClassification: all, 0).
class MeanPooledClassifier : public TowerModel<ImageClassifier> {
 public:
  MeanPooledClassifier(std::unique_ptr<VisionTransformer> t, int64_t num_labels, int64_t first_token);
  int64_t num_labels() const override { return labels_; }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override;

  Linear* classifier;

 private:
  int64_t labels_, first_token_;
};

}  // namespace mobius
