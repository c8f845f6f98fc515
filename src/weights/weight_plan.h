// WeightPlan: binds every weight initializer of a graph to its checkpoint tensor, strictly.
// A missing tensor is an error naming the parameter and the nearest checkpoint keys; a shape
// mismatch names the tensor, its file and both shapes; checkpoint tensors that no initializer
// reads are reported (unused), not fatal.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "weights/checkpoint.h"

namespace mobius {

// Whether a weight is written in tiles (WeightBinding::produce_tile, package/writer.cpp): its
// transforms `list` transpose a float weight ([out, in] -> [in, out]; not quantized, not stacked
// along rows), its `sources` (the source, then the parts of a Concat along the last axis) are
// matrices `ckpt` tiles (Checkpoint::tiles), and they hold more than `above` bytes (elements times
// their dtype's size). The writer and `mobius info`'s memory estimate both decide by it.
bool written_in_tiles(const WeightTransforms& list, const Checkpoint& ckpt, std::span<const TensorInfo* const> sources,
                      uint64_t above);

// One initializer's bytes (weights/transform.h): its list in canonical order, [Transpose]
// [Concat] [Cast] [BlockQuantize], streamed by rows of the output viewed as [rows, last dim]:
// each part read through the checkpoint's produce() (which converts and transposes), a Concat
// along the last axis interleaved row by row, one along the rows (-2, matrices) stacked, a
// BlockQuantize of the matrix [N, K] computed from its rows.
struct WeightBinding {
  const Initializer* init;
  const TensorInfo* source;
  const Checkpoint* checkpoint;  // the checkpoint `source` belongs to
  // The Concat's tensors, in order after `source`.
  std::vector<const TensorInfo*> concat = {};
  // A quantized weight's further initializers: those quantizing the same source tensors through
  // the same transforms and scheme (its scales and zero points; a second initializer of the same
  // part, in another layout, gets a copy). produce() makes them all from one conversion of the
  // source.
  std::vector<const Initializer*> siblings = {};
  // `init`, then `siblings`: the initializers produce() writes, in the order of its output.
  std::vector<const Initializer*> outputs() const;
  // Rows of the initializer viewed as [rows, last dim] (weights/convert.h output_rows); for a
  // quantized weight (BlockQuantize) N, the rows of the matrix [N, K] it quantizes, which every
  // sibling shares.
  int64_t rows() const;
  // Scratch bytes per row that produce() needs besides `out`: a quantized weight's source rows
  // in float32 and in the build dtype (weights/quantize.h); 0 otherwise.
  int64_t scratch_row_bytes() const;
  // Writes rows [row_begin, row_end) of the initializer's bytes (the source through the
  // transforms) to `out` (Checkpoint::produce); any range when streams(), else all rows.
  // With a Concat along the last axis, each part's rows are produced into a buffer of their own
  // size and copied into place: memory holds one part's range besides `out`. A quantized weight's
  // rows are its source rows (of the concatenated parts, stacked along N) block-quantized
  // (weights/quantize.h); `out` then holds the range of each of outputs() in turn (nbytes() /
  // rows() bytes a row each).
  void produce(int64_t row_begin, int64_t row_end, std::span<uint8_t> out) const;
  bool streams() const;  // every part streams
  // Whether the writer writes this weight in tiles (produce_tile) when its sources hold more than
  // `above` bytes: written_in_tiles of its transforms and parts. tiles() is whether produce_tile()
  // takes it at all.
  bool tiles(uint64_t above = 0) const;
  // The bytes of its source tensors (every part) as the checkpoint stores them.
  uint64_t source_bytes() const;
  // Output rows [row_begin, row_end) x columns [col_begin, col_end) of the initializer viewed as
  // [rows, last dim], row-major into `out` ((row_end - row_begin) * (col_end - col_begin) elements
  // of its dtype), each part's share from Checkpoint::produce_tile. Only when tiles().
  void produce_tile(int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end,
                    std::span<uint8_t> out) const;
  // Checkpoint::release of the source rows that output columns [col_begin, col_end) read (of
  // every part they span). Only when tiles().
  void release_columns(int64_t col_begin, int64_t col_end) const;
  // Whether a range of rows reads columns of the source (a Transpose): the writer then releases
  // the source pages after the last range only.
  bool reads_columns() const;
  // Checkpoint::release of the source pages rows [row_begin, row_end) read (of every part).
  void release(int64_t row_begin, int64_t row_end) const;
};

class WeightPlan {
 public:
  // Throws mobius::Error on the first missing tensor, or a shape or dtype that the transforms
  // do not make into the initializer's (weights/transform.h transformed_type: for a concatenated
  // initializer, parts that differ in any but the Concat's axis, or whose sizes along it do not
  // add up to its own; for a quantized one, parts that are not float matrices [N_i, K] whose
  // quantization (weights/quantize.h quant_shape) has the initializer's shape).
  static WeightPlan bind(const Graph& graph, const Checkpoint& checkpoint);
  const std::vector<WeightBinding>& bindings() const { return bindings_; }
  // The initializers the bindings write: every weight initializer of the graph.
  size_t num_initializers() const;
  const std::vector<std::string>& unused() const { return unused_; }

