// mobius CLI: a thin layer over the library (driver/build.h, registry/registry.h).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "arguments.h"
#include "driver/apply_weights.h"
#include "driver/build.h"
#include "driver/info.h"
#include "registry/custom.h"
#include "registry/diffusers_registry.h"
#include "registry/registry.h"
#include "util/error.h"
#include "util/input_files.h"
#include "util/interrupt.h"
#include "util/progress.h"
#include "weights/weight_plan.h"

namespace {

// Prints `rows` (the first is the header) in columns, each as wide as its widest cell, the last one
// left ragged.
template <size_t N>
int print_table(const std::vector<std::array<std::string, N>>& rows) {
  std::array<size_t, N - 1> width{};
  for (const auto& r : rows)
    for (size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < width.size(); ++c) line += r[c] + std::string(width[c] - r[c].size() + 2, ' ');
    std::cout << line << r[N - 1] << "\n";
  }
  return 0;
}

// Which types and classes are verified, and how closely, is docs/models.md (written from the parity
// run by scripts/gen_models_doc.py), not compiled into the binary.
int list_models() {
  std::vector<std::array<std::string, 4>> rows = {{"model_type", "family", "task", "ort-genai type"}};
  for (const auto& e : mobius::registry()) {
    const std::string genai = mobius::genai_model_type(e);
    rows.push_back({e.model_type, e.family, e.task, genai.empty() ? "-" : genai});
  }
  return print_table(rows);
}

// The diffusers components mobius builds, by config.json _class_name (registry/diffusers_registry.h).
int list_components() {
  std::vector<std::array<std::string, 3>> rows = {{"_class_name", "family", "task"}};
  for (const auto& e : mobius::diffusers_registry()) rows.push_back({e.class_name, e.family, e.task});
  return print_table(rows);
}

// An unknown first word is a mistyped command: name the nearest one (CLI11 alone would report
// "arguments were not expected"). Returns the error line, or "" when argv[1] is fine.
std::string unknown_command(int argc, char** argv, CLI::App& app) {
  if (argc < 2 || argv[1][0] == '-') return "";
  std::vector<std::string> names, known;
  for (const CLI::App* sc : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(sc->get_name());
    known.push_back(sc->get_name());
    for (const std::string& a : sc->get_aliases()) known.push_back(a);
  }
  if (std::find(known.begin(), known.end(), argv[1]) != known.end()) return "";
  // A misspelling is a few edits away (a third of the word); anything further is another word.
  const std::string word = argv[1];
  const std::vector<std::string> near = mobius::nearest_names(word, known, 1, std::max<size_t>(2, word.size() / 3));
  std::string msg = "unknown command '" + word + "' (" + (near.empty() ? "" : "did you mean " + near.front() + "? ") +
                    "commands:";
  for (const auto& n : names) msg += " " + n;
  return msg + "; see --help)";
}

// What a pass did, in a user's words.
std::string describe_pass(const mobius::PassReport& p) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"pack_matmuls", "projections packed into one MatMul"},
      {"group_query_attention", "attention layers as GroupQueryAttention"},
      {"multi_head_attention", "attention layers as MultiHeadAttention"},
      {"skip_simplified_layer_norm", "residual norms as SkipSimplifiedLayerNormalization"},
      {"matmul_nbits", "weight MatMuls as MatMulNBits"},
      {"gather_block_quantized", "embedding Gathers as GatherBlockQuantized"},
      {"tied_lm_head", "tied LM head without its Reshapes (on [batch, seq, hidden])"}};
  for (const auto& [pass, words] : kWords)
    if (p.pass == pass) return std::to_string(p.rewrites) + " " + words;
  return std::to_string(p.rewrites) + " " + p.pass;
}

// What a lowering did (the passes that rewrote something), or "" when nothing changed.
std::string describe(const std::vector<mobius::PassReport>& passes) {
  std::string words;
  for (const auto& p : passes)
    if (p.rewrites > 0) words += (words.empty() ? "" : ", ") + describe_pass(p);
  return words;
}

