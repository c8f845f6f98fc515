// CLIP (transformers/models/clip/modeling_clip.py; configuration_clip.py):
//   clip_vision_model  CLIPVisionModel (image-feature-extraction): the tower
//                      (archs/vision_towers.h); pooler_output = post_layernorm(x[:, 0])
//   clip_text_model    CLIPTextModel (feature-extraction): the causal text tower's
//                      last_hidden_state (its pooled eos token is the dual model's)
//   clip_text_model with CLIPTextModelWithProjection (config.json architectures; feature-extraction,
//                      SDXL's text_encoder_2): text_model.*, text_embeds =
//                      text_projection(last[i_eos]) (not normalized), last_hidden_state and
//                      hidden_states.{0..num_hidden_layers} (Optimum's CLIPTextWithProjectionOnnxConfig
//                      with output_hidden_states, as its SDXL export sets it: the pipeline reads the
//                      penultimate)
//   clip_text_model in a diffusers pipeline (create_clip_pipeline_text_encoder): CLIPTextModel or
//                      CLIPTextModelWithProjection as the pipelines call it, input_ids alone, with
//                      every hidden state (CLIPTextModel: last_hidden_state, pooler_output =
//                      last[i_eos], hidden_states.{0..num_hidden_layers}: Optimum's
//                      CLIPTextOnnxConfig, SDXL reads the penultimate, Flux the pooler_output)
//   the same causal text tower in other families' *TextModel (feature-extraction), clip_text_tower
//   with the family's config class defaults and weight prefix:
//     owlvit_text_model     OwlViTTextModel (modeling_owlvit.py): text_model.*
//     owlv2_text_model      Owlv2TextModel (modeling_owlv2.py): text_model.*
//     groupvit_text_model   GroupViTTextModel (modeling_groupvit.py): text_model.*
//     xclip_text_model      XCLIPTextModel (modeling_x_clip.py)
//     clipseg_text_model    CLIPSegTextModel (modeling_clipseg.py)
//     metaclip_2_text_model MetaClip2TextModel (modeling_metaclip_2.py); with
//                           MetaClip2TextModelWithProjection (config.json architectures) the outputs of
//                           CLIPTextModelWithProjection's, the eos token found as eos_token_id always
//                           (also 2, which its released configs set: no legacy largest id)
//   (AIMv2's text tower has other layers: archs/aimv2.cpp.) Every *TextModel also returns
//   pooler_output, the state at the pooled token (the first eos_token_id; OwlViT: the largest id):
//   a row of last_hidden_state, so not an output of the package, as for clip_text_model
//   (tasks/feature_extraction.h gives pooler_output only where it is not; Optimum's CLIP text
//   export adds it).
//   clip               CLIPModel (zero-shot-image-classification): text_model.*, vision_model.*,
//                      text_embeds = normalize(text_projection(last[i_eos])),
//                      image_embeds = normalize(visual_projection(vision pooler_output)),
//                      logits_per_text = text_embeds @ image_embeds^T * exp(logit_scale)
//   clip with CLIPForImageClassification (image-classification): vision_model.* only,
//                      logits = classifier(last_hidden_state[:, 1:].mean(1))
// i_eos: the first position of eos_token_id in each row of input_ids (the largest id when
// eos_token_id is 2, configs before transformers PR #24773, except MetaCLIP 2's); every row is
// assumed to hold one.
#include "archs/archs.h"
#include "archs/vision_towers.h"
#include "registry/config_defaults.h"
#include "registry/diffusers_registry.h"
#include "tasks/feature_extraction.h"
#include "tasks/zero_shot_image_classification.h"

namespace mobius {
namespace {

class ClipVisionModel : public TowerModel<ImageEncoder> {
 public:
  ClipVisionModel(const HfConfig& c, DataType dtype) {
    set_tower("", clip_vision_tower(c, dtype));
    const VisionLayerOptions& l = tower->options().layer;
    post_layernorm = child<LayerNorm>("post_layernorm",
                                      NormOptions{.dim = l.hidden_size, .eps = l.layer_norm_eps, .dtype = dtype});
  }
  ImageEncoderOutputs forward(Ops& op, Value* pixel_values) const override {
    Value* last = tower->forward(op, pixel_values).last_hidden_state;
    return {last, post_layernorm->forward(op, token_at(op, last, 0))};
  }