 private:
  std::vector<WeightBinding> bindings_;
  std::vector<std::string> unused_;
};

// The quantization the matrix [N, K] that `ref` names (its Concat parts stacked along N, not
// transposed) is stored in exactly (Checkpoint::stored_quantization, the same for every part), or
// nullopt: a part missing, transposed, stored otherwise, or parts stored differently.
std::optional<BlockQuantization> stored_quantization(const Checkpoint& checkpoint, const WeightRef& ref);

// A checkpoint shape as messages print it: "[2, 3]".
std::string dims_str(const std::vector<int64_t>& d);

// The names other checkpoints give the tensor that transformers 5 loads as `key`, in the order
// they are tried, empty when none: torch's legacy weight norm `<module>.weight_g` / `.weight_v` for
// `<module>.parametrizations.weight.original0` / `.original1` (transformers/conversion_mapping.py
// renames them on load; e.g. the wav2vec2 family's pos_conv_embed.conv); `LayerNorm.gamma` /
// `.beta` for `LayerNorm.weight` / `.bias` (its "legacy" renaming, which transformers 5 reverses
// when it saves a model with a conversion mapping of its own, ESM's layers); ESM's
// `encoder.layer.*.attention.self.rotary_embeddings.inv_freq` (transformers 5's save, through
// conversion_mapping.py) and `encoder.layer.0.attention.self.rotary_embeddings.inv_freq` (older
// per-layer saves, EsmModel.load_hook) for `rotary_embeddings.inv_freq`; `.mlp.gate_proj.weight` (up,
// down) for `.block_sparse_moe.gate_proj.weight` (Kimi Linear's dense layers as the released
// checkpoints name them; transformers 5 saves them under block_sparse_moe); `text_model.` + key and
// `vision_model.` + key for a CLIP tower's key at the root (embeddings.token_embedding. and the
// other CLIP embeddings, encoder.layers.N's self_attn / layer_norm1 / layer_norm2 / mlp.fc1 / fc2,
// final_layer_norm., pre_layrnorm., post_layernorm.: CLIPTextModel / CLIPVisionModel as
// transformers 4 and the Hub save them; transformers 5 drops the prefix). WeightPlan::bind reads the first present when the
// checkpoint lacks `key`.
std::vector<std::string> legacy_keys(const std::string& key);

// Up to `n` names from `candidates` closest to `name` by edit distance, nearest first, leaving out
// those more than `max_distance` edits away (a misspelling is a few edits; a name further away is
// another word, not a suggestion).
std::vector<std::string> nearest_names(const std::string& name, const std::vector<std::string>& candidates,
                                       size_t n = 3, size_t max_distance = SIZE_MAX);

}  // namespace mobius
