// GGUF tokenizer metadata (package/gguf_tokenizer.h): tokens, scores, token types, merges and the
// special token ids of a valid file, through the tokenizer.json synthesis (merge generation from
// scores included). Structure-aware as fuzz_gguf (fuzz_gguf_util.h), array elements included.
#include "fuzz_gguf_util.h"
#include "package/gguf_tokenizer.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  return mobius::fuzz::mutate_gguf(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    mobius::GgufFile f(mobius::fuzz::as_file(data, size));
    if (auto t = mobius::gguf_tokenizer(f)) (void)t->tokenizer.dump();
  } catch (const mobius::Error&) {
  }
  return 0;
}
