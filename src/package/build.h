// The main job: a Hugging Face checkpoint directory (or a .gguf file) in, an ONNX package out.
#pragma once

#include <string>
#include <vector>

#include "ir/dtype.h"

namespace mobius {

struct BuildOptions {
  std::string config_dir;   // holds config.json and *.safetensors
  std::string gguf_file;    // or: a .gguf file (config from its metadata); exactly one is set
  std::string output_dir;
  DataType dtype = DataType::FLOAT;
  bool weights = true;      // false = --no-weights
  bool force = false;
  bool progress = false;
  std::string runtime = "ort-genai";  // ort-genai: also write genai_config.json + tokenizer files
  std::string ep = "cpu";             // execution provider named in genai_config.json
};

struct BuildReport {
  std::string model_type;
  std::string task;
  size_t num_nodes = 0;
  size_t num_weights = 0;
  int tokenizer_files = 0;  // copied next to the model (ort-genai runtime)
  std::vector<std::string> unused_tensors;  // checkpoint tensors the model does not read
};

// Reads config.json (or synthesizes it from the GGUF metadata, weights/gguf_checkpoint.h), builds
// the graph for its model_type, binds the checkpoint strictly (unless --no-weights) and writes the
// package. Throws mobius::Error with a one-line message naming the file and field or tensor; on
// error nothing is left in output_dir.
BuildReport build_package(const BuildOptions& options);

}  // namespace mobius
