// Blockwise weight quantization for com.microsoft MatMulNBits (onnxruntime contrib op,
// docs/ContribOperators.md#com.microsoft.MatMulNBits), bit for bit what onnxruntime's own
// quantizer produces: onnxruntime/quantization/matmul_nbits_quantizer.py
// (DefaultWeightOnlyQuantizer, QOperator format) calls the pybind quantize_matmul_4bits /
// quantize_matmul_8bits, i.e. MLAS BlockwiseQuantizer::quantizeAndTranspose
// (onnxruntime/core/mlas/lib/q4_dq.cpp). For each row n of a float matrix W [N, K] and each block
// of `block_size` consecutive elements along K (the last one may be short: K is padded), over the
// block's real elements:
//   symmetric:  m = max if |max| > |min| else min;  scale = S(-m / 2^(bits-1));  zp = 2^(bits-1)
//   asymmetric: lo = min(min, 0), hi = max(max, 0);  s = (hi - lo) / (2^bits - 1);  scale = S(s);
//               zp = clamp(roundf(-lo / s), 0, 2^bits - 1) (0 when s == 0)
//   q = clamp(roundf(w * r + zp), 0, 2^bits - 1),  r = 1 / float(scale) (0 when scale == 0)
// S() rounds to the scale dtype (float or float16; round to nearest even), roundf rounds halves
// away from zero, all arithmetic in float32 without fused multiply-add. Dequantized:
// w' = (q - zp) * scale.
//
// Layout (MatMulNBits inputs, row n = output feature n):
//   B            uint8 [N, k_blocks, blob_size], blob_size = block_size * bits / 8; 4 bits: element
//                2i in the low nibble of byte i, 2i+1 in the high nibble; padding elements are 0
//   scales       scale dtype [N, k_blocks]
//   zero_points  uint8 [N, zero_point_bytes]: 4 bits packed like B (block 2j low nibble), an
//                unused trailing half byte 8 (as onnxruntime's quantizer leaves it); 8 bits one
//                byte per block. Absent when symmetric.
#pragma once

#include <cstdint>

#include "ir/ir.h"
#include "weights/convert_kernels.h"

namespace mobius {

// ceil(k / block_size).
int64_t quant_k_blocks(int64_t k, const BlockQuantization& q);
// block_size * bits / 8: bytes per block of B.
int64_t quant_blob_size(const BlockQuantization& q);
// ceil(k_blocks * bits / 8): bytes of zero points per row.
int64_t quant_zero_point_bytes(int64_t k, const BlockQuantization& q);
// The shape of a part of the quantization of a matrix [n, k] (layout above).
Shape quant_shape(BlockQuantize::Part part, int64_t n, int64_t k, const BlockQuantization& q);

// Quantizes rows [0, rows) of `src` (float32, row-major [rows, k], values already rounded to the
// build's float dtype) into the row-major outputs above: `data` rows * k_blocks * blob_size bytes,
// `scales` rows * k_blocks elements of `scale_dtype` (FLOAT or FLOAT16), `zero_points`
// rows * zero_point_bytes bytes. Any output may be null (not produced); `zero_points` must be null
// when symmetric. Rows are independent: quantizing a range of rows gives the same bytes as the
// corresponding rows of the whole matrix. `isa`: kAvx2F16c runs blocks of a multiple of 32 values
// with AVX2 (weights/convert_kernels.h best_isa), bit-identical to kScalar.
void block_quantize_rows(const float* src, int64_t rows, int64_t k, const BlockQuantization& q,
                         DataType scale_dtype, uint8_t* data, uint8_t* scales, uint8_t* zero_points,
                         Isa isa = best_isa());

}  // namespace mobius
