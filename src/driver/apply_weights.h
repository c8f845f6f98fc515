// `mobius apply-weights PACKAGE CKPT OUT`: bind a checkpoint into a package built without weights
// (`mobius build --no-weights`), as build does (streaming, package/writer.h). Every build records
// the options that shape its graph in model.onnx's metadata (kBuildOptionsKey); apply-weights
// builds CKPT with those options and writes OUT only if the model.onnx it gives is PACKAGE's byte
// for byte (same architecture, config and options), so OUT equals a direct build of CKPT.
#pragma once

#include <string>

#include "driver/build.h"

namespace mobius {

// The metadata key of the build options: a JSON object {dtype ("f32", "f16", "bf16"), ep,
// precision, block_size, quant_scheme, accuracy_level, quantize_lm_head, quantize_embeddings
// (null when left to the default), runtime}.
inline constexpr const char* kBuildOptionsKey = "mobius.build_options";

// The value of kBuildOptionsKey for a build with `options`.
std::string build_options_metadata(const BuildOptions& options);

// Throws mobius::Error unless the file `expected` (a package's model.onnx) holds `serialized` (the
// model.onnx a build would write, package/writer.h WriteOptions::check_graph) byte for byte: the
// message names `expected` and says the checkpoint's config gives another graph.
void check_same_model(const std::string& expected, const std::string& serialized);

// Builds `source` (a checkpoint directory, a Hugging Face id or a .gguf file, as `mobius info`
// tells them apart) into `output_dir` with the options recorded in package_dir/model.onnx (or
// package_dir/onnx/model.onnx: OUT takes PACKAGE's layout, package/layout.h), checking that the graph is the package's (check_same_model) before any weight is read or anything
// written. Throws mobius::Error: no
// package_dir/model.onnx, or one without kBuildOptionsKey (not built by this mobius: rebuild it with
// --no-weights), and everything build_package throws; nothing is written then.
BuildReport apply_weights(const std::string& package_dir, const std::string& source, const std::string& output_dir,
                          bool force, bool progress);

}  // namespace mobius