// The human summary of a build on stdout.
void print_summary(const mobius::BuildOptions& o, const mobius::BuildReport& r) {
  namespace fs = std::filesystem;
  std::cout << "built " << r.model_type << (r.generic ? " as the " + r.generic_decoder : "") << " (" << r.task
            << ") -> " << o.output_dir << "\n";
  std::cout << "  graph: " << r.num_nodes << " nodes, " << r.num_weights << " weights"
            << (o.weights ? "" : " (--no-weights: zeros)") << ", " << mobius::dtype_name(o.dtype) << "\n";
  if (const std::string lowered = describe(r.passes); !lowered.empty())
    std::cout << "  --ep " << o.ep << ": " << lowered << "\n";
  if (o.precision == "keep") {  // what the GGUF's types became: kept blocks, or float
    std::string kept, floats;
    for (const auto& [type, k] : r.kept_types) {
      if (k.kept) kept += (kept.empty() ? "" : ", ") + std::to_string(k.kept) + " " + type;
      if (k.float_) floats += (floats.empty() ? "" : ", ") + std::to_string(k.float_) + " " + type;
    }
    std::cout << "  --precision keep: " << (kept.empty() ? "no matrix kept" : "kept as their stored blocks: " + kept)
              << (floats.empty() ? "" : "; written in float: " + floats) << "\n";
  } else if (r.quantize) {
    const mobius::QuantizeOptions& q = *r.quantize;
    std::cout << "  --precision " << o.precision << ": blocks of " << q.scheme.block_size << ", "
              << (q.scheme.symmetric ? "sym" : "asym") << ", accuracy level " << q.accuracy_level;
    if (r.has_lm_head)
      std::cout << ", LM head " << (q.lm_head ? "quantized" : "float") << ", embeddings "
                << (q.embeddings ? "quantized" : "float");
    std::cout << "\n";
  }
  std::vector<std::string> files;
  for (const auto& f : fs::recursive_directory_iterator(o.output_dir))  // onnx/model.onnx in the hf layout
    if (!f.is_directory()) files.push_back(f.path().lexically_relative(o.output_dir).generic_string());
  std::sort(files.begin(), files.end());
  std::cout << "  files:";
  for (const auto& f : files) std::cout << " " << f;
  for (const auto& f : files)  // each graph's weights: model.onnx.data, encoder.onnx.data, onnx/model.onnx_data...
    if (f.ends_with(".onnx.data") || f.ends_with(".onnx_data")) std::cout << " (" << f << " " << mobius::mib(fs::file_size(fs::path(o.output_dir) / f)) << ")";
  std::cout << "\n";
}

