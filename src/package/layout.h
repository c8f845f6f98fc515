// Where the graphs of a package lie. Each graph a task builds names its own files (GraphPath, set
// by the task: tasks/architecture.h NamedGraph):
// - flat: OUTPUT_DIR/<name>.onnx + OUTPUT_DIR/<name>.onnx.data (the layout onnxruntime-genai's
//   model builder writes).
// - hf: the Hugging Face layout Optimum and transformers.js read: OUTPUT_DIR/<hf>.onnx +
//   OUTPUT_DIR/<hf>.onnx_data, <hf> being the graph's Hugging Face file (the hf_graph names below
//   for one model's graphs under onnx/; one folder per component for a pipeline, as Optimum's and
//   diffusers' ONNX pipelines lay them out: unet/model).
// The JSON, tokenizer and processor files stay at the top of the package in both.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mobius {

enum class PackageLayout { hf, flat };

// The folder of one model's graphs in the hf layout.
inline constexpr const char* kHfGraphDir = "onnx";

// The Hugging Face graph files of one model's package, relative to it, without ".onnx"
// (transformers.js src/models.js session names; Optimum's ONNX_ENCODER_NAME, ONNX_DECODER_MERGED_NAME).
namespace hf_graph {
inline constexpr const char* model = "onnx/model";
inline constexpr const char* encoder = "onnx/encoder_model";
inline constexpr const char* decoder = "onnx/decoder_model_merged";
inline constexpr const char* vision = "onnx/vision_encoder";
inline constexpr const char* audio = "onnx/audio_encoder";
inline constexpr const char* embed_tokens = "onnx/embed_tokens";
// a diffusion pipeline's components, one folder each (Optimum's ORTDiffusionPipeline, diffusers'
// OnnxStableDiffusionPipeline)
inline constexpr const char* vae_encoder = "vae_encoder/model";
inline constexpr const char* vae_decoder = "vae_decoder/model";
inline constexpr const char* unet = "unet/model";
inline constexpr const char* transformer = "transformer/model";
inline constexpr const char* controlnet = "controlnet/model";
inline constexpr const char* adapter = "adapter/model";
}  // namespace hf_graph

// The files of one graph: `name` is its role (the flat layout's file stem and the name messages
// and onnxruntime-genai's config use: "model", "encoder", "decoder", "vision", "unet"); `hf` its
// file in the hf layout relative to the package, without ".onnx" (a relative path of plain names,
// checked by the writer).
struct GraphPath {
  std::string name;
  std::string hf;
};

// The graphs the tasks of one model name (model, encoder, decoder, vision, speech, embedding) with
// their hf_graph files: what a reader of a package (apply-weights, the Python module's
// Package.open) looks for. A pipeline's components lie in their own folders (<component>/model).
const std::vector<GraphPath>& model_graph_paths();

// The graph file relative to the package directory: "model.onnx" (flat) or "onnx/model.onnx" (hf).
std::string graph_file(const GraphPath& g, PackageLayout layout);

// The external-data file, a name relative to the graph file's own folder (the location written
// into the graph's initializers): "model.onnx.data" (flat) or "model.onnx_data" (hf, the only name
// transformers.js' browser path fetches).
std::string graph_data_file(const GraphPath& g, PackageLayout layout);

// The external-data file relative to the package directory: "model.onnx.data" (flat) or
// "onnx/model.onnx_data" (hf).
std::string graph_data_path(const GraphPath& g, PackageLayout layout);

// The suffixes of a graph file's variants (transformers.js src/utils/dtypes.js
// DEFAULT_DTYPE_SUFFIX_MAPPING for fp32, fp16, q4, q4f16, q8: driver/build.h variant_dtype).
inline constexpr const char* kVariantSuffixes[] = {"", "_fp16", "_q4", "_q4f16", "_quantized"};

// `g` with `suffix` appended to both file stems: the Hugging Face name of a variant that lives
// beside others in one package ("model" + "_q4": onnx/model_q4.onnx; transformers.js
// src/utils/dtypes.js DEFAULT_DTYPE_SUFFIX_MAPPING).
GraphPath with_suffix(const GraphPath& g, std::string_view suffix);

// "hf" or "flat".
const char* layout_word(PackageLayout layout);

// The layout named `word` ("hf" or "flat", any case); throws mobius::Error "unknown --layout '...'" else.
PackageLayout parse_layout(std::string_view word);

}  // namespace mobius
