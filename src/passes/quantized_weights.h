// What the quantizing passes (matmul_nbits, gather_block_quantized) share: which weights they can
// block-quantize, and the initializers of one quantized matrix (weights/quantize.h layout).
#pragma once

#include <string>
#include <vector>

#include "passes/graph_edit.h"

namespace mobius {

// The initializer of `v` when it is a float (float32 or float16) 2-D checkpoint weight with a
// static shape, not quantized yet; else nullptr.
const Initializer* quantizable_weight(GraphEditor& e, const Value* v);

// Adds the initializers of the block quantization `q` of the matrix [n, k] that `ref` produces
// (its transforms, then a BlockQuantize appended; `float_dtype` the dtype `ref` makes): data (named base + "_Q<bits>"), scales (base + "_scales",
// dtype `float_dtype`) and, when asymmetric, zero points (base + "_zero_points"); data is
// [n, k_blocks, blob] (MatMulNBits' B), or with `flat_data` [n, k * bits / 8] (GatherBlockQuantized,
// k a multiple of the block size). Returns them in that order.
std::vector<Value*> add_quantized_weight(GraphEditor& e, const WeightRef& ref, const std::string& base,
                                         DataType float_dtype, int64_t n, int64_t k,
                                         const BlockQuantization& q, bool flat_data = false);

}  // namespace mobius