  LayerNorm* post_layernorm;
};

// config_type: clip_text_model or another family's copy of it, its weights under `prefix` ("" = the
// checkpoint's top level).
// The causal text tower of `config_type`'s config class at checkpoint prefix `prefix`.
std::unique_ptr<TextTowerEncoder> clip_text_tower(const HfConfig& c, const char* config_type, const std::string& prefix,
                                                  DataType dtype) {
  return std::make_unique<TextTowerEncoder>(
      prefix, std::make_unique<TextTransformer>(c, config_type, TextTransformer::Mask::causal, dtype), dtype);
}

// CLIPTextConfig's eos_token_id default (read without a *_or accessor: the generated defaults table
// would give every type an eos_token_id row).
int64_t clip_eos_token_id(const HfConfig& text_config) {
  return text_config.has("eos_token_id") ? text_config.get_int("eos_token_id") : 49407;
}

// projection_dim of a CLIP config (CLIPConfig, CLIPTextConfig: default 512).
int64_t clip_projection_dim(const HfConfig& c) {
  const int64_t n = c.int_or("projection_dim", 512);
  if (n < 1 || n > kMaxHiddenSize) c.fail("projection_dim", "expected a positive width");
  return n;
}

// x [batch, seq, hidden] at the first position of `eos` in each row of ids (with legacy_eos the
// first largest id when eos is 2) -> [batch, hidden]: a one-hot row times x (exact: one 1, zeros
// elsewhere).
Value* eos_token(Ops& op, Value* x, Value* ids, int64_t eos, bool legacy_eos = true) {
  Value* target = legacy_eos && eos == 2 ? op.ReduceMax(ids, {1}) : op.builder().scalar_i64(eos);
  Value* hit = op.Cast(op.Equal(ids, target), {.to = x->dtype});  // [batch, seq]
  Value* seq = op.Shape(ids, {.start = 1, .end = 2});
  Value* pos = op.Range(op.builder().scalar_i64(0), op.Squeeze(seq, {0}), op.builder().scalar_i64(1));
  // seq - pos on the hits, 0 elsewhere: the first hit has the largest value
  Value* rank = op.Mul(hit, op.Cast(op.Sub(seq, pos), {.to = x->dtype}));
  Value* first = op.Cast(op.Equal(rank, op.ReduceMax(rank, {1})), {.to = x->dtype});
  return op.Squeeze(op.MatMul(op.Unsqueeze(first, {1}), x), {1});
}

class ClipModel : public ImageTextModel {
 public:
  ClipModel(const HfConfig& c, DataType dtype) : dtype_(dtype) {
    const HfConfig text_config = with_class_defaults(sub_config(c, "text_config"), "clip_text_model");
    eos_ = clip_eos_token_id(text_config);
    text = adopt("text_model", std::make_unique<TextTransformer>(text_config, "clip_text_model",
                                                                 TextTransformer::Mask::causal, dtype));
    vision = adopt("vision_model", clip_vision_tower(sub_config(c, "vision_config"), dtype));
    const VisionLayerOptions& l = vision->options().layer;
    post_layernorm = child<LayerNorm>("vision_model.post_layernorm",
                                      NormOptions{.dim = l.hidden_size, .eps = l.layer_norm_eps, .dtype = dtype});
    projection_dim_ = clip_projection_dim(c);
    visual_projection = child<Linear>("visual_projection", LinearOptions{l.hidden_size, projection_dim_, false, dtype});
    text_projection = child<Linear>("text_projection", LinearOptions{text->hidden_size(), projection_dim_, false, dtype});
    logit_scale = param("logit_scale", {}, dtype);
  }
  DataType dtype() const override { return dtype_; }
  int64_t num_channels() const override { return vision->options().embedding.num_channels; }
  int64_t image_size() const override { return vision->options().embedding.image_size; }
  int64_t embed_size() const override { return projection_dim_; }
  ImageTextOutputs forward(Ops& op, Value* ids, Value* mask, Value* pixels) const override {
    Value* t = text_projection->forward(op, eos_token(op, text->forward(op, ids, mask), ids, eos_));
    Value* last = vision->forward(op, pixels).last_hidden_state;
    Value* i = visual_projection->forward(op, post_layernorm->forward(op, token_at(op, last, 0)));
    return contrastive(op, t, i, logit_scale->value(op));
  }

  TextTransformer* text;
  VisionTransformer* vision;
  LayerNorm* post_layernorm;
  Linear *visual_projection, *text_projection;
  Parameter* logit_scale;

