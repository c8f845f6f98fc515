// Task image-text-to-text: a vision-language model (transformers AutoModelForImageTextToText) as
// the three graphs of onnxruntime-genai's multimodal pipeline (docs/vlm.md; onnxruntime-genai
// src/models/multi_modal.cpp):
//   vision:    the family's image inputs (vision_inputs(): pixel_values, image_grid_thw, ...)
//           -> image_features [num_image_tokens, hidden_size] in the model dtype
//   embedding: input_ids [batch_size, sequence_length] int64,
//              image_features [num_image_tokens, hidden_size]
//           -> inputs_embeds [batch_size, sequence_length, hidden_size]: the text decoder's token
//              embeddings with image_features row k in place of the k-th image_token_id() token
//              (row-major over the batch), as transformers' masked_scatter; zero rows are allowed
//              (a text-only prompt or a decode step: onnxruntime-genai feeds [0, hidden_size]),
//              and, in a family onnxruntime-genai does not run (genai_multimodal() unset),
//              image_features is optional with that as its default (an initializer of the same
//              name): transformers.js calls the graph with input_ids alone (onnxruntime-genai
//              0.18 refuses such an input: "Model input was not found")
//   decoder:   the text-generation contract (tasks/text_generation.h) with
//              inputs_embeds [batch_size, sequence_length, hidden_size] in place of input_ids
//              (input_ids too when decoder_input_ids(), for the attention_overlay hook) and
//              position_ids shaped position_ids_shape() ([3, batch_size, sequence_length] for
//              M-RoPE) -> logits, present.{i}.key|value
//   speech:    (a family with speech_inputs(): Phi-4-multimodal) its audio inputs
//           -> audio_features [num_audio_tokens, hidden_size]; the embedding graph then also takes
//              audio_features (optional as image_features), scattered at audio_token_id()
// The decoder is a registered text architecture (text()), started from inputs_embeds.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tasks/text_generation.h"

namespace mobius {

// A graph input: its name, element type and shape (symbolic or fixed dims).
struct GraphInput {
  std::string name;
  DataType dtype;
  Shape shape;
};

class ImageTextToText : public Architecture {
 public:
  std::string task() const override { return "image-text-to-text"; }
  // "vision", ("speech",) "embedding", "decoder".
  std::vector<NamedGraph> build_graphs() const override;
  // onnxruntime-genai's files (tasks/genai_config.h) for --runtime ort-genai: genai_config.json, vision_processor.json (and speech_processor.json) when genai_multimodal() is set
  void write_runtime_files(const RuntimeFilesContext& ctx, const std::string& dir) const override;

  // The text decoder (a registered text-generation architecture).
  virtual const CausalLM& text() const = 0;
  // Its token embeddings: input_ids int64 [batch, seq] -> [batch, seq, hidden_size].
  virtual Value* embed_tokens(Ops& op, Value* input_ids) const = 0;
  virtual int64_t hidden_size() const = 0;
  // The token whose positions take the image features (config.json image_token_id).
  virtual int64_t image_token_id() const = 0;
  // The vision graph's inputs, and its computation: the inputs in that order ->
  // image_features [num_image_tokens, hidden_size].
  virtual std::vector<GraphInput> vision_inputs() const = 0;
  virtual Value* encode_images(Ops& op, const std::vector<Value*>& inputs) const = 0;
  // A family with an audio encoder (Phi-4-multimodal): the speech graph's inputs and its
  // computation (the inputs in that order -> audio_features [num_audio_tokens, hidden_size]), and
  // the token whose positions take the audio features. No inputs (the default): no speech graph.
  // With one, the package has a "speech" graph and the embedding graph also reads audio_features
  // [num_audio_tokens, hidden_size] (zero rows allowed), scattered at audio_token_id() as
  // image_features at image_token_id().
  virtual std::vector<GraphInput> speech_inputs() const { return {}; }
  virtual Value* encode_audio(Ops& op, const std::vector<Value*>& inputs) const {
    (void)op, (void)inputs;
    return nullptr;
  }
  virtual int64_t audio_token_id() const { return -1; }
  // The decoder's position_ids shape (int64).
  virtual Shape position_ids_shape() const { return {"batch_size", "sequence_length"}; }
  // Whether the decoder graph also reads input_ids int64 [batch_size, sequence_length] (the
  // tokens of inputs_embeds; onnxruntime-genai feeds a decoder that declares it at every step),
  // for attention_overlay.
  virtual bool decoder_input_ids() const { return false; }
  // The decoder's attention beyond causality (CausalLMInputs::attention_overlay,
  // blocks/attention_overlay.h) from the decoder's inputs (in.input_ids set when
  // decoder_input_ids()); null, the default: causal.
  virtual Value* attention_overlay(Ops& op, const CausalLMInputs& in) const {
    (void)op, (void)in;
    return nullptr;
  }

  // What onnxruntime-genai's multimodal pipeline needs of a family it runs
  // (tasks/genai_config.h genai_config_multimodal; docs/vlm.md).
  struct GenaiMultimodal {
    std::string type;  // model.type, e.g. "qwen2_5_vl"
    int64_t patch_size, spatial_merge_size, temporal_patch_size;  // Qwen's patches (0: none)
    std::vector<std::pair<std::string, int64_t>> token_ids;  // model-level ids, e.g. image_token_id
    int64_t image_size = 0;  // gemma3: the square the processor resizes images to
  };
  // None for a family onnxruntime-genai 0.18 does not run.
  virtual std::optional<GenaiMultimodal> genai_multimodal() const { return std::nullopt; }

 private:
  Model build_vision() const;
  Model build_speech() const;
  Model build_embedding() const;
  Model build_decoder() const;
};

}  // namespace mobius
