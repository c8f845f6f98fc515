#include "tasks/zero_shot_image_classification.h"

namespace mobius {

namespace {

// input_ids, attention_mask: the text inputs of both dual-model contracts.
std::pair<Value*, Value*> text_inputs(GraphBuilder& b) {
  const Shape tokens{"text_batch_size", "sequence_length"};
  return {b.input("input_ids", DataType::INT64, tokens), b.input("attention_mask", DataType::INT64, tokens)};
}

void image_text_outputs(GraphBuilder& b, Ops& op, const ImageTextOutputs& out, int64_t embed_size) {
  b.output(op.Transpose(out.logits_per_text, {.perm = {1, 0}}), "logits_per_image", {"image_batch_size", "text_batch_size"});
  b.output(out.logits_per_text, "logits_per_text", {"text_batch_size", "image_batch_size"});
  b.output(out.text_embeds, "text_embeds", {"text_batch_size", embed_size});
  b.output(out.image_embeds, "image_embeds", {"image_batch_size", embed_size});
}

}  // namespace

Model ImageTextModel::build_model() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  auto [ids, mask] = text_inputs(b);
  Value* pixels = b.input("pixel_values", dtype(), {"image_batch_size", num_channels(), image_size(), image_size()});
  image_text_outputs(b, op, forward(op, ids, mask, pixels), embed_size());
  return model;
}

Model PatchSequenceImageTextModel::build_model() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  auto [ids, mask] = text_inputs(b);
  const PatchSequence images = patch_sequence_inputs(b, dtype(), patch_dim(), "image_batch_size");
  image_text_outputs(b, op, forward(op, ids, mask, images), embed_size());
  return model;
}

ImageTextOutputs contrastive(Ops& op, Value* text_features, Value* image_features, Value* logit_scale) {
  auto l2_normalize = [&](Value* x) { return op.Div(x, op.Sqrt(op.ReduceSum(op.Mul(x, x), {-1}))); };
  Value* text_embeds = l2_normalize(text_features);
  Value* image_embeds = l2_normalize(image_features);
  Value* logits = op.Mul(op.MatMul(text_embeds, op.Transpose(image_embeds, {.perm = {1, 0}})), op.Exp(logit_scale));
  return {text_embeds, image_embeds, logits};
}

}  // namespace mobius
