// Package writer: each graph of the package as OUTPUT_DIR/<name>.onnx + OUTPUT_DIR/<name>.onnx.data
// (every weight of that graph in its own external-data file, 64-byte aligned offsets; a
// single-graph package is model.onnx + model.onnx.data, a text2text-generation one encoder.* and
// decoder.*, tasks/text2text_generation.h). Everything is written to a temporary sibling
// directory first and renamed into place, so a failure leaves no partial output and an existing
// OUTPUT_DIR is untouched. Weights stream from the mapped checkpoint through their conversion
// into the data file in chunks of whole output rows (8 MiB by default, counting a quantized
// weight's float source rows), converted on every core (std::thread::hardware_concurrency
// workers) and written in file order by one thread with large sequential writes (pwrite calls of
// 256 KiB into a data file whose blocks are allocated first, docs/benchmarks.md "The weight
// path"); at most workers + 2 chunks are in memory, and the checkpoint releases the source pages
// each chunk read (Checkpoint::streams). A tensor whose checkpoint cannot stream it (a dequantized
// GGUF tensor) is one chunk; a quantized weight's parts (B, scales, zero points) are one
// binding's chunks, written as one segment per part.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "weights/weight_plan.h"

namespace mobius {

struct WriteOptions {
  bool force = false;     // replace an existing non-empty OUTPUT_DIR
  bool progress = false;  // draw a progress bar on stderr
  // Writes further package files (genai_config.json, tokenizer files) into the temporary
  // directory before it is renamed into place.
  std::function<void(const std::string& dir)> extra_files;
  // Runs on the complete package in the temporary directory, after extra_files, before the
  // rename: throwing aborts the write (the temporary directory is removed, OUTPUT_DIR untouched).
  std::function<void(const std::string& dir)> check;
  size_t chunk_bytes = size_t{8} << 20;  // output bytes per streamed chunk (whole rows, at least one)
};

// One graph of the package: written as `name`.onnx + `name`.onnx.data. `plan` null = --no-weights.
struct PackageGraph {
  std::string name;
  const Model* model;
  const WeightPlan* plan;
};

// Writes every graph of the package, in order, then extra_files and check, then renames the
// temporary directory into place. Errors as write_package below; a failed write of any graph
// leaves nothing behind.
void write_package(const std::string& output_dir, const std::vector<PackageGraph>& graphs,
                   const WriteOptions& options);

// The single-graph package "model". `plan` null = --no-weights: weight initializers point into a sparse
// model.onnx.data of the right size (zeros). Throws mobius::Error when OUTPUT_DIR exists and is
// not empty without `force`, or on any I/O error (naming the path), among them a file system
// without room for model.onnx.data, which fails before any weight is converted.
void write_package(const std::string& output_dir, const Model& model, const WeightPlan* plan,
                   const WriteOptions& options);

// Throws mobius::Error if `output_dir` exists, is not empty and `force` is false.
void check_output_dir(const std::string& output_dir, bool force);

}  // namespace mobius
