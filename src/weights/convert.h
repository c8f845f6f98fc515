// Tensor conversion on the weight path: dtype conversion (F64/F32/F16/BF16 -> F32/F16/BF16,
// round-to-nearest-even) and transposition of the last two axes, in one pass from the source bytes to the output.
#pragma once

#include <span>

#include "weights/safetensors.h"

namespace mobius {

// Writes `src` converted to `dst` (when `transpose`, the last two axes swapped: [..., rows, cols] -> [..., cols, rows]) into
// `out`, which must hold exactly elements * dtype_size(dst) bytes. Integer tensors are copied
// only to the same dtype. Throws mobius::Error naming the tensor for an unsupported conversion.
void convert_tensor(const TensorView& src, DataType dst, bool transpose, std::span<uint8_t> out);

}  // namespace mobius
