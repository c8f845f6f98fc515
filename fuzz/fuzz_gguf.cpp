// GGUF: the reader (weights/gguf.h) and the config synthesis (weights/gguf_checkpoint.h), then the
// graph of the synthesized config. Structure-aware (fuzz_gguf_util.h): one scalar metadata value
// of a valid file (block_count, context_length, head counts, eps, ...) overwritten with a value that
// breaks size arithmetic, half the time; else libFuzzer's byte mutations.
#include <cstring>

#include "fuzz_gguf_util.h"
#include "registry/config_defaults.h"
#include "registry/registry.h"
#include "util/error.h"
#include "weights/gguf.h"
#include "weights/gguf_checkpoint.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  return mobius::fuzz::mutate_gguf(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    mobius::GgufCheckpoint g(mobius::fuzz::as_file(data, size));
    const mobius::HfConfig& raw = g.config();
    const mobius::RegistryEntry& e = mobius::find_architecture(raw.get_string("model_type"), raw.file());
    e.create(mobius::with_class_defaults(raw, e.model_type), mobius::DataType::FLOAT)->build_graphs();
  } catch (const mobius::Error&) {
  }
  return 0;
}
