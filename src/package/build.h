// The main job: a Hugging Face checkpoint directory (or a .gguf file) in, an ONNX package out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "eval/self_check.h"
#include "ir/dtype.h"
#include "passes/passes.h"

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
  // --ep: the execution-provider lowering (passes/passes.h) and the provider named in
  // genai_config.json: default, onnx-standard, cpu, cuda, dml or webgpu.
  std::string ep = "default";
  // --precision: "" (float, at `dtype`), "int4" or "int8": every Linear weight (and with
  // quantize_lm_head the LM head) block-quantized into com.microsoft MatMulNBits (passes/passes.h
  // QuantizeOptions, weights/quantize.h), blocks of block_size (32, 64 or 128) along the input
  // features, quant_scheme "sym" or "asym", MatMulNBits accuracy_level 0..4 (0: unset).
  std::string precision;
  int64_t block_size = 32;
  std::string quant_scheme = "sym";
  int accuracy_level = 0;
  bool quantize_lm_head = false;
  bool quantize_embeddings = false;  // Gather of the embeddings → GatherBlockQuantized
  // An unregistered model_type whose config.json is Llama-like (package/generic.h) is built with
  // the generic Llama decoder and committed only if the self-check passes (float32, weights).
  bool try_generic = false;
};

struct BuildReport {
  std::string model_type;
  std::string task;
  size_t num_nodes = 0;
  size_t num_weights = 0;
  int tokenizer_files = 0;  // copied next to the model (ort-genai runtime)
  std::vector<std::string> unused_tensors;  // checkpoint tensors the model does not read
  bool generic = false;                     // built with the generic Llama decoder (--try-generic)
  std::optional<eval::SelfCheckResult> self_check;  // the passed self-check, when generic
  std::vector<PassReport> passes;           // the --ep lowering: rewrites per pass
};

// Reads config.json (or synthesizes it from the GGUF metadata, weights/gguf_checkpoint.h), builds
// the graph for its model_type, binds the checkpoint strictly (unless --no-weights) and writes the
// package. Throws mobius::Error with a one-line message naming the file and field or tensor; on
// error nothing is left in output_dir. An unregistered model_type is an error naming the nearest
// registered ones (and --try-generic when the config is Llama-like); with try_generic it is built
// as described in package/generic.h, and a failed self-check is an error naming its figures.
// Quantization options out of range, with --dtype bf16 (MatMulNBits has no CPU kernel for it) or
// with --try-generic (its evaluator has no MatMulNBits), or set without --precision: an error.
BuildReport build_package(const BuildOptions& options);

}  // namespace mobius
