// ONNX Runtime GenAI package files: genai_config.json (format: onnxruntime.ai/docs/genai/reference/config.html)
// and the checkpoint's tokenizer files copied next to the model.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "config/hf_config.h"
#include "tasks/speech_to_text.h"
#include "tasks/image_text_to_text.h"
#include "tasks/text_generation.h"

namespace mobius {

struct GenaiOptions {
  std::string ep = "cpu";                   // execution provider for session_options (--ep)
  // true only when the graph uses GroupQueryAttention: genai then allocates past and present as
  // one max_length buffer per layer and feeds it as both (the op writes the new keys in place)
  bool past_present_share_buffer = false;
  bool position_ids = true;                 // the model has a position_ids input
  // the role of the text decoder's graph (package/layout.h): "model", or "decoder" in an
  // image-text-to-text package
  std::string graph = "model";
  // each graph's file relative to the package, by role, where the layout puts it (package/layout.h
  // graph_file): {"model": "onnx/model.onnx"}
  std::map<std::string, std::string> files;
  // model.type: the registry row's onnxruntime-genai type (registry.h genai_model_type)
  std::string type = "decoder";
};

// The model's context length: max_position_embeddings (or n_positions, seq_length, max_seq_len;
// 4096 when none is set), times the factor of a "dynamic" RoPE, which extends it.
int64_t context_length(const HfConfig& config);

// The genai_config.json for a text-generation model. Model facts come from the architecture
// (cache layout, vocab size) and config.json (hidden size, heads, context length, bos/eos/pad
// token ids); search defaults from generation_config.json in `checkpoint_dir` when present
// (`checkpoint_dir` empty: none, as for GGUF input). Token ids must be integers in
// [0, vocab_size) (a negative pad_token_id, an old "none" convention, is dropped and pad falls
// back to eos); do_sample a bool, top_k a non-negative integer, temperature, top_p and
// repetition_penalty finite non-negative numbers: else mobius::Error naming the file and field.
// model.type is options.type. Search options absent from
// generation_config.json take transformers' GenerationConfig defaults (top_k 50, temperature 1). Throws
// mobius::Error naming config.json when the value cache's head size differs from the key cache's
// (DeepSeek multi-head latent attention), which onnxruntime-genai cannot allocate.
nlohmann::json genai_config(const CausalLM& model, const HfConfig& config,
                            const std::string& checkpoint_dir, const GenaiOptions& options);

// The genai_config.json of a speech-to-text model for onnxruntime-genai's "whisper" model type
// (src/models/whisper.cpp; the keys and values of its 0.18 builder, builders/whisper.py
// make_genai_config, with the graph I/O names of tasks/speech_to_text.h; docs/speech.md): encoder
// and decoder sections, context_length = max_target_positions, bos/eos/pad token ids as for
// text-generation (generation_config.json first), greedy search without a shared past/present
// buffer (the decoder's attention is the plain ONNX op), the "encoder" and "decoder" graph files
// of `files` (GenaiOptions::files). Throws mobius::Error naming the file and field for a token id
// outside [0, vocab_size).
nlohmann::json whisper_genai_config(const SpeechToText& model, const HfConfig& config, const std::string& checkpoint_dir,
                                    const std::string& ep, const std::map<std::string, std::string>& files);

// audio_processor_config.json: the onnxruntime-extensions feature extraction onnxruntime-genai's
// WhisperProcessor runs (AudioDecoder, STFTNorm n_fft 400 hop 160, LogMelSpectrum of 30 s chunks
// with `num_mel_bins` bins), as the 0.18 builder writes it.
nlohmann::json whisper_audio_processor_config(int64_t num_mel_bins);

// The genai_config.json of an image-text-to-text package that onnxruntime-genai's multimodal
// pipeline runs (model.genai_multimodal() set; docs/vlm.md): genai_config() of the text decoder
// (`options.graph` its graph; the text fields from config.json's text_config, else its top
// level) with model.type, the model-level token ids, decoder.inputs.inputs_embeds and the vision
// and embedding sections (their graphs' options.files, vision_processor.json). Throws
// mobius::Error as genai_config().
nlohmann::json genai_config_multimodal(const ImageTextToText& model, const HfConfig& config,
                                       const std::string& checkpoint_dir, const GenaiOptions& options);

// The vision_processor.json of onnxruntime-extensions' image processor for model.type
// `m.type` (qwen2_5_vl, qwen3_vl: decode, RGB, smart resize, rescale, normalization (CLIP's;
// qwen3_vl 0.5), patches; the sizes from `m`, the pixel bounds of Qwen2VLImageProcessor;
// mistral3: pixtral_image_processor, ending in PixtralImageSizes; gemma3: decode, RGB, bilinear
// resize to the m.image_size square, rescale, normalization 0.5, channels first, as
// Gemma3ImageProcessor; phi4mm: phi_4_vision_processor, the HD crops of m.image_size), as
// onnxruntime-genai 0.18 reads it (named by vision.config_filename: not processor_config.json,
// which is transformers' processor file, copied from the checkpoint). The vision section of
// genai_config_multimodal names the vision graph's inputs (model.vision_inputs()) and, where
// m.patch_size is set (Qwen, Mistral 3), the patch sizes.
nlohmann::json processor_config(const ImageTextToText::GenaiMultimodal& m);

// phi4mm's speech_processor.json (the speech section's config_filename, written when the family has a
// speech graph): onnxruntime-extensions' AudioDecoderEx (8 and 16 kHz) and Phi4AudioEmbed (log-mel
// frames of Phi4MultimodalFeatureExtractor's sizes: 80 mels, 25 ms windows every 10 ms at 16 kHz,
// audio_compression_rate 8), as its test/data/models/phi-4/audio_feature_extraction.json fixture.
// Its features are not bit-equal to transformers' feature extractor (max |Δ| 0.07 on values up to
// 24 for a 1.3 s tone with noise): docs/vlm.md.
nlohmann::json speech_processor_config(const ImageTextToText::GenaiMultimodal& m);

}  // namespace mobius
