// Package writer: OUTPUT_DIR/model.onnx + OUTPUT_DIR/model.onnx.data (every weight in one
// external-data file, 64-byte aligned offsets). Everything is written to a temporary sibling
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

// Writes the package. `plan` null = --no-weights: weight initializers point into a sparse
// model.onnx.data of the right size (zeros). Throws mobius::Error when OUTPUT_DIR exists and is
// not empty without `force`, or on any I/O error (naming the path), among them a file system
// without room for model.onnx.data, which fails before any weight is converted.
void write_package(const std::string& output_dir, const Model& model, const WeightPlan* plan,
                   const WriteOptions& options);

// The size write_package gives model.onnx.data for `graph`: every weight initializer in graph order,
// each at a 64-byte aligned offset.
uint64_t external_data_bytes(const Graph& graph);

// Throws mobius::Error if `output_dir` exists, is not empty and `force` is false.
void check_output_dir(const std::string& output_dir, bool force);

}  // namespace mobius
