// Package writer: each graph of the package as its graph file + external-data file, where the
// package layout puts them (package/layout.h: flat <name>.onnx + <name>.onnx.data, or hf
// onnx/<hf name>.onnx + onnx/<hf name>.onnx_data), every weight of that graph in its own
// external-data file at 64-byte aligned offsets (a single-graph package is model.*, a
// text2text-generation one encoder.* and decoder.* in flat, tasks/text2text_generation.h).
// Everything is written to a temporary sibling directory first and renamed into place, so a
// failure leaves no partial output and an existing OUTPUT_DIR is untouched.
// Weights stream from the mapped checkpoint through their conversion
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
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "package/layout.h"
#include "weights/weight_plan.h"

namespace mobius {

// A transposed weight (a Linear's [out, in] written as MatMul's [in, out]) whose source tensors
// hold more than this many bytes is written in tiles (WeightBinding::produce_tile) rather than in
// ranges of whole output rows: a range of output rows reads a column band of every source row,
// so the whole source stays resident until the weight's last range is converted (Llama-3.1-8B's
// lm_head: 1.05 GB), where a tile reads its own source rows only. Below it, whole rows: tiles are
// written in many short segments, which costs the single writing thread (Llama-3.1-8B f16, its
// 117 MB MLP matrices tiled too: 20.0 s and 203 MiB peak; its lm_head alone: 16.4 s, 194 MiB).
inline constexpr uint64_t kTiledSourceBytes = uint64_t{160} << 20;

// The tiles of such a weight, [rows, cols] of its output [rows, cols] (each clamped to the
// weight's): `cols` (source rows) so that the source rows a tile maps, whole (the kernel maps the
// pages of a file mapping 64 KiB around a fault), take at most 4 x chunk_bytes and, with a page of
// source columns (4096 / source_size) as its rows, the tile at most 2 x chunk_bytes of output; then
// as many `rows` (source columns) as make it 2 x chunk_bytes, at least that page. A tile is written
// as `rows` segments of cols * dst_size bytes (8 KiB for Llama-3.1-8B's lm_head, gate_proj and
// up_proj at the default 8 MiB chunks; 2.3 KiB for its down_proj, whose source rows are 28 KiB), not
// as one sequential run: a few more write calls for a bounded resident set.
struct TileShape {
  int64_t rows, cols;
  bool operator==(const TileShape&) const = default;
};
TileShape tile_shape(int64_t rows, int64_t cols, size_t source_size, size_t dst_size, size_t chunk_bytes);

struct WriteOptions {
  PackageLayout layout = PackageLayout::flat;  // where the graphs go (package/layout.h)
  bool force = false;     // replace a previous mobius package in OUTPUT_DIR (check_output_dir)
  // Add the graphs into OUTPUT_DIR's previous mobius package (a variant beside the package's
  // others, --variant): when OUTPUT_DIR holds one, only the graphs' graph and data files are moved
  // into it, each a new file or, with `force`, replacing the package's file of that name; the
  // package's other files stay as they are and extra_files is not called. An empty or absent
  // OUTPUT_DIR gets the whole package as without `add`.
  bool add = false;
  std::vector<std::string> inputs;  // the checkpoint directory or GGUF file (check_output_dir)
  bool progress = false;  // draw a progress bar on stderr
  // Writes further package files (genai_config.json, tokenizer files) into the temporary
  // directory before it is renamed into place.
  std::function<void(const std::string& dir)> extra_files;
  // Runs on the complete package in the temporary directory, after extra_files, before the
  // rename: throwing aborts the write (the temporary directory is removed, OUTPUT_DIR untouched).
  std::function<void(const std::string& dir)> check;
  // Runs on each graph's graph file as it will be written (`serialized`, the ModelProto with its
  // external-data locations) before anything is written, the temporary directory included:
  // throwing aborts the write with nothing written and no weight read.
  std::function<void(const std::string& name, const std::string& serialized)> check_graph;
  size_t chunk_bytes = size_t{8} << 20;  // output bytes per streamed chunk (whole rows, at least one)
  uint64_t tiled_above = kTiledSourceBytes;  // source bytes above which a transposed weight is tiled
  // What extra_files will write, as far as known beforehand (the copied tokenizer and config
  // files): counted with the graphs in the free-space check (check_free_space).
  uint64_t extra_bytes = 0;
};

// A constant initializer (one the graph computes, not a checkpoint weight: an --ep cpu cos/sin
// cache, 32 MiB each for Llama-3.1's 131072 positions in float32) of this many bytes or more is
// stored in the graph's external-data file (in graph order with the weights, written before them,
// also with --no-weights): the graph file stays
// small, and its bytes are not copied into the serialized graph (held, with the ModelProto, while
// the package is written).
inline constexpr size_t kExternalConstantBytes = size_t{1} << 20;

// One graph of the package, written as graph_file(path) + graph_data_file(path) of the layout
// (package/layout.h). `plan` null = --no-weights.
struct PackageGraph {
  GraphPath path;
  const Model* model;
  const WeightPlan* plan;
};

// The runtime files a build writes besides the graphs and the copied kTokenizerFiles
// (driver/build.cpp: onnxruntime-genai's configs for whisper and the multimodal pipeline).
// (processor_config.json, which mobius wrote for onnxruntime-genai's image processor before it
// was vision_processor.json, is a kTokenizerFiles name: an old package is still recognized.)
inline constexpr const char* kRuntimeFiles[] = {"genai_config.json", "vision_processor.json", "speech_processor.json",
                                                "audio_processor_config.json"};

// Runs check_graph on every graph, then writes every graph of the package, in order, then
// extra_files and check, then renames the
// temporary directory into place. Every write, fsync and close is checked; the files and the
// temporary directory are synced before it is renamed into place, and the parent after, so a
// package in place is a complete one. While it is written the temporary directory is registered
// with remove_on_interrupt (util/interrupt.h). Throws mobius::Error when check_output_dir refuses
// OUTPUT_DIR, or on any I/O error (naming the path), among them a file system without room for a
// data file, which fails before any weight is converted; a failed write of any graph leaves
// nothing behind. Before anything is written, the package's size (the graphs and
// options.extra_bytes) is checked against the free space of OUTPUT_DIR's file system
// (check_free_space).
void write_package(const std::string& output_dir, const std::vector<PackageGraph>& graphs,
                   const WriteOptions& options);

// The single-graph package "model". `plan` null = --no-weights: weight initializers point into a
// sparse external-data file of the right size (zeros). Errors as above.
void write_package(const std::string& output_dir, const Model& model, const WeightPlan* plan,
                   const WriteOptions& options);

// The bytes the graph at `path` of a package in `layout` takes on disk: its graph file as serialized and,
// with weights, its external-data file (a --no-weights data file is sparse: no blocks). `mobius
// info` reports their sum with the copied files (driver/info.h disk_bytes).
uint64_t graph_disk_bytes(const GraphPath& path, const Model& model, bool weights, PackageLayout layout);

// Throws mobius::Error "<output_dir>: the package needs about N MiB and the file system of P has
// M MiB free: ..." when the file system that will hold `output_dir` (its nearest existing
// ancestor P) has fewer than `need` bytes available to this user (statvfs(3) f_bavail); nothing
// when statvfs fails. write_package calls it with the whole package's size before it writes
// anything.
void check_free_space(const std::string& output_dir, uint64_t need);

// The size write_package gives the external-data file of `graph`: every weight initializer and
// large constant (kExternalConstantBytes) in graph order,
// each at a 64-byte aligned offset.
uint64_t external_data_bytes(const Graph& graph);

// Throws mobius::Error naming `output_dir` when it is, contains or is inside one of `inputs` (the
// checkpoint directory or GGUF file, compared after resolving symbolic links), when it exists and
// is not a directory, or when it is a non-empty directory and either `force` is false or it is not
// a previous mobius package: a directory holding, as regular files (no links), only the files a
// package holds: at the top flat graphs (model, encoder, decoder, vision, speech, embedding, with a
// variant suffix: package/layout.h kVariantSuffixes) that mobius wrote (an ONNX model whose
// producer_name is "mobius") with their <graph>.onnx.data, and package files (is_package_file);
// an onnx/ folder of such graphs under their Hugging Face names with their <graph>.onnx_data; the
// folders a pipeline package's mobius_manifest.json names, each of graphs "model" and package
// files; a graph among them. So --force never deletes anything but mobius output (a folder of
// copies, a graph saved under another name, an empty folder stop it).
void check_output_dir(const std::string& output_dir, bool force, const std::vector<std::string>& inputs);

// A file name mobius writes into a package besides the graphs and their data: genai_config.json or
// another runtime file (kRuntimeFiles), a .onnx_adapter, or one of the copied tokenizer and
// pipeline files (package/copied_files.h is_copied_file).
bool is_package_file(const std::string& name);

// Writes `bytes` to a new file `path` (refusing to replace one), fsyncs and closes it, checking
// each call. Throws mobius::Error "<shown>: write failed: <strerror>" (ENOSPC, EFBIG, EIO, ...),
// naming `shown` (the file's path once its package is in place), or `path` when it is empty.
void write_file_synced(const std::string& path, std::string_view bytes, const std::string& shown = "");

}  // namespace mobius
