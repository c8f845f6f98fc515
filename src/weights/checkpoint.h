// Checkpoint: the tensors of a model as the Hugging Face state dict names and shapes them,
// whatever the file format. WeightPlan binds graph initializers to these tensors; the package
// writer asks the checkpoint to produce each one into output buffers, in chunks of rows where the
// checkpoint can (streams()), else one tensor at a time.
//   SafetensorsCheckpoint (weights/safetensors.h)  a checkpoint directory: convert + transpose
//   GgufCheckpoint (weights/gguf_checkpoint.h)     a .gguf file: dequantize, undo the GGUF
//                                                  converter's transforms, then convert
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/ir.h"
#include "util/error.h"

namespace mobius {

struct TensorInfo {
  std::string name;            // Hugging Face state-dict key
  DataType dtype;              // element type of the values produce() starts from
  std::vector<int64_t> shape;  // Hugging Face (row-major) shape
  const std::string* file;     // the file it lives in (for messages)
};

class Checkpoint {
 public:
  virtual ~Checkpoint() = default;
  // The tensor named `name`, or nullptr.
  virtual const TensorInfo* find(const std::string& name) const = 0;
  // Every tensor name, sorted. Names that map to no Hugging Face key (GGUF tensors of an unknown
  // role) are listed as they are in the file, so that binding reports them as unused.
  virtual std::vector<std::string> names() const = 0;
  // Writes output rows [row_begin, row_end) of tensor `t` (a result of this checkpoint's find())
  // converted to the float type `dst`, transposed ([rows, cols] -> [cols, rows]) when
  // `transpose`, into `out`; the output is viewed as [output_rows(t.shape, transpose), last dim]
  // (weights/convert.h) and `out` holds exactly the range's elements * dtype_size(dst) bytes.
  // Throws mobius::Error naming the file and tensor when the conversion is not possible.
  // Unless streams(t), only the whole range [0, output_rows) is accepted.
  virtual void produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin,
                       int64_t row_end, std::span<uint8_t> out) const = 0;
  // Whether produce() takes any row range of `t` (memory: the range's output); false when it
  // needs the whole tensor at once (memory: at most one float32 copy of the tensor besides `out`).
  virtual bool streams(const TensorInfo& t) const = 0;
  // Whether produce_tile() takes `t` (a matrix [rows, cols]): false by default.
  virtual bool tiles(const TensorInfo& t) const { return false; }
  // Writes a tile of `t` transposed ([rows, cols] -> [cols, rows]) and converted to `dst`: output
  // rows [row_begin, row_end) (source columns) x output columns [col_begin, col_end) (source rows),
  // row-major into `out` ((row_end - row_begin) * (col_end - col_begin) elements). It reads only
  // source rows [col_begin, col_end), which release(t, false, col_begin, col_end) then drops: so a
  // large transposed matrix is written in tiles with no more than a tile's source rows resident
  // (package/writer.cpp). Only for a 2-D `t` that tiles().
  virtual void produce_tile(const TensorInfo& t, DataType dst, int64_t row_begin, int64_t row_end,
                            int64_t col_begin, int64_t col_end, std::span<uint8_t> out) const {
    MOBIUS_ASSERT(false, "Checkpoint::produce_tile: the checkpoint does not tile");
  }
  // Drops from this process's resident set the source pages that produce() read for output rows
  // [row_begin, row_end) of `t` (a transposed range reads every source matrix it takes columns
  // from); they stay in the page cache. Only an optimisation: the default does nothing.
  virtual void release(const TensorInfo& t, bool transpose, int64_t row_begin, int64_t row_end) const {}
  // The block quantization (weights/quantize.h layout, from_checkpoint set) that `t`, as the
  // matrix [N, K] it is, is stored in exactly: every value it holds is (q - zero point) * scale of
  // that layout. nullopt (the default) when there is none.
  virtual std::optional<BlockQuantization> stored_quantization(const TensorInfo& t) const { return std::nullopt; }
  // Rows [row_begin, row_end) of that quantization, laid out as block_quantize_rows writes them
  // (weights/quantize.h): `data`, `scales` in `scale_dtype` (FLOAT or FLOAT16), `zero_points`
  // (null when symmetric); any output may be null. Only for a `t` with a stored_quantization.
  virtual void produce_stored(const TensorInfo&, int64_t, int64_t, DataType, uint8_t*, uint8_t*, uint8_t*) const {
    MOBIUS_ASSERT(false, "Checkpoint::produce_stored: the tensor has no stored quantization");
  }
};

}  // namespace mobius
