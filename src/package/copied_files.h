// The files a package copies from the checkpoint beside its graphs (config, tokenizer, generation
// and processor files), and the hf layout's addition to config.json.
#pragma once

#include <cstdint>
#include <string>

namespace mobius {

// The config, tokenizer and generation files copied next to the model, for every task (a
// feature-extraction package is usable alone).
// The processor files are transformers' (its ProcessorMixin / image, video and feature-extractor
// save_pretrained: processor_config.json is transformers 5's processor settings, e.g. LLaVA's
// image_token and patch_size), which Optimum and transformers.js read.
inline constexpr const char* kTokenizerFiles[] = {
    "config.json",         "tokenizer.json",     "tokenizer_config.json",    "special_tokens_map.json",
    "tokenizer.model",     "vocab.json",         "merges.txt",               "added_tokens.json",
    "generation_config.json", "chat_template.jinja", "chat_template.json",   "preprocessor_config.json",
    "processor_config.json",  "video_preprocessor_config.json"};

// The files of a diffusers pipeline package besides its graphs and kTokenizerFiles
// (driver/pipeline.h): the pipeline's model_index.json, a scheduler's scheduler_config.json, a T5
// tokenizer's spiece.model, and the manifest of what was built.
inline constexpr const char* kPipelineFiles[] = {"model_index.json", "scheduler_config.json", "spiece.model",
                                                 "mobius_manifest.json"};

// Whether a file named `name` is one a package copies (kTokenizerFiles, kPipelineFiles).
bool is_copied_file(const std::string& name);

// Copies the kTokenizerFiles present in `checkpoint_dir` into `out_dir` (write_file_synced).
// Returns how many were copied (none when `checkpoint_dir` is empty). Each must be a regular file
// inside the checkpoint (util/input_files.h checkpoint_file; a symbolic link out of it is an
// error) of at most 1 GiB; throws mobius::Error naming the file otherwise or on an I/O error.
int copy_tokenizer_files(const std::string& checkpoint_dir, const std::string& out_dir);

// The hf layout's config.json (package/layout.h): rewrites out_dir/config.json (copied by
// copy_tokenizer_files; nothing when there is none) with "transformers.js_config" set to
// {"use_external_data_format": true, "dtype": `dtype`}: transformers.js fetches <graph>.onnx_data
// only with the first, and its dtype picks the graph file by suffix (src/utils/dtypes.js
// DEFAULT_DTYPE_SUFFIX_MAPPING: fp32 is the name without a suffix, model.onnx, which mobius writes
// whatever the weights' type unless --variant names the files by dtype; without it the wasm device
// asks for q8, model_quantized.onnx). The checkpoint's other fields stay as they were
// (re-serialized, 2-space indent). Throws mobius::Error naming the file when it is not a JSON
// object or on an I/O error.
void add_transformers_js_config(const std::string& out_dir, const std::string& dtype = "fp32");

// The bytes copy_tokenizer_files would copy from `checkpoint_dir`: the sizes of the kTokenizerFiles
// present there (0 for one it could not read: the copy names it), 0 when `checkpoint_dir` is empty.
uint64_t tokenizer_files_bytes(const std::string& checkpoint_dir);

}  // namespace mobius
