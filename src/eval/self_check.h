// The self-check of `mobius build --try-generic`: a written text-generation package must give
// the same logits for the same tokens whether they are run in one prefill or as a shorter prefill
// followed by a decode step on the returned cache. It runs the package with the float32
// reference evaluator (eval/evaluator.h) at batch 1.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "tasks/text_generation.h"

namespace mobius::eval {

struct SelfCheckResult {
  int64_t tokens = 0;          // prompt length N
  double max_abs_delta = 0.0;  // max |reference - candidate| over every compared logit (inf if not finite)
  double logit_scale = 0.0;    // max |logit| of the reference
  double tolerance = 0.0;      // kRelativeTolerance * max(1, logit_scale)
  bool finite = true;          // every logit of both runs is finite
  bool passed() const { return finite && max_abs_delta <= tolerance; }
};

// max |Δ| allowed, relative to the logit scale (float32 rounding, not a loosened check).
inline constexpr double kRelativeTolerance = 1e-4;

// "max|delta| 1.2e-07 (tolerance 1.0e-03) over 8 tokens" (", logits not finite" when not).
std::string describe(const SelfCheckResult& r);

// Compares `candidate` logits against `reference` logits (same length, flattened). Throws
// InternalError if the lengths differ.
SelfCheckResult compare_logits(std::span<const float> reference, std::span<const float> candidate);

// Runs the text-generation package `model_path` (I/O contract: tasks/text_generation.h, float32)
// three times on a fixed N-token prompt (N = `tokens` >= 2, ids spread over the vocabulary):
//   A: prefill of all N tokens;
//   B: prefill of the first N - 1;
//   C: a decode step of token N - 1 with B's present.* as past_key_values.
// The reference is A's logits at all N positions; the candidate B's N - 1 positions followed by
// C's one. Throws mobius::Error (from the evaluator) if the graph cannot run or an output has an
// unexpected shape.
SelfCheckResult prefill_decode_check(const std::string& model_path, const CacheLayout& cache,
                                     int64_t vocab_size, int64_t tokens = 8);

}  // namespace mobius::eval
