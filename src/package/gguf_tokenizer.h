// Tokenizer files for a GGUF build, synthesized from the file's tokenizer.* metadata the way
// transformers' GGUF loader builds its tokenizer (transformers/integrations/gguf/
// gguf_tokenizer_mapping.py: get_gguf_tokenizer, convert_gguf_tokenizer; the classes it hands the
// vocabulary to: GPT2Tokenizer, LlamaTokenizer, GemmaTokenizer; tokenization_utils_base.py
// generate_merges; TokenizersBackend.update_post_processor), so that transformers and
// onnxruntime-genai's tokenizer read the package and give transformers' GGUF tokenizer's ids.
//
// tokenizer.ggml.model selects the tokenizer:
//   "gpt2"   byte-level BPE (GPT2Tokenizer): tokens spelled in the GPT-2 byte alphabet (a token
//            using another character is respelled byte by byte), merges from tokenizer.ggml.merges;
//            ByteLevel pre-tokenizer, or the Split regex tokenizer.ggml.pre names
//            (GGUF_PRE_TOKENIZER_SPLITS: llama3 family, qwen2, qwen35, tekken, gpt-4o) + ByteLevel
//   "llama"  sentencepiece BPE with byte fallback: general.architecture gemma/gemma2/gemma3 as
//            GemmaTokenizer (all-whitespace tokens with a space respelled as U+2581, merges
//            ranked by token position), others as LlamaTokenizer (Metaspace, merges ranked by
//            tokenizer.ggml.scores); merges from tokenizer.ggml.merges when present
// Tokens of type 3 (control) become special added tokens, of type 4 (user-defined) plain added
// tokens. add_bos_token / add_eos_token come from tokenizer.ggml.add_bos_token / add_eos_token
// (default false; true for add_bos_token of a "llama" tokenizer, as llama.cpp does) and set the
// post-processor; the special tokens (bos, eos, unk, pad) are tokens[tokenizer.ggml.*_token_id];
// tokenizer.chat_template becomes tokenizer_config.json's chat_template; tokenizer_class is the
// class transformers loads the file as (TokenizersBackend, GemmaTokenizer for gemma files), so that
// AutoTokenizer reads tokenizer.json as it is.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "weights/gguf.h"

namespace mobius {

struct GgufTokenizer {
  nlohmann::ordered_json tokenizer;         // tokenizer.json (Hugging Face tokenizers format)
  nlohmann::ordered_json tokenizer_config;  // tokenizer_config.json
};

// The tokenizer `file` describes, or nullopt when it has no tokenizer.ggml.model key (no
// tokenizer). Throws mobius::Error naming the file and key: a tokenizer.ggml.model other than gpt2
// or llama, a missing or mistyped tokens / merges / scores array (a "llama" tokenizer without
// merges needs scores), a token that is not UTF-8, a merge that is not two tokens, a special token
// id outside the vocabulary.
std::optional<GgufTokenizer> gguf_tokenizer(const GgufFile& file);

// Writes tokenizer.json and tokenizer_config.json of gguf_tokenizer(file) into `out_dir`; returns
// how many files it wrote (0 when the file has no tokenizer). Errors as gguf_tokenizer, or naming
// the output file when it cannot be written.
int write_gguf_tokenizer_files(const GgufFile& file, const std::string& out_dir);

}  // namespace mobius