 private:
  DataType dtype_;
  int64_t eos_;
  int64_t projection_dim_;
};

// A CLIP text model's graph with every hidden state (Optimum's CLIPTextOnnxConfig /
// CLIPTextWithProjectionOnnxConfig with output_hidden_states): one graph "model",
//   input_ids int64 [batch_size, sequence_length]; with `Mask::input` also attention_mask int64
//   [batch_size, sequence_length], with `Mask::ones` none (every token attended, causally: what
//   transformers computes when called without a mask, as diffusers' pipelines call it)
//   -> with a projection (CLIPTextModelWithProjection): text_embeds [batch_size, projection_dim] =
//      text_projection(last[i_eos]), then last_hidden_state [batch_size, sequence_length, hidden_size];
//      without (CLIPTextModel): last_hidden_state, then pooler_output = last[i_eos] [batch_size,
//      hidden_size];
//      then hidden_states.{0..num_hidden_layers} [batch_size, sequence_length, hidden_size].
// CLIPTextModelWithProjection (config_type clip_text_model; MetaClip2TextModelWithProjection:
// metaclip_2_text_model, legacy_eos false) takes the mask as an input; a diffusers pipeline's CLIP
// text encoder (create_clip_pipeline_text_encoder) takes input_ids alone.
class ClipTextWithStates : public Architecture {
 public:
  enum class Mask { input, ones };
  ClipTextWithStates(const HfConfig& c, const char* config_type, bool legacy_eos, bool projection, Mask mask,
                     DataType dtype)
      : eos_(clip_eos_token_id(c)), projection_dim_(projection ? clip_projection_dim(c) : 0),
        legacy_eos_(legacy_eos), mask_(mask) {
    // CLIPTextModel's tower at the checkpoint's root (transformers 5's save; weights/weight_plan.h
    // legacy_keys reads transformers 4's text_model.*), CLIPTextModelWithProjection's under text_model
    text = adopt(projection ? "text_model" : "",
                 std::make_unique<TextTransformer>(c, config_type, TextTransformer::Mask::causal, dtype));
    if (projection)
      text_projection = child<Linear>("text_projection", LinearOptions{text->hidden_size(), projection_dim_, false, dtype});
  }
  std::string task() const override { return "feature-extraction"; }
  std::vector<NamedGraph> build_graphs() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const Shape tokens{"batch_size", "sequence_length"};
    Value* ids = b.input("input_ids", DataType::INT64, tokens);
    Value* mask = mask_ == Mask::input ? b.input("attention_mask", DataType::INT64, tokens)
                                       : op.Expand(b.scalar_i64(1), op.Shape(ids));
    const std::vector<Value*> states = text->hidden_states(op, ids, mask);
    Value* last = text->final_norm->forward(op, states.back());
    const Shape hidden{"batch_size", "sequence_length", text->hidden_size()};
    if (text_projection) {
      b.output(text_projection->forward(op, eos_token(op, last, ids, eos_, legacy_eos_)), "text_embeds",
               {"batch_size", projection_dim_});
      b.output(last, "last_hidden_state", hidden);
    } else {
      b.output(last, "last_hidden_state", hidden);
      b.output(eos_token(op, last, ids, eos_, legacy_eos_), "pooler_output", {"batch_size", text->hidden_size()});
    }
    for (size_t i = 0; i < states.size(); ++i) b.output(states[i], "hidden_states." + std::to_string(i), hidden);
    return single_graph(std::move(model), GraphLowering::attention);
  }

  TextTransformer* text;
  Linear* text_projection = nullptr;

 private:
  int64_t eos_, projection_dim_;
  bool legacy_eos_;
  Mask mask_;
};

}  // namespace

std::unique_ptr<Architecture> create_clip_vision_model(const HfConfig& c, DataType dtype) {
  return std::make_unique<ClipVisionModel>(c, dtype);
}

std::unique_ptr<Architecture> create_clip_text_model(const HfConfig& c, DataType dtype) {
  if (c.names_architecture("CLIPTextModelWithProjection"))
    return std::make_unique<ClipTextWithStates>(c, "clip_text_model", true, true, ClipTextWithStates::Mask::input, dtype);
  return clip_text_tower(c, "clip_text_model", "", dtype);
}

std::unique_ptr<Architecture> create_clip_pipeline_text_encoder(const HfConfig& c, DataType dtype) {
  return std::make_unique<ClipTextWithStates>(c, "clip_text_model", true,
                                              c.names_architecture("CLIPTextModelWithProjection"),
                                              ClipTextWithStates::Mask::ones, dtype);
}

std::unique_ptr<Architecture> create_owlvit_text_model(const HfConfig& c, DataType dtype) {
  return clip_text_tower(c, "owlvit_text_model", "text_model", dtype);
}

std::unique_ptr<Architecture> create_owlv2_text_model(const HfConfig& c, DataType dtype) {
  return clip_text_tower(c, "owlv2_text_model", "text_model", dtype);
}

std::unique_ptr<Architecture> create_groupvit_text_model(const HfConfig& c, DataType dtype) {
  return clip_text_tower(c, "groupvit_text_model", "text_model", dtype);
}

std::unique_ptr<Architecture> create_xclip_text_model(const HfConfig& c, DataType dtype) {
  return clip_text_tower(c, "xclip_text_model", "", dtype);
}

std::unique_ptr<Architecture> create_clipseg_text_model(const HfConfig& c, DataType dtype) {
  return clip_text_tower(c, "clipseg_text_model", "", dtype);
}

std::unique_ptr<Architecture> create_metaclip_2_text_model(const HfConfig& c, DataType dtype) {
  if (c.names_architecture("MetaClip2TextModelWithProjection"))
    return std::make_unique<ClipTextWithStates>(c, "metaclip_2_text_model", false, true,
                                                ClipTextWithStates::Mask::input, dtype);
  return clip_text_tower(c, "metaclip_2_text_model", "", dtype);
}

std::unique_ptr<Architecture> create_clip(const HfConfig& c, DataType dtype) {
  if (is_image_classification(c)) return std::make_unique<MeanPooledClassifier>(
        clip_vision_tower(sub_config(c, "vision_config"), dtype), label_count(c), 1);
  return std::make_unique<ClipModel>(c, dtype);
}

}  // namespace mobius
