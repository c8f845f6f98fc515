// Where the graphs of a package lie: the one table from a graph's role (the names tasks give their
// graphs, tasks/: "model" for single-graph tasks, "encoder" and "decoder" for text2text-generation
// and speech-to-text, "vision", "speech", "embedding" and "decoder" for image-text-to-text) to its
// file in each package layout.
// - flat: OUTPUT_DIR/<role>.onnx + OUTPUT_DIR/<role>.onnx.data (the layout onnxruntime-genai's
//   model builder writes).
// - hf: the Hugging Face layout Optimum and transformers.js read: OUTPUT_DIR/onnx/<file>.onnx +
//   OUTPUT_DIR/onnx/<file>.onnx_data with the Hugging Face file names (model, encoder_model,
//   decoder_model_merged, vision_encoder, audio_encoder, embed_tokens: transformers.js
//   src/models.js session names, Optimum's ONNX_ENCODER_NAME / ONNX_DECODER_MERGED_NAME).
// The JSON, tokenizer and processor files stay at the top of the package in both.
#pragma once

#include <string>
#include <string_view>

namespace mobius {

enum class PackageLayout { hf, flat };

// The folder of the hf layout's graphs.
inline constexpr const char* kHfGraphDir = "onnx";

struct GraphFileName {
  const char* role;     // the task's graph name
  const char* hf_stem;  // its file name in the hf layout, without ".onnx"
};

inline constexpr GraphFileName kGraphFileNames[] = {
    {"model", "model"},
    {"encoder", "encoder_model"},
    {"decoder", "decoder_model_merged"},
    {"vision", "vision_encoder"},
    {"speech", "audio_encoder"},
    {"embedding", "embed_tokens"},
    // diffusers components (registry/diffusers_registry.h), until the package layer gives each its folder
    {"vae_encoder", "vae_encoder"},
    {"vae_decoder", "vae_decoder"},
    {"unet", "unet"},
};

// The graph file of `role` relative to the package directory: "model.onnx" (flat) or
// "onnx/model.onnx" (hf). Throws mobius::Error for a role not in kGraphFileNames (a task naming a
// graph the table lacks: add it there).
std::string graph_file(std::string_view role, PackageLayout layout);

// The external-data file of `role`'s graph, a name relative to the graph file's own folder (the
// location written into the graph's initializers): "model.onnx.data" (flat) or
// "model.onnx_data" (hf, the only name transformers.js' browser path fetches).
std::string graph_data_file(std::string_view role, PackageLayout layout);

// The external-data file of `role`'s graph relative to the package directory: "model.onnx.data"
// (flat) or "onnx/model.onnx_data" (hf).
std::string graph_data_path(std::string_view role, PackageLayout layout);

// "hf" or "flat".
const char* layout_word(PackageLayout layout);

// The layout named `word` ("hf" or "flat", any case); throws mobius::Error "unknown --layout '...'" else.
PackageLayout parse_layout(std::string_view word);

}  // namespace mobius
