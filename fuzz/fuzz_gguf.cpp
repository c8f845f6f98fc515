// GGUF: the reader (weights/gguf.h) and the config synthesis (weights/gguf_checkpoint.h), then the
// graph of the synthesized config, every small tensor dequantized to float32 (weights/gguf_quants.h:
// each block type, MXFP4 included, with the converter's transforms undone), and --precision keep's copy of every matrix stored in a kept
// block type (produce_stored: Q4_0, Q8_0, Q6_K; whole, then a row range, scales in float32 and
// float16). Structure-aware (fuzz_gguf_util.h): one scalar metadata value
// of a valid file (block_count, context_length, head counts, eps, ...) overwritten with a value that
// breaks size arithmetic, half the time; else libFuzzer's byte mutations.
#include <cstring>

#include "fuzz_gguf_util.h"
#include "registry/config_defaults.h"
#include "registry/registry.h"
#include "util/error.h"
#include "weights/convert.h"
#include "weights/gguf.h"
#include "weights/gguf_checkpoint.h"
#include "weights/quantize.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  return mobius::fuzz::mutate_gguf(data, size, max_size, seed);
}

namespace {

void produce_kept(const mobius::GgufCheckpoint& g) {
  for (const std::string& name : g.names()) {
    const mobius::TensorInfo* t = g.find(name);
    if (!t) continue;
    const std::optional<mobius::BlockQuantization> q = g.stored_quantization(*t);
    if (!q) continue;
    const int64_t n = t->shape[0], k = t->shape[1], blocks = mobius::quant_k_blocks(k, *q);
    if (n * k > (int64_t{1} << 22)) continue;  // memory: a few MB per matrix
    std::vector<uint8_t> data(static_cast<size_t>(n * blocks * mobius::quant_blob_size(*q)));
    std::vector<uint8_t> scales(static_cast<size_t>(n * blocks * 4));
    std::vector<uint8_t> zero_points(q->symmetric ? 0 : static_cast<size_t>(n * mobius::quant_zero_point_bytes(k, *q)));
    uint8_t* zp = q->symmetric ? nullptr : zero_points.data();
    g.produce_stored(*t, 0, n, mobius::DataType::FLOAT, data.data(), scales.data(), zp);
    g.produce_stored(*t, n / 2, n, mobius::DataType::FLOAT16, data.data(), scales.data(), zp);
  }
}

// produce() of every tensor of at most 2^20 elements, whole, in float32.
void produce_float(const mobius::GgufCheckpoint& g) {
  for (const std::string& name : g.names()) {
    const mobius::TensorInfo* t = g.find(name);
    if (!t || t->shape.empty()) continue;
    int64_t elements = 1;
    for (const int64_t d : t->shape) elements *= d;
    if (elements > (int64_t{1} << 20)) continue;  // memory: 4 MB per tensor
    std::vector<uint8_t> out(static_cast<size_t>(elements) * 4);
    g.produce(*t, mobius::DataType::FLOAT, false, 0, mobius::output_rows(t->shape, false), out);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    mobius::GgufCheckpoint g(mobius::fuzz::as_file(data, size));
    produce_kept(g);
    produce_float(g);
    const mobius::HfConfig& raw = g.config();
    const mobius::RegistryEntry& e = mobius::find_architecture(raw.get_string("model_type"), raw.file());
    e.create(mobius::with_class_defaults(raw, e.model_type), mobius::DataType::FLOAT)->build_graphs();
  } catch (const mobius::Error&) {
  }
  return 0;
}
