// The main job: a Hugging Face checkpoint directory (or a .gguf file) in, an ONNX package out.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/hf_config.h"
#include "eval/self_check.h"
#include "ir/dtype.h"
#include "package/layout.h"
#include "passes/passes.h"
#include "registry/custom.h"
#include "registry/registry.h"
#include "tasks/sentence_embedding.h"
#include "tasks/architecture.h"
#include "weights/checkpoint.h"

namespace mobius {

// A build's dtype as transformers.js names it (src/utils/dtypes.js DEFAULT_DTYPE_SUFFIX_MAPPING),
// and the suffix of its graph files' Hugging Face names.
struct VariantDtype {
  const char* word;    // "fp32", "fp16", "q4", "q4f16", "q8"
  const char* suffix;  // "", "_fp16", "_q4", "_q4f16", "_quantized"
};

struct BuildOptions;
// The variant of a build of `o` (--variant): --dtype f32 or f16 without --precision (fp32, fp16),
// --precision int4 at f32 or f16 (q4, q4f16: MatMulNBits weights, float activations), int8 at
// f32 (q8). Throws mobius::Error naming the options for the others (bfloat16, int8 at f16,
// --precision keep: transformers.js names no such variant).
VariantDtype variant_dtype(const BuildOptions& o);

struct BuildOptions {
  // The source: exactly one of the two is set, and either may name any kind of source (synonyms,
  // told apart by driver/source_path.h classify_source): a checkpoint directory (config.json,
  // *.safetensors), a Hugging Face id (from the local cache) or a .gguf file.
  std::string config_dir;
  std::string gguf_file;
  std::string output_dir;
  // --layout: where the graphs go (package/layout.h): hf (onnx/ with the Hugging Face file names)
  // or flat (<graph>.onnx at the top)
  PackageLayout layout = PackageLayout::hf;
  DataType dtype = DataType::FLOAT;
  bool weights = true;      // false = --no-weights
  bool force = false;
  // --variant: name the graph files by their dtype as Hugging Face does where several live side by
  // side (onnx/model_q4.onnx, model_fp16.onnx, model_quantized.onnx: variant_dtype) and add them into
  // OUTPUT_DIR's previous package (package/writer.h WriteOptions::add)
  bool variant = false;
  bool progress = false;
  // ort-genai: also write genai_config.json + tokenizer files; optimum: the tokenizer files, and
  // the speech-to-text graphs in Optimum's contract (tasks/speech_to_text.h); none: the graphs only
  std::string runtime = "ort-genai";
  // --ep: the execution-provider lowering (passes/passes.h) and the provider named in
  // genai_config.json: default, onnx-standard, cpu, cuda, dml or webgpu.
  std::string ep = "default";
  // --task: the head of a text encoder (tasks/text_heads.h: feature-extraction, fill-mask,
  // text-classification, token-classification, question-answering, multiple-choice) or
  // sentence-embedding (tasks/sentence_embedding.h); "" = the one config.json's architectures
  // names, sentence-embedding for a text encoder with modules.json. Any other model takes only
  // its own task.
  std::string task;
  // --precision: "" (float, at `dtype`), "int4" or "int8": every Linear weight (and with
  // quantize_lm_head the LM head) block-quantized into com.microsoft MatMulNBits (passes/passes.h
  // QuantizeOptions, weights/quantize.h), blocks of block_size (32, 64 or 128) along the input
  // features, quant_scheme "sym" or "asym", MatMulNBits accuracy_level 0..4 (0: unset). Unset
  // optionals take the ORT GenAI model builder's default for `ep` (passes/passes.h
  // builder_quantize_defaults).
  std::string precision;
  int64_t block_size = 32;
  std::string quant_scheme = "sym";
  std::optional<int> accuracy_level;
  std::optional<bool> quantize_lm_head;
  std::optional<bool> quantize_embeddings;  // Gather of the embeddings → GatherBlockQuantized
  // An unregistered model_type whose config.json is Llama-like (driver/generic.h) is built with
  // the generic Llama decoder and committed only if the self-check passes (float32, weights).
  bool try_generic = false;
  // --lora: a PEFT LoRA adapter directory merged into the weights as they stream (weights/lora.h);
  // "" = none. Needs the weights; not with --precision keep.
  std::string lora_dir;
  // --lora-runtime: PEFT LoRA adapter directories, each written into the package as
  // <directory name>.onnx_adapter, the graph taking their weights as inputs (package/lora_runtime.h),
  // any --ep and --precision; single-graph packages.
  std::vector<std::string> lora_runtime;
  // The model.onnx this build must reproduce byte for byte, checked before anything is written
  // (driver/apply_weights.h), and the package directory holding it (an input: the output may not
  // be, contain or lie inside it); "" = no check.
  std::string expect_model;
  std::string expect_package;
};

struct BuildReport {
  std::string model_type;
  std::string task;
  size_t num_nodes = 0;
  size_t num_weights = 0;
  int tokenizer_files = 0;  // copied next to the model (ort-genai runtime)
  std::vector<std::string> unused_tensors;  // checkpoint tensors the model does not read
  bool generic = false;                     // built with a generic decoder (--try-generic)
  std::string generic_decoder;              // which: "generic Llama decoder" or "generic MoE decoder"
  std::optional<eval::SelfCheckResult> self_check;  // the passed self-check, when generic
  std::vector<PassReport> passes;           // the --ep lowering: rewrites per pass
  std::optional<QuantizeOptions> quantize;  // the quantization applied, defaults resolved
  bool has_lm_head = false;                 // a graph has a node tagged lm_head (NodeTags)
  std::vector<std::string> warnings;        // one line each, for the CLI to print
  // --precision keep: for each GGUF type of the weight matrices the graphs read ("Q8_0", "Q4_K",
  // "F32"), how many were kept as their stored blocks (MatMulNBits / GatherBlockQuantized) and how
  // many were written as float (dequantized: no MatMulNBits layout for the type, or not a MatMul
  // weight); empty for any other build.
  struct KeptMatrices {
    size_t kept = 0, float_ = 0;
  };
  std::map<std::string, KeptMatrices> kept_types;
};

// The --precision options (passes/passes.h QuantizeOptions) of a build for `ep`, or nullopt for a
// float build; what the command line leaves unset takes the ORT GenAI model builder's default for
// the ep (builder_quantize_defaults), which depends on whether the model's embeddings are tied
// (has_tied_embeddings of its canonical graph). Throws mobius::Error for options out of range,
// set without --precision, or with --dtype bf16 or --try-generic.
std::optional<QuantizeOptions> quantize_options(const BuildOptions& options, ExecutionProvider ep,
                                                bool tied_embeddings);

// The architecture `create` makes of `config`, for `task` (BuildOptions::task): a text encoder's
// head (tasks/text_heads.h with_task), or sentence-embedding (tasks/sentence_embedding.h) when
// asked or, with no task given, when config_dir holds modules.json and the model is a text encoder
// whose checkpoint has no head; `modules` gets that model's sentence-transformers modules. Throws
// mobius::Error for a task the model does not have, or sentence-embedding without modules.json.
std::unique_ptr<Architecture> create_for_task(ArchFactory create, const HfConfig& config, DataType dtype,
                                              const std::string& task, const std::string& config_dir,
                                              std::optional<SentenceModules>& modules);

// What a build reads: the source of options.config_dir or options.gguf_file (driver/source_path.h
// classify_source): a checkpoint directory (or a Hugging Face id resolved from the local cache) and
// its config.json, or a GGUF file and the config synthesized from its metadata
// (weights/gguf_checkpoint.h). Throws mobius::Error naming the path: neither or both given, a
// regular file that is not a GGUF, a diffusers pipeline (model_index.json),
// a missing or malformed config.json or GGUF. A config.json of a custom model_type is read as its
// base (registry/custom.h rename_config).
struct BuildSource {
  std::string config_dir;                  // "" for a GGUF
  std::optional<HfConfig> config;
  std::unique_ptr<Checkpoint> checkpoint;  // the GGUF; for a directory, opened when weights are read
  const CustomType* custom = nullptr;  // a custom model_type (registry/custom.h): config renamed, keys to rename
};
BuildSource open_source(const BuildOptions& options);

// The graphs of `arch` (built from `config`) lowered for `ep` with the --precision options of
// `options`, each graph as its task says (NamedGraph::lowering; passes/passes.h
// Pipeline::for_context; quantize_options with the tied-embedding default of any graph;
// --precision keep takes the stored quantization of `checkpoint`, a GGUF).
// Throws mobius::Error for bad quantization options; a FieldError for a size the lowering refuses.
struct LoweredGraphs {
  std::vector<NamedGraph> graphs;
  std::optional<QuantizeOptions> quantize;
  std::vector<PassReport> passes;  // each pass' rewrites summed over the graphs that ran it
};
LoweredGraphs lower_graphs(const Architecture& arch, const HfConfig& config, const BuildOptions& options,
                           ExecutionProvider ep, const Checkpoint* checkpoint);

// --dtype bf16 on onnxruntime's CPU provider, which has no bfloat16 kernel for MatMul (and most
// other ops: the package would not load there): throws mobius::Error for --ep cpu; appends a
// warning to `warnings` for --ep default and onnx-standard; nothing for a GPU provider.
void check_bfloat16(const BuildOptions& options, ExecutionProvider ep, std::vector<std::string>& warnings);

// --runtime ort-genai for a text-generation model onnxruntime-genai 0.18 has no model type for
// (`genai_type` empty: genai does not read its layers' states): throws mobius::Error saying to build
// with --runtime none. Nothing for the other runtimes and tasks.
void check_runtime(const BuildOptions& options, const std::string& genai_type, const std::string& task,
                   const std::string& model_type);

// --variant into the non-empty OUTPUT_DIR (a previous package): throws mobius::Error naming it when
// the package has the other layout, was built from another kind of source (a pipeline, a single
// model, a GGUF file), or its config.json (a pipeline's model_index.json) differs from `source`'s
// (the hf layout's transformers.js_config aside). Nothing without options.variant.
void check_variant_target(const BuildOptions& options, const std::string& source, bool pipeline);

// Reads config.json (or synthesizes it from the GGUF metadata, weights/gguf_checkpoint.h), builds
// the graph for its model_type, binds the checkpoint strictly (unless --no-weights) and writes the
// package. Throws mobius::Error with a one-line message naming the file and field or tensor; on
// error nothing is left in output_dir. An unregistered model_type is an error naming the nearest
// registered ones (and --try-generic when the config is Llama-like); with try_generic it is built
// as described in driver/generic.h, and a failed self-check is an error naming its figures.
// Quantization options out of range, with --dtype bf16 (MatMulNBits has no CPU kernel for it) or
// with --try-generic (its evaluator has no MatMulNBits), or set without --precision: an error.
// --dtype bf16 with --ep cpu is an error (onnxruntime's CPU provider has no bfloat16 kernel for
// MatMul and most other ops: the package would not load); with --ep default or onnx-standard, a
// warning in BuildReport::warnings.
BuildReport build_package(const BuildOptions& options);

}  // namespace mobius
