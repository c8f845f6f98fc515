// Structure-aware: model.safetensors.index.json (JSON-mutated) over a checkpoint directory with
// two valid shards and a file outside it, through SafetensorsCheckpoint: a weight_map naming
// anything but the shards must be an error, never a read of the outside file.
#include "fuzz_util.h"
#include "util/error.h"
#include "weights/safetensors.h"

namespace fs = std::filesystem;

namespace {

void write_shard(const fs::path& p, const std::string& tensor) {
  const std::string header = "{\"" + tensor + "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header + std::string(8, '\0');
  mobius::fuzz::write_file(p, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

const fs::path& checkpoint() {
  static const fs::path dir = [] {
    const fs::path root = mobius::fuzz::scratch_dir();
    fs::create_directories(root / "ckpt");
    write_shard(root / "ckpt" / "a.safetensors", "a");
    write_shard(root / "ckpt" / "b.safetensors", "b");
    write_shard(root / "outside.safetensors", "outside");
    fs::create_symlink("../outside.safetensors", root / "ckpt" / "link.safetensors");
    return root / "ckpt";
  }();
  return dir;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  return mobius::fuzz::mutate_json(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mobius::fuzz::write_file(checkpoint() / "model.safetensors.index.json", data, size);
  try {
    mobius::SafetensorsCheckpoint c(checkpoint().string());
    if (c.find("outside")) __builtin_trap();  // read a file outside the checkpoint
  } catch (const mobius::Error&) {
  }
  return 0;
}
