// The Gemma text decoders (archs/gemma.cpp), which the vision-language families reuse
// (archs/gemma3.cpp, paligemma.cpp).
#pragma once

#include <string>

#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// The DecoderSpec of a Gemma text config `c` of model type `type` (gemma, gemma2 or gemma3_text;
// the fields the type's transformers configuration class reads, with its defaults where `c`
// leaves them out; see the top of archs/gemma.cpp). use_bidirectional_attention is not read:
// the text-generation rows refuse it, a vision-language family applies its own mask. Throws
// mobius::Error naming the field on a missing or inconsistent one.
DecoderSpec gemma_decoder_spec(const HfConfig& c, DataType dtype, const std::string& type);

// EmbeddingGemma: the gemma3_text config `c` with use_bidirectional_attention, as a text encoder
// (task feature-extraction, archs/gemma3_encoder.cpp). Throws mobius::Error as gemma_decoder_spec.
std::unique_ptr<Architecture> create_gemma3_text_encoder(const HfConfig& c, DataType dtype);

// Gemma3TextConfig / Gemma3nTextConfig convert_rope_params_to_dict + standardize_rope_params:
// s.rope (full_attention: rope_parameters["full_attention"], else {"rope_type": "default"} updated
// with rope_scaling (whose legacy "type" key alone leaves the default rope), theta rope_theta,
// default 1e6) and s.layer_type_rope["sliding_attention"] (rope_parameters["sliding_attention"],
// theta rope_local_base_freq, default 1e4), both over s.attention.head_dim. Throws
// mobius::FieldError naming a bad RoPE field.
void read_gemma3_rope(const HfConfig& c, DecoderSpec& s);

// The softcapping field `key` of `c`: 0 (none) when null, `fallback` when absent (the config
// class default). Throws mobius::FieldError on a negative value.
float read_softcap(const HfConfig& c, const char* key, double fallback);

// Gemma3Model / PaliGemmaModel.forward: an image_token_id outside the text vocabulary
// (>= vocab_size) is embedded as token 0 ("Replace image id with PAD if the image token is OOV");
// inside it, ids are unchanged. input_ids int64 [batch, seq] -> the ids to embed.
Value* gemma_vlm_token_ids(Ops& op, Value* input_ids, int64_t image_token_id, int64_t vocab_size);

}  // namespace mobius
