#include "tasks/image_text_to_text.h"

#include "util/error.h"

namespace mobius {

std::vector<NamedGraph> ImageTextToText::build_graphs() const {
  std::vector<NamedGraph> graphs;
  graphs.emplace_back(GraphPath{"vision", hf_graph::vision}, build_vision(), GraphLowering::attention);  // a Linear-heavy tower, as the encoders
  if (!speech_inputs().empty()) graphs.emplace_back(GraphPath{"speech", hf_graph::audio}, build_speech(), GraphLowering::canonical);
  graphs.emplace_back(GraphPath{"embedding", hf_graph::embed_tokens}, build_embedding(), GraphLowering::canonical);
  graphs.emplace_back(GraphPath{"decoder", hf_graph::decoder}, build_decoder(), GraphLowering::causal_lm);
  return graphs;
}

Model ImageTextToText::build_vision() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  std::vector<Value*> inputs;
  for (const GraphInput& in : vision_inputs()) inputs.push_back(b.input(in.name, in.dtype, in.shape));
  b.output(encode_images(op, inputs), "image_features", {"num_image_tokens", hidden_size()});
  return model;
}

Model ImageTextToText::build_speech() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  std::vector<Value*> inputs;
  for (const GraphInput& in : speech_inputs()) inputs.push_back(b.input(in.name, in.dtype, in.shape));
  b.output(encode_audio(op, inputs), "audio_features", {"num_audio_tokens", hidden_size()});
  return model;
}

namespace {

// embeds [batch, seq, hidden] with row k of features at the k-th `token` of ids (row-major), as
// transformers' masked_scatter / index_put. With no feature rows (a decode step whose token is
// `token`, a text-only prompt containing it) every token keeps its table embedding, as
// transformers without pixel_values; with rows, a count that differs from the tokens' is a Gather
// out of bounds (transformers: "Image features and image tokens do not match").
Value* scatter_features(Ops& op, Value* ids, Value* embeds, Value* features, int64_t token, int64_t hidden,
                        DataType dt) {
  GraphBuilder& b = op.builder();
  Value* rows_given = op.Greater(op.Shape(features, {.start = 0, .end = 1}), 0);  // bool [1]
  Value* is_token = op.And(op.Equal(ids, static_cast<double>(token)), rows_given);  // [batch, seq]
  Value* flat = op.Reshape(op.Cast(is_token, {.to = DataType::INT64}), std::vector<int64_t>{-1});
  // 1-based row of each token (0 elsewhere) into [0; features]
  Value* rows = op.Mul(op.CumSum(flat, b.scalar_i64(0)), flat);
  Value* padded = op.Concat({b.constant_float(std::vector<float>(static_cast<size_t>(hidden), 0.0f), {1, hidden}, dt),
                             features},
                            {.axis = 0});
  Value* scattered = op.Reshape(op.Gather(padded, rows), op.Shape(embeds));
  return op.Where(op.Unsqueeze(is_token, {-1}), scattered, embeds);
}

}  // namespace

Model ImageTextToText::build_embedding() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const DataType dt = text().dtype();
  const int64_t hidden = hidden_size();
  Value* ids = b.input("input_ids", DataType::INT64, {"batch_size", "sequence_length"});
  // The feature inputs: optional with no rows as the default (callable with input_ids alone, as
  // transformers.js calls embed_tokens), except in a family onnxruntime-genai runs: 0.18 binds
  // only graph inputs that are not initializers ("Model input was not found: image_features").
  const bool genai = genai_multimodal().has_value();
  auto features_input = [&](const char* name, const char* rows) {
    return genai ? b.input(name, dt, {rows, hidden})
                 : model.graph.add_optional_input(name, dt, {rows, hidden}, {int64_t{0}, hidden});
  };
  Value* features = features_input("image_features", "num_image_tokens");
  Value* embeds = embed_tokens(op, ids);
  {
    auto s = b.scope("merge_image_features");
    embeds = scatter_features(op, ids, embeds, features, image_token_id(), hidden, dt);
  }
  if (!speech_inputs().empty()) {
    Value* audio = features_input("audio_features", "num_audio_tokens");
    auto s = b.scope("merge_audio_features");
    embeds = scatter_features(op, ids, embeds, audio, audio_token_id(), hidden, dt);
  }
  b.output(embeds, "inputs_embeds", {"batch_size", "sequence_length", hidden});
  return model;
}

Model ImageTextToText::build_decoder() const {
  Model model;
  GraphBuilder b(model.graph);
  Ops op(b);
  const CausalLM& lm = text();
  const std::vector<LayerStates> states = lm.layer_states();
  const DataType dt = lm.dtype();
  CausalLMInputs in;
  in.input_ids = decoder_input_ids() ? b.input("input_ids", DataType::INT64, {"batch_size", "sequence_length"}) : nullptr;
  in.inputs_embeds = b.input("inputs_embeds", dt, {"batch_size", "sequence_length", hidden_size()});
  in.attention_mask = b.input("attention_mask", DataType::INT64, {"batch_size", "total_sequence_length"});
  in.position_ids = b.input("position_ids", DataType::INT64, position_ids_shape());
  in.past = past_inputs(b, dt, states);
  in.attention_overlay = attention_overlay(op, in);
  CausalLMOutputs out = lm.forward(op, in);
  b.output(out.logits, "logits", {"batch_size", "sequence_length", lm.vocab_size()});
  present_outputs(b, out.present, states);
  return model;
}

}  // namespace mobius
