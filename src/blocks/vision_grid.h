// The per-patch quantities of vision towers fed the processor's flattened patches of images of any
// sizes with image_grid_thw [num_images, 3] (t, h, w patch counts; transformers/vision_utils.py),
// computed in the graph so that one run takes any number of images of any sizes: Qwen2-VL,
// Qwen2.5-VL, Qwen3-VL (archs/qwen2_vl.cpp), PaddleOCR-VL (archs/paddleocr_vl.cpp).
#pragma once

#include "blocks/attention.h"
#include "blocks/rope.h"

namespace mobius {

// Each patch's place, for patches laid out per image, per frame, in spatial-merge-block order
// (get_vision_position_ids: merge blocks row-major, then the merge x merge patches of a block
// row-major; merge 1 = raster order). All int64 [num_patches].
struct PatchGrid {
  Value* frame_start;  // the index of the first patch of the patch's frame
  Value* row;          // the patch's (row, column) in its frame
  Value* col;
  Value* height;       // its image's grid height and width (image_grid_thw[:, 1], [:, 2])
  Value* width;
  Value* block_row;    // its merge block's (row, column): row / merge, col / merge
  Value* block_col;
};
// grid_thw: int64 [num_images, 3].
PatchGrid patch_grid(Ops& op, Value* grid_thw, int64_t merge);

// The additive attention mask [1, 1, patches, patches] in `dtype`: 0 where patches i and j share
// the frame (transformers' cu_seqlens segments) and, given block-window ids `row`, `col`
// (int64 [patches]; null for none), the window; the dtype's lowest value elsewhere.
Value* frame_mask(Ops& op, Value* frame_start, Value* row, Value* col, DataType dtype);

// The 2-D axial RoPE of Qwen2_5_VLVisionRotaryEmbedding / PaddleOCRVisionRotaryEmbedding:
// inv_freq = theta^(-2i / (head_dim / 2)) for i < head_dim / 4; angles row * inv_freq, then
// col * inv_freq; tables cos/sin [1, patches, head_dim / 2] in `dtype`, rotating the whole head
// (rotate_half). row, col: int64 [patches].
RopeTables axial_rope(Ops& op, Value* row, Value* col, int64_t head_dim, double theta, DataType dtype);

// A learned square position table [side^2, dim] resampled bilinearly to each patch's image grid
// (transformers vision_utils get_vision_interpolation_indices_and_weights, mode bilinear, border
// padding: F.interpolate's align_corners true or false): [patches, dim] in the table's dtype.
Value* resample_positions(Ops& op, Value* table, int64_t side, const PatchGrid& grid, bool align_corners,
                          DataType dtype);

}  // namespace mobius
