// Attention allowed beyond causality in a vision-language decoder: the `overlay` of
// blocks/attention.h causal_mask (transformers masking_utils create_causal_mask's
// block_sequence_ids / or_mask_function), which the image-text-to-text task gives the decoder
// (CausalLMInputs::attention_overlay, tasks/image_text_to_text.h attention_overlay).
#pragma once

#include <cstdint>

#include "builder/ops.h"

namespace mobius {

// Gemma 3's image blocks (transformers/models/gemma3/modeling_gemma3.py
// get_block_sequence_ids_for_mask + masking_utils blockwise_overlay): each run of consecutive
// `image_token_id` tokens in the current input_ids is one block whose tokens attend to each
// other in both directions; keys already in the cache (the first total - seq) belong to no block,
// as transformers passes token_type_ids at the first step only.
// input_ids: int64 [batch, seq]; attention_mask: int64 [batch, total]. Returns bool
// [batch, 1, seq, total].
Value* image_block_overlay(Ops& op, Value* input_ids, int64_t image_token_id, Value* attention_mask);

// PaliGemma's prefix-LM at the first step (transformers/models/paligemma/modeling_paligemma.py:
// token_type_ids 0, the prefix, for the whole prompt as PaliGemmaProcessor makes it without a
// suffix; block 0 while the cache is empty): every token of a prompt given with an empty cache
// attends to every other one; later steps are causal. `tokens`: [batch, seq, ...] (input_ids or
// inputs_embeds); attention_mask: int64 [batch, total]. Returns bool [1, 1, 1, 1].
Value* prompt_prefix_overlay(Ops& op, Value* tokens, Value* attention_mask);

}  // namespace mobius
