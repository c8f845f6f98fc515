// Weight transforms: how a weight initializer's bytes are made from checkpoint tensors, as a typed
// list applied in order (docs/design.md "Weights"). The IR keeps only "this initializer's bytes
// come from checkpoint tensor `source_key` through this list" (ir/ir.h WeightRef); WeightPlan
// (weights/weight_plan.h) checks the list against the checkpoint and the package writer streams
// it, rows at a time. A pass that changes how a weight is stored appends a transform.
//
// The set is closed: Transpose, Concat, Cast, BlockQuantize. Conversions that belong to a source
// rather than to the graph's use of it are Checkpoint views, below this list: the GGUF
// converter's q/k permutation and norm shift, and dequantization (weights/gguf_checkpoint.h), fused q/k/v and
// gate/up splits of custom types (registry/custom.cpp), merged LoRA adapters (weights/lora.h), the
// legacy weight-norm key names (weight_plan.h legacy_keys): each presents the Hugging Face tensor.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"

namespace mobius {

struct TensorInfo;  // weights/checkpoint.h

// Swaps the last two axes: [..., r, c] -> [..., c, r] (a Linear's checkpoint [out, in] as the
// MatMul's [in, out]).
struct Transpose {
  bool operator==(const Transpose&) const = default;
};

// Appends the checkpoint tensors `keys`, each read through the transforms before this one, after
// the tensor so far along `axis`: -1 the last axis (packed projections, passes/pack_matmuls.cpp),
// -2 the rows of a matrix (a packed weight quantized as [N, K]). The parts agree in every other
// axis.
struct Concat {
  std::vector<std::string> keys;
  int axis = -1;
  bool operator==(const Concat&) const = default;
};

// Converts the elements to `dtype`: between float types (F64/F32/F16/BF16 -> F32/F16/BF16,
// round to nearest even, weights/convert.h); any other dtype only to itself.
struct Cast {
  DataType dtype = DataType::FLOAT;
  bool operator==(const Cast&) const = default;
};

// Blockwise round-to-nearest quantization of a matrix [N, K] along K, as onnxruntime's
// MatMulNBits quantizer does it (weights/quantize.h): `bits` 4 or 8, blocks of `block_size`
// elements, symmetric (no zero points) or asymmetric.
struct BlockQuantization {
  int bits = 4;
  int64_t block_size = 32;
  bool symmetric = true;
  // The checkpoint stores the matrix in exactly this quantization (a GGUF Q4_0 / Q8_0 / Q6_K tensor,
  // `mobius build --precision keep`): its blocks are copied (Checkpoint::produce_stored), not
  // computed from float values.
  bool from_checkpoint = false;
  bool operator==(const BlockQuantization&) const = default;
};

// The block quantization `scheme` of the float matrix [N, K] so far (its values as the dtype they
// have: the scales' dtype), and which of MatMulNBits' three inputs this initializer is (B: uint8
// [N, k_blocks, block_size * bits / 8], or with `flat_data` [N, K * bits / 8] as
// GatherBlockQuantized reads it, K a multiple of block_size; scales: [N, k_blocks]; zero_points:
// uint8 [N, ceil(k_blocks * bits / 8)]). Always the last transform of a list.
struct BlockQuantize {
  enum class Part { data, scales, zero_points };
  Part part = Part::data;
  BlockQuantization scheme;
  bool flat_data = false;
  bool operator==(const BlockQuantize&) const = default;
};

using WeightTransform = std::variant<Transpose, Concat, Cast, BlockQuantize>;
using WeightTransforms = std::vector<WeightTransform>;

// Appends `t` to `list`, keeping the list in its canonical order (Transpose, Concat, Cast,
// BlockQuantize, each at most once) by rewriting it into an equal list: a Transpose moves ahead
// of a Cast (they commute) and of a Concat (whose axis -1 <-> -2 swaps: the transpose of matrices
// side by side is their transposes stacked), and cancels a Transpose already there; a Concat moves
// ahead of a Cast. Throws InternalError for what has no such form (anything after a BlockQuantize,
// a second Concat or Cast), which no pass produces.
void append(WeightTransforms& list, WeightTransform t);

// The list's transforms of each kind (nullptr / false when absent).
bool transposes(const WeightTransforms& list);
const Concat* concat_of(const WeightTransforms& list);
const Cast* cast_of(const WeightTransforms& list);
const BlockQuantize* quantize_of(const WeightTransforms& list);

// "transpose, concat(a, b; axis -1), cast(FLOAT16), block_quantize(scales; 4 bits, block 32, symmetric)": for
// messages and as a key of what a list makes.
std::string to_string(const WeightTransforms& list);

// A tensor's shape and element type: what a list produces.
struct TensorType {
  std::vector<int64_t> shape;
  DataType dtype = DataType::UNDEFINED;
};

// What `list` produces from `inputs`: checkpoint tensor source_key, then one tensor per key of its
// Concat, in order; the shape and dtype of each step in turn. Throws mobius::Error naming the file
// and tensor at fault (and `target`, the initializer, where it helps) when a step does not apply:
// a Concat part that differs from the first but along the axis (matrices stacked for a
// quantization: a different K) or in a dtype that is not both float, a Cast from a non-float
// dtype to another dtype, a quantization of a non-matrix or of integers.
TensorType transformed_type(const std::vector<const TensorInfo*>& inputs, const WeightTransforms& list,
                            const std::string& target);

}  // namespace mobius
