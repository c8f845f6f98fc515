// Byte-level: a safetensors file (8-byte header length, JSON header, data) through the reader's
// validation (weights/safetensors.h SafetensorsFile).
#include "fuzz_util.h"
#include "util/error.h"
#include "weights/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    mobius::SafetensorsFile f(mobius::fuzz::as_file(data, size));
    for (const auto& [name, t] : f.tensors())
      if (t.data.size() && (t.data.data() < f.mapping().bytes().data() ||
                            t.data.data() + t.data.size() > f.mapping().bytes().data() + f.mapping().bytes().size()))
        __builtin_trap();  // a view outside the file
  } catch (const mobius::Error&) {
  }
  return 0;
}