std::string thousands(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// `mobius info SOURCE`: a GGUF file, a checkpoint directory or a Hugging Face id (driver/source_path.h
// classify_source). Returns 0 when the build it describes would run, 1 when it would
// fail (a type not registered, no weights to read, refused for the given --ep), the report printed
// either way.
int print_info(const std::string& path, const std::string& dtype, mobius::BuildOptions o) {
  o.config_dir = path;  // any kind of source (driver/source_path.h classify_source)
  const mobius::CheckpointInfo info = mobius::inspect_checkpoint(o);
  std::cout << "source:      " << info.source << " (" << info.format << ")\n";
  std::cout << "model type:  " << info.model_type;
  if (info.task.empty()) {
    std::cout << ": not registered: " << info.not_registered
              << (info.llama_like ? "; its config is Llama-like: --try-generic can build it" : "") << "\n";
  } else {
    std::cout << " (" << info.task << "), registered (verification: docs/models.md)\n";
  }
  const int status = mobius::build_failure(info, o.ep).empty() ? 0 : 1;  // as mobius_cpp.inspect() raises
  if (!info.no_weights.empty()) {
    std::cout << "parameters:  unknown: " << info.no_weights << "\n";
    return status;
  }
  std::cout << "parameters:  " << thousands(info.parameters) << "\n";
  for (const auto& [dtype, s] : info.stored)
    std::cout << "  " << dtype << ": " << s.tensors << " tensors, " << thousands(s.elements) << " elements, "
              << mobius::mib(s.bytes) << "\n";
  if (info.task.empty()) return 1;
  std::cout << "build --dtype " << dtype << " --ep " << o.ep << (o.precision.empty() ? "" : " --precision " + o.precision)
            << ": ";
  const auto chosen = std::find_if(info.eps.begin(), info.eps.end(), [&](const auto& e) { return e.ep == o.ep; });
  const bool refused = chosen != info.eps.end() && !chosen->refused.empty();
  if (refused)
    std::cout << "refused: " << chosen->refused << "\n";
  else {
    for (size_t i = 0; i < info.data_files.size(); ++i)
      std::cout << (i ? " + " : "") << info.data_files[i].first << " " << mobius::mib(info.data_files[i].second);
    std::cout << ", peak memory about " << mobius::mib(info.peak_bytes) << " (the build's resident set"
              << (info.format == "GGUF" ? ", before the tokenizer synthesized from the GGUF" : "") << ")\n";
    std::cout << "disk:        the package takes about " << mobius::mib(info.disk_bytes) << " (" << info.disk_bytes
              << " bytes; the build refuses to start when the output's file system has less free)\n";
  }
  std::cout << "execution providers (--ep):\n";
  for (const auto& e : info.eps) {
    const std::string done = describe(e.passes);
    std::cout << "  " << std::left << std::setw(14) << e.ep
              << (!e.refused.empty() ? "refused: " + e.refused
                                     : done.empty() ? "the canonical graph (standard ONNX ops)" : done)
              << "\n";
  }
  return status;
}

// What `mobius build --help` ends with: examples, and the ORT GenAI model builder's flags.
constexpr const char* kBuildFooter = R"(
Examples:
  mobius build Qwen/Qwen2.5-0.5B qwen-onnx                      # a Hugging Face id (downloaded: hf download ORG/NAME)
  mobius build ./my-checkpoint out --ep cpu --precision int4    # a checkpoint directory, CPU int4 (the builder's)
  mobius build model-Q8_0.gguf out --precision keep             # a GGUF file, its Q4_0 / Q8_0 blocks kept
  mobius build ./ckpt out --ep cuda --dtype f16                 # CUDA, float16

SOURCE is a checkpoint directory (config.json, *.safetensors), a Hugging Face id ORG/NAME read from
the local cache (HF_HUB_CACHE, HF_HOME), or a .gguf file; --config and --gguf name it too.
The ORT GenAI model builder's flags are understood: -m/--model_name and -i/--input name SOURCE,
-o/--output OUTPUT_DIR, -p fp32|fp16|bf16 is --dtype and -p int4|int8 --precision, -e/--execution_provider
is --ep (CPU, cuda, ...), -c/--cache_dir the Hugging Face cache.)";

