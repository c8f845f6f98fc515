// Dequantization of ggml tensor data to float32 (block layouts of ggml-quants.c; reference: the
// `gguf` PyPI package, gguf/quants.py). Results are bit-identical to gguf.quants.dequantize: the
// arithmetic is float32 in the reference's order, one rounding per operation (this file is built
// with -ffp-contract=off so no multiply-add is fused).
//   F32, F16, BF16, F64          plain conversion
//   Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 32-element blocks: fp16 scale d (and min m), 4/5/8-bit quants
//   Q4_K, Q5_K                   256-element super-blocks: fp16 d, dmin, 8 x 6-bit scales/mins
//   Q6_K                         256-element super-blocks: 16 int8 scales, fp16 d
//   MXFP4                        32-element blocks: an e8m0 exponent, 4-bit e2m1 values
#pragma once

#include <span>

#include "weights/gguf.h"

namespace mobius {

// True when dequantize() handles `type`.
bool can_dequantize(GgmlType type);
// The supported type names, comma-separated (for messages).
const char* dequantize_supported_types();

// Dequantizes `out.size()` elements (a multiple of the type's block size) of type `type` from
// `src`, which holds exactly out.size() / block_size blocks. InternalError on an unsupported type
// or a size mismatch (callers check can_dequantize and the sizes first).
void dequantize(GgmlType type, std::span<const uint8_t> src, std::span<float> out);

}  // namespace mobius
