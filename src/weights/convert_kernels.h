// Element-run conversion kernels for the weight path: one call converts `n` contiguous elements
// from one dtype to another (float types: F64/F32/F16/BF16 -> F32/F16/BF16, round-to-nearest-even,
// rules of util/float16.h; any dtype to itself: a copy). The kernel is chosen once per run, so the
// loops have no per-element dispatch. Two instruction sets:
//   kScalar    portable C++ (util/float16.h), every CPU
//   kAvx2F16c  x86-64 AVX2 + F16C (vcvtps2ph / vcvtph2ps for binary16, 32-bit integer rounding
//              for bfloat16); compiled with function-level target attributes and chosen at run time
//              only when the CPU has both, so the binary still runs everywhere.
// Both give bit-identical results (tests/unit/convert_kernels_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ir/dtype.h"

namespace mobius {

enum class Isa { kScalar, kAvx2F16c };

// The best instruction set this CPU supports (kAvx2F16c needs x86-64 with AVX2 and F16C).
Isa best_isa();

// Converts in[0, n) (elements of the source dtype) to out[0, n) (elements of the destination).
using ConvertFn = void (*)(const uint8_t* in, uint8_t* out, size_t n);

// The kernel for src -> dst on `isa`; nullptr when the conversion is not supported (a non-float
// type to another type, or DOUBLE as destination) or `isa` is not available on this build.
// Pairs without a vector kernel (F64 sources, copies) return the scalar kernel for every isa.
ConvertFn convert_kernel(DataType src, DataType dst, Isa isa);

}  // namespace mobius
