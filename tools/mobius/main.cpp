// mobius CLI: a thin layer over the library (package/build.h, registry/registry.h).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "package/build.h"
#include "registry/registry.h"
#include "util/error.h"

namespace {

int list_models() {
  std::printf("%-20s %-12s %-20s %-9s %s\n", "model_type", "family", "task", "verified", "max|delta|");
  for (const auto& e : mobius::registry()) {
    auto d = mobius::verified_max_delta(e.model_type);
    char delta[32] = "-";
    if (d) std::snprintf(delta, sizeof delta, "%.1e", *d);
    std::printf("%-20s %-12s %-20s %-9s %s\n", e.model_type, e.family, e.task, d ? "yes" : "no",
                delta);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mobius: build ONNX models for Hugging Face architectures by constructing the graph"};
  app.require_subcommand(1);

  mobius::BuildOptions opts;
  std::string dtype = "f32";
  bool no_weights = false;
  auto* build = app.add_subcommand("build", "Build an ONNX package from a checkpoint directory or a GGUF file");
  auto* config = build->add_option("--config", opts.config_dir,
                                   "Checkpoint directory (config.json, *.safetensors)");
  auto* gguf = build->add_option("--gguf", opts.gguf_file,
                                 "GGUF file (config from its metadata, weights dequantized)");
  config->excludes(gguf);  // exactly one of the two: checked by build_package
  build->add_option("output_dir", opts.output_dir, "Output directory (model.onnx, model.onnx.data)")
      ->required();
  build->add_option("--dtype", dtype, "Float dtype of the model: f32, f16 or bf16")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  build->add_flag("--no-weights", no_weights, "Build the graph only (weights are zeros)");
  build->add_flag("--force", opts.force, "Replace a non-empty output directory");
  build->add_option("--runtime", opts.runtime,
                    "Target runtime: ort-genai (also writes genai_config.json and copies the "
                    "tokenizer files; text-generation only) or none")
      ->check(CLI::IsMember({"ort-genai", "none"}))
      ->capture_default_str();
  build->add_flag("--try-generic", opts.try_generic,
                  "An unregistered model_type whose config.json is Llama-like: build it with the generic "
                  "Llama decoder and write the package only if its prefill/decode self-check passes "
                  "(float32, needs the weights)");
  build->add_option("--ep", opts.ep,
                    "Execution provider to lower for: default (the canonical graph, standard ops), "
                    "onnx-standard (standard ops, packed q/k/v), cpu, cuda, webgpu "
                    "(com.microsoft GroupQueryAttention with rotary, SkipSimplifiedLayerNormalization, "
                    "packed q/k/v) or dml (the same, rotary outside attention)")
      ->check(CLI::IsMember({"default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"}))
      ->capture_default_str();

  build->add_option("--precision", opts.precision,
                    "Weight precision: absent = float at --dtype; int4 or int8 = every Linear weight "
                    "block-quantized (round to nearest, as onnxruntime's quantizer) into com.microsoft "
                    "MatMulNBits, with any --ep (default too); --dtype f32 or f16 (the scales' dtype); "
                    "keep (--gguf) = the GGUF's Q4_0 / Q8_0 blocks as they are (the other types float)")
      ->check(CLI::IsMember({"int4", "int8", "keep"}));
  build->add_option("--block-size", opts.block_size,
                    "Quantization block size along the input features: 32, 64 or 128 (a last short "
                    "block is padded)")
      ->check(CLI::IsMember({32, 64, 128}))
      ->capture_default_str();
  build->add_option("--quant-scheme", opts.quant_scheme,
                    "sym (scales only) or asym (scales and zero points)")
      ->check(CLI::IsMember({"sym", "asym"}))
      ->capture_default_str();
  build->add_option("--accuracy-level", opts.accuracy_level,
                    "MatMulNBits accuracy_level: 0 (unset, not written), 1 fp32, 2 fp16, 3 bf16, 4 int8 "
                    "(the minimum precision of the activations inside the kernel)")
      ->check(CLI::Range(0, 4))
      ->capture_default_str();
  build->add_flag("--quantize-lm-head", opts.quantize_lm_head,
                  "Also quantize the LM head (tied to the embeddings or not); default: kept in float");
  build->add_flag("--quantize-embeddings", opts.quantize_embeddings,
                  "Also quantize the embedding matrices (com.microsoft GatherBlockQuantized; those whose "
                  "width is a multiple of the block size); default: kept in float");

  auto* list = app.add_subcommand("list", "List registered things");
  auto* models = list->add_subcommand("models", "List registered model types");
  list->require_subcommand(1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "mobius: error: " << e.what() << " (see --help)\n";
    return 1;
  }

  try {
    if (models->parsed()) return list_models();
    opts.dtype = mobius::parse_cli_dtype(dtype);
    opts.weights = !no_weights;
    opts.progress = ::isatty(STDERR_FILENO);
    mobius::BuildReport r = mobius::build_package(opts);
    if (!r.unused_tensors.empty()) {
      std::cerr << "mobius: warning: " << r.unused_tensors.size()
                << " checkpoint tensor(s) not used by the model:";
      for (size_t i = 0; i < r.unused_tensors.size() && i < 5; ++i) std::cerr << " " << r.unused_tensors[i];
      std::cerr << (r.unused_tensors.size() > 5 ? " ...\n" : "\n");
    }
    if (r.self_check)
      std::cout << "self-check passed: prefill and decode-step logits agree, " << mobius::eval::describe(*r.self_check)
                << "\n";
    std::cout << "built " << r.model_type << (r.generic ? " as the generic Llama decoder" : "") << " (" << r.task << "): " << r.num_nodes << " nodes, "
              << r.num_weights << " weights";
    if (!r.passes.empty()) {
      std::cout << ", --ep " << opts.ep << (opts.precision.empty() ? "" : " --precision " + opts.precision) << ":";
      for (const auto& p : r.passes) std::cout << " " << p.pass << " " << p.rewrites;
    }
    std::cout << " -> " << opts.output_dir << "\n";
    return 0;
  } catch (const mobius::Error& e) {
    std::cerr << "mobius: error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "mobius: error: " << e.what() << "\n";
  }
  return 1;
}
