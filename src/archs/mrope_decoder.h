// A text decoder with multimodal RoPE (M-RoPE; Qwen2-VL, arXiv:2409.12191): transformers'
// Qwen2_5_VLRotaryEmbedding / Qwen3VLTextRotaryEmbedding.recomposition_frequencies /
// PaddleOCRRotaryEmbedding. The decoder of the registered text architecture `spec` whose
// position_ids are [3, batch, seq] (temporal, height, width rows; transformers' get_rope_index)
// instead of [batch, seq]: rotary channel j (of head_dim / 2) takes its angles from
//   - contiguous sections (interleaved false): row k for the section[k] channels of block k;
//   - interleaved (Qwen3-VL): row 1 for channels 3i+1 (i < section[1]), row 2 for channels 3i+2
//     (i < section[2]), row 0 for the others.
// Users: archs/qwen2_vl.cpp (Qwen2-VL, Qwen2.5-VL, Qwen3-VL), archs/paddleocr_vl.cpp. The
// architecture checks that section sums to head_dim / 2 (the rotary half) before building.
#pragma once

#include <vector>

#include "blocks/decoder.h"

namespace mobius {

class MRopeDecoder : public DecoderCausalLM {
 public:
  MRopeDecoder(const DecoderSpec& s, std::vector<int64_t> section, bool interleaved);

 protected:
  // position_ids int64 [3, batch, seq] -> cos/sin [batch, seq, rotary_dim / 2], each channel from
  // its row as above.
  RopeTables position_tables(Ops& op, const RopeConfig& rope, Value* position_ids) const override;

 private:
  std::vector<int64_t> section_;
  bool interleaved_;
};

}  // namespace mobius