// A subcommand's words after its name, for cli::unknown_option.
std::vector<std::string> words_after(int argc, char** argv, int first) {
  std::vector<std::string> w;
  for (int i = first; i < argc; ++i) w.emplace_back(argv[i]);
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = mobius::cli;
  mobius::install_interrupt_cleanup();  // before any thread: Ctrl-C removes a partial package
  CLI::App app{"mobius: build ONNX models for Hugging Face architectures by constructing the graph"};
  app.require_subcommand(1);
  const std::string version = std::string("mobius ") + MOBIUS_VERSION;
  app.set_version_flag("--version", version);
  app.footer("Start with: mobius build SOURCE OUTPUT_DIR (SOURCE: a checkpoint directory, a Hugging Face id such as "
             "Qwen/Qwen2.5-0.5B, or a .gguf file); mobius COMMAND --help for each command's options.");

  mobius::BuildOptions opts;
  std::string dtype = "f32";
  bool no_weights = false;
  std::vector<std::string> notes;  // how a builder-style word was read, printed before the build
  std::vector<std::string> named_sources;  // --config, --gguf, -m, -i: any kind of source
  std::string source_pos, output_pos, named_output;
  auto* build = app.add_subcommand("build", "Build an ONNX package from a checkpoint directory, a Hugging Face id or "
                                            "a GGUF file");
  build->alias("export");
  build->alias("convert");
  build->footer(kBuildFooter);
  build->add_option("source", source_pos,
                    "Checkpoint directory (config.json, *.safetensors), Hugging Face id ORG/NAME (from the local "
                    "cache) or .gguf file (GGUF told by its content)")
      ->type_name("SOURCE");
  build->add_option("output_dir", output_pos,
                    "Output directory (model.onnx + model.onnx.data; encoder.* + decoder.* for text2text-generation)")
      ->type_name("OUTPUT_DIR");
  // each occurrence one word, every occurrence kept: two sources are answered after parsing
  build->add_option("--config,--gguf", named_sources,
                    "SOURCE as an option (the two are synonyms: either takes a checkpoint directory, a Hugging "
                    "Face id or a .gguf file)")
      ->type_name("SOURCE")
      ->allow_extra_args(false);
  build->add_option("-m,--model_name,-i,--input", named_sources)
      ->allow_extra_args(false)
      ->group("");  // the builder's spellings (kBuildFooter)
  build->add_option("-o,--output", named_output)->group("");
  build->add_option_function<std::string>("-c,--cache_dir,--cache-dir", [](const std::string& v) {
    ::setenv("HF_HUB_CACHE", v.c_str(), 1);  // where the builder's from_pretrained(cache_dir=) keeps the repos
  })->group("");
  build->add_option_function<std::string>("--dtype", [&](const std::string& v) { dtype = cli::dtype_word(v); },
                                          "Float dtype of the model: f32, f16 or bf16 (fp32, fp16, float16 too)")
      ->default_str("f32");
  std::vector<std::string> register_files;
  const char* register_help = "JSON file of custom model types: a model_type mapped onto a registered one with "
                              "config-field and checkpoint-key renames (docs/python.md); repeatable";
  build->add_option("--register", register_files, register_help);
  build->add_flag("--no-weights", no_weights, "Build the graph only (weights are zeros)");
  build->add_option("--lora", opts.lora_dir,
                    "PEFT LoRA adapter directory (adapter_config.json, adapter_model.safetensors) merged into the "
                    "weights as they stream: W + scale * B @ A (rank/alpha patterns, rsLoRA; DoRA refused; "
                    "docs/lora.md)");
  build->add_option("--lora-runtime", opts.lora_runtime,
                    "PEFT LoRA adapter directories for run time: the package takes the LoRA weights as inputs "
                    "(<module>.lora_A.weight / .lora_B.weight) and each adapter is written into it as "
                    "<directory name>.onnx_adapter, for onnxruntime-genai's og.Adapters (docs/lora.md)");
  build->add_flag("--force", opts.force, "Replace a non-empty output directory (mobius output only)");
  build->add_flag("--variant", opts.variant,
                  "Name the graph files by dtype as Hugging Face does where several live side by side "
                  "(onnx/model_fp16.onnx, model_q4.onnx, model_q4f16.onnx, model_quantized.onnx for --precision int8) and "
                  "add them into OUTPUT_DIR's previous mobius package, keeping its other files (--force replaces a "
                  "variant it holds)");
  build->add_option("--runtime", opts.runtime,
                    "Target runtime: ort-genai (also copies config.json and the tokenizer files, and for "
                    "text-generation writes genai_config.json), optimum (copies those files; Whisper and Moonshine "
                    "in Optimum's speech contract, for ORTModelForSpeechSeq2Seq and transformers.js) or none "
                    "(the ONNX files only)")
      ->check(CLI::IsMember({"ort-genai", "optimum", "none"}))
      ->capture_default_str();
  build->add_option_function<std::string>(
          "--layout", [&](const std::string& v) { opts.layout = mobius::parse_layout(v); },
          "Where the graphs go: hf (the Hugging Face layout onnxruntime-genai, Optimum and transformers.js "
          "read: onnx/model.onnx + onnx/model.onnx_data, onnx/encoder_model.onnx, onnx/decoder_model_merged.onnx, "
          "onnx/vision_encoder.onnx, onnx/embed_tokens.onnx; README \"Run it with\") or flat (<graph>.onnx + "
          "<graph>.onnx.data at the top: model.onnx, encoder.onnx, decoder.onnx, vision.onnx, embedding.onnx, "
          "as onnxruntime-genai's model builder writes them)")
      ->check(CLI::IsMember({"hf", "flat"}, CLI::ignore_case))
      ->default_str("hf");
  build->add_option("--task", opts.task,
                    "The head of a text encoder: feature-extraction (last_hidden_state), fill-mask, "
                    "text-classification, token-classification, question-answering or multiple-choice, with "
                    "Optimum's output names; or sentence-embedding (a sentence-transformers model: modules.json, "
                    "pooling, Dense, Normalize -> sentence_embedding). Default: the one config.json's architectures "
                    "names (BertForSequenceClassification: text-classification), sentence-embedding for a text "
                    "encoder with modules.json, else feature-extraction");
  build->add_flag("--try-generic", opts.try_generic,
                  "An unregistered text-generation model_type whose config.json is Llama-like: build it with the "
                  "generic Llama decoder (or, when it names experts, the generic Mixtral / Qwen3-MoE-style MoE "
                  "decoder) and write the package only if its prefill/decode self-check passes "
                  "(float32, needs the weights)");
  build->add_option_function<std::string>("-e,--ep,--execution_provider",
                                          [&](const std::string& v) { opts.ep = cli::ep_word(v); },
                                          "Execution provider to lower for: default (the canonical graph, standard "
                                          "ops), onnx-standard (standard ops, packed q/k/v), cpu, cuda, webgpu "
                                          "(com.microsoft GroupQueryAttention with rotary, "
                                          "SkipSimplifiedLayerNormalization, packed q/k/v) or dml (the same, rotary "
                                          "outside attention); any case, or CPUExecutionProvider & co.")
      ->default_str("default");
  build->add_option_function<std::string>(
           "-p,--precision",
           [&](const std::string& v) {
             if (std::string note = cli::precision_word(v, opts.precision, dtype); !note.empty()) notes.push_back(note);
           },
           "Weight precision: absent = float at --dtype; int4 or int8 = every Linear weight "
           "block-quantized (round to nearest, as onnxruntime's quantizer) into com.microsoft "
           "MatMulNBits, with any --ep (int8 decodes fast with --ep cpu); --dtype f32 or f16 (the scales' dtype); "
           "keep (a .gguf source) = the GGUF's Q4_0 / Q8_0 blocks as they are (the other types float); "
           "fp16, fp32, bf16 (the builder's) = --dtype")
      ->default_str("float");
  build->add_option("--block-size", opts.block_size,
                    "Quantization block size along the input features: 32, 64 or 128 (a last short "
                    "block is padded)")
      ->check(CLI::IsMember({32, 64, 128}))
      ->capture_default_str();
  build->add_option("--quant-scheme", opts.quant_scheme,
                    "sym (scales only) or asym (scales and zero points)")
      ->check(CLI::IsMember({"sym", "asym"}))
      ->capture_default_str();
  build->add_option_function<int>("--accuracy-level", [&](const int& v) { opts.accuracy_level = v; },
                                  "MatMulNBits accuracy_level: 0 (unset, not written), 1 fp32, 2 fp16, 3 bf16, 4 int8 "
                                  "(the minimum precision of the activations inside the kernel); default: the ORT "
                                  "GenAI builder's for --ep (4 for cpu and webgpu, else 0)")
      ->check(CLI::Range(0, 4));
  build->add_flag_callback("--quantize-lm-head", [&] { opts.quantize_lm_head = true; },
                           "Quantize the LM head (tied to the embeddings or not); default: quantized, as the ORT "
                           "GenAI builder");
  build->add_flag_callback("--no-quantize-lm-head", [&] { opts.quantize_lm_head = false; },
                           "Keep the LM head in float");
  build->add_flag_callback("--quantize-embeddings", [&] { opts.quantize_embeddings = true; },
                           "Quantize the embedding matrices (com.microsoft GatherBlockQuantized; those whose width is "
                           "a multiple of the block size); default: as the ORT GenAI builder, quantized for int4 when "
                           "tied to the LM head (stored once)");
  build->add_flag_callback("--no-quantize-embeddings", [&] { opts.quantize_embeddings = false; },
                           "Keep the embedding matrices in float");

  std::string info_path;
  std::vector<std::string> info_named;
  std::string info_dtype = "f32";
  mobius::BuildOptions info_opts;
  auto* info = app.add_subcommand("info", "What a build of a checkpoint directory, Hugging Face id or GGUF file would "
                                          "be (headers only: no weight is read)");
  info->add_option("source", info_path, "Checkpoint directory, Hugging Face id (ORG/NAME, from the local cache) or "
                                        ".gguf file")
      ->type_name("SOURCE");
  info->add_option("--config,--gguf,-m,-i", info_named, "SOURCE as an option (synonyms)")
      ->type_name("SOURCE")
      ->allow_extra_args(false);
  info->add_option_function<std::string>("--dtype", [&](const std::string& v) { info_dtype = cli::dtype_word(v); },
                                         "Float dtype of the build: f32, f16 or bf16")
      ->default_str("f32");
  info->add_option_function<std::string>("-e,--ep", [&](const std::string& v) { info_opts.ep = cli::ep_word(v); },
                                         "Execution provider of the build the sizes are for")
      ->default_str("default");
  info->add_option_function<std::string>(
          "-p,--precision",
          [&](const std::string& v) {
            if (std::string note = cli::precision_word(v, info_opts.precision, info_dtype); !note.empty())
              notes.push_back(note);
          },
          "int4 or int8 (the builder's defaults for --ep)")
      ->default_str("float");
  info->add_option_function<std::string>(
          "--layout", [&](const std::string& v) { info_opts.layout = mobius::parse_layout(v); },
          "Package layout the data-file names are for: hf or flat")
      ->check(CLI::IsMember({"hf", "flat"}, CLI::ignore_case))
      ->default_str("hf");
  info->add_option("--task", info_opts.task, "The head of a text encoder the build is for, as for mobius build --task");
  info->add_option("--runtime", info_opts.runtime,
                   "Target runtime the disk need is for: ort-genai (with the tokenizer and genai files), optimum, "
                   "or none (the ONNX files only); some types refuse ort-genai, as the build does")
      ->check(CLI::IsMember({"ort-genai", "optimum", "none"}))
      ->capture_default_str();
  info->add_option("--register", register_files, register_help);

  std::string apply_package, apply_source, apply_out;
  bool apply_force = false;
  auto* apply = app.add_subcommand("apply-weights", "Bind a checkpoint into a package built with --no-weights (the "
                                                    "same graph, checked): OUT equals a build of CKPT");
  apply->add_option("package", apply_package, "Package directory built with --no-weights")->required();
  apply->add_option("checkpoint", apply_source, "Checkpoint directory, Hugging Face id or .gguf file")->required();
  apply->add_option("output_dir", apply_out, "Output directory")->required();
  apply->add_flag("--force", apply_force, "Replace a non-empty output directory");
  apply->add_option("--register", register_files, register_help);

  auto* list = app.add_subcommand("list", "List the registered model types (list models: the same)");
  auto* models = list->add_subcommand("models", "List registered model types");
  auto* components = list->add_subcommand("components", "List the diffusers component classes (_class_name)");
  auto* version_cmd = app.add_subcommand("version", "Print the version (as --version)");

  if (std::string e = unknown_command(argc, argv, app); !e.empty()) {
    std::cerr << "mobius: error: " << e << "\n";
    return 1;
  }
  for (CLI::App* sc : {build, info, apply}) {  // a misspelt option, or a builder flag mobius spells otherwise
    const std::vector<std::string> aliases = sc->get_aliases();
    if (argc < 2 || (argv[1] != sc->get_name() && std::find(aliases.begin(), aliases.end(), argv[1]) == aliases.end()))
      continue;
    if (std::string e = cli::unknown_option(*sc, words_after(argc, argv, 2)); !e.empty()) {
      std::cerr << "mobius: error: " << e << "\n";
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "mobius: error: " << e.what() << " (see --help)\n";
    return 1;
  }
  for (const auto& n : notes) std::cerr << "mobius: note: " << n << "\n";
  if (version_cmd->parsed()) {
    std::cout << version << "\n";
    return 0;
  }
  if (components->parsed()) return list_components();
  if (list->parsed() || models->parsed()) return list_models();

  // SOURCE OUTPUT_DIR: the last positional word is the output unless -o names it; the source is the
  // other positional word or one of --config, --gguf, -m, -i.
  if (build->parsed()) {
    std::vector<std::string> words;
    for (const std::string* w : {&source_pos, &output_pos})
      if (!w->empty()) words.push_back(*w);
    std::string output = named_output;
    if (output.empty() && !words.empty()) {
      output = words.back();
      words.pop_back();
    }
    std::vector<std::string> sources = named_sources;
    sources.insert(sources.end(), words.begin(), words.end());
    std::string wrong;
    namespace fs = std::filesystem;
    std::error_code ec;  // the one word given names a source: the output is what is missing
    if (sources.empty() && !output.empty() &&
        (fs::exists(fs::path(output) / "config.json", ec) || fs::is_regular_file(output, ec)))
      wrong = "no OUTPUT_DIR given (" + output + " is a source): mobius build SOURCE OUTPUT_DIR";
    else if (sources.empty())
      wrong = "no SOURCE given" + (output.empty() ? std::string() : " (" + output + " is taken as OUTPUT_DIR)") +
              ": mobius build SOURCE OUTPUT_DIR, SOURCE a checkpoint directory, a Hugging Face id (ORG/NAME) or a "
              ".gguf file";
    else if (output.empty())
      wrong = "no OUTPUT_DIR given: mobius build SOURCE OUTPUT_DIR";
    else if (sources.size() > 1)
      wrong = "two sources given (" + sources[0] + " and " + sources[1] + "): mobius build SOURCE OUTPUT_DIR takes "
              "one (--config and --gguf are another way to name it)";
    if (!wrong.empty()) {
      std::cerr << "mobius: error: " << wrong << "\n";
      return 1;
    }
    opts.config_dir = sources.front();  // any kind of source (driver/source_path.h classify_source)
    opts.output_dir = output;
  }
  if (info->parsed()) {
    if (!info_path.empty()) info_named.push_back(info_path);
    if (info_named.size() != 1) {
      std::cerr << "mobius: error: "
                << (info_named.empty() ? "no SOURCE given: mobius info SOURCE (a checkpoint directory, a Hugging Face "
                                         "id ORG/NAME or a .gguf file)"
                                       : "two sources given (" + info_named[0] + " and " + info_named[1] +
                                             "): mobius info takes one")
                << "\n";
      return 1;
    }
    info_path = info_named.front();
  }

  try {
    for (const auto& f : register_files) mobius::register_custom_types_file(f);
    if (info->parsed()) {
      info_opts.dtype = mobius::parse_cli_dtype(info_dtype);
      return print_info(info_path, info_dtype, info_opts);
    }
    if (apply->parsed()) {
      const mobius::BuildReport r = mobius::apply_weights(apply_package, apply_source, apply_out, apply_force, true);
      std::cout << "applied " << r.num_weights << " weights of " << apply_source << " to the graph of " << apply_package
                << " -> " << apply_out << "\n";
      return 0;
    }
    opts.dtype = mobius::parse_cli_dtype(dtype);
    opts.weights = !no_weights;
    opts.progress = true;  // a bar on a terminal, else a line every few seconds (util/progress.h)
    mobius::BuildReport r = mobius::build_package(opts);
    for (const auto& w : r.warnings) std::cerr << "mobius: warning: " << w << "\n";
    if (!r.unused_tensors.empty()) {
      std::cerr << "mobius: warning: " << r.unused_tensors.size()
                << " checkpoint tensor(s) not used by the model:";
      for (size_t i = 0; i < r.unused_tensors.size() && i < 5; ++i)
        std::cerr << " " << mobius::escaped(r.unused_tensors[i]);
      std::cerr << (r.unused_tensors.size() > 5 ? " ...\n" : "\n");
    }
    if (r.self_check)
      std::cout << "self-check passed: prefill and decode-step logits agree, " << mobius::eval::describe(*r.self_check)
                << "\n";
    print_summary(opts, r);
    return 0;
  } catch (const mobius::Error& e) {
    mobius::hold_interrupts();  // a Ctrl-C that made this error reports and cleans up itself
    std::cerr << "mobius: error: " << mobius::escaped(e.what()) << "\n";
  } catch (const std::bad_alloc&) {
    mobius::hold_interrupts();
    std::cerr << "mobius: error: out of memory: the model the input describes does not fit in this machine's memory\n";
  } catch (const std::exception&) {
    mobius::hold_interrupts();
    // An InternalError (a broken invariant) or a library's exception: its text is not for users.
    std::cerr << "mobius: error: internal error while building " << opts.output_dir
              << " (a bug in mobius: please report it with the input); nothing was written\n";
  }
  return 1;
}
