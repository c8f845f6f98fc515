// Tensor conversion on the weight path: dtype conversion (F64/F32/F16/BF16 -> F32/F16/BF16,
// round-to-nearest-even, kernels of weights/convert_kernels.h) and transposition of the last two
// axes, in one pass from the source bytes to the output. The output can be produced in pieces:
// viewed as [rows, last dim] (the output's own shape, after the transpose), any range of rows
// is produced on its own, so a writer can stream a tensor in bounded chunks.
#pragma once

#include <span>

#include "weights/convert_kernels.h"
#include "weights/safetensors.h"

namespace mobius {

// Rows of the output of `shape` (transposed when `transpose`) viewed as [rows, last dim]:
// elements / last output dim (1 for a scalar, 0 for an empty tensor).
int64_t output_rows(const std::vector<int64_t>& shape, bool transpose);

// Writes output rows [row_begin, row_end) of `src` converted to `dst` (when `transpose`, the last
// two axes swapped: [..., r, c] -> [..., c, r]) into `out`, which must hold exactly
// (row_end - row_begin) * last output dim * dtype_size(dst) bytes. A transposed range reads its
// columns from every row of the source matrices it touches, in blocks of 128 rows x 256 columns,
// transposed in the source dtype and then converted. Integer tensors are
// copied only to the same dtype. `isa` picks the kernels (default: the best this CPU has).
// Throws mobius::Error naming the file and tensor for an unsupported conversion.
void convert_rows(const TensorView& src, DataType dst, bool transpose, int64_t row_begin,
                  int64_t row_end, std::span<uint8_t> out, Isa isa = best_isa());

// The whole tensor: convert_rows over [0, output_rows).
void convert_tensor(const TensorView& src, DataType dst, bool transpose, std::span<uint8_t> out,
                    Isa isa = best_isa());

}  // namespace mobius
