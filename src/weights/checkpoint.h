// Checkpoint: the tensors of a model as the Hugging Face state dict names and shapes them,
// whatever the file format. WeightPlan binds graph initializers to these tensors; the package
// writer asks the checkpoint to produce each one into the output buffer, one tensor at a time.
//   SafetensorsCheckpoint (weights/safetensors.h)  a checkpoint directory: convert + transpose
//   GgufCheckpoint (weights/gguf_checkpoint.h)     a .gguf file: dequantize, undo the GGUF
//                                                  converter's transforms, then convert
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

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
  // Writes tensor `t` (a result of this checkpoint's find()) converted to the float type `dst`,
  // transposed ([rows, cols] -> [cols, rows]) when `transpose`, into `out`, which holds exactly
  // elements * dtype_size(dst) bytes. Throws mobius::Error naming the file and tensor when the
  // conversion is not possible. Memory: at most one float32 copy of the tensor besides `out`.
  virtual void produce(const TensorInfo& t, DataType dst, bool transpose,
                       std::span<uint8_t> out) const = 0;
};

}  // namespace mobius
