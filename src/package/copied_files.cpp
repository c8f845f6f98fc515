#include "package/copied_files.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "package/writer.h"
#include "util/error.h"
#include "util/input_files.h"

namespace fs = std::filesystem;

namespace mobius {

bool is_copied_file(const std::string& name) {
  auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), name) != std::end(list); };
  return in(kTokenizerFiles) || in(kPipelineFiles);
}

int copy_tokenizer_files(const std::string& checkpoint_dir, const std::string& out_dir) {
  int n = 0;
  if (checkpoint_dir.empty()) return n;
  for (const char* f : kTokenizerFiles) {
    const fs::path src = checkpoint_file(checkpoint_dir, f);
    std::error_code ec;
    if (fs::symlink_status(src, ec).type() == fs::file_type::not_found) continue;
    write_file_synced((fs::path(out_dir) / f).string(), read_regular_file(src.string(), size_t{1} << 30));
    ++n;
  }
  return n;
}

void add_transformers_js_config(const std::string& out_dir, const std::string& dtype) {
  const fs::path path = fs::path(out_dir) / "config.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  nlohmann::json config = read_json_file(path.string(), kMaxJsonBytes);
  if (!config.is_object()) throw Error(path.string() + ": not a JSON object");
  config["transformers.js_config"] = {{"use_external_data_format", true}, {"dtype", dtype}};
  if (!fs::remove(path, ec) || ec) throw Error(path.string() + ": cannot replace: " + ec.message());
  write_file_synced(path.string(), config.dump(2) + "\n");
}

uint64_t tokenizer_files_bytes(const std::string& checkpoint_dir) {
  uint64_t total = 0;
  if (checkpoint_dir.empty()) return total;
  for (const char* f : kTokenizerFiles) {
    std::error_code ec;
    const uintmax_t n = fs::file_size(fs::path(checkpoint_dir) / f, ec);
    if (!ec) total += n;
  }
  return total;
}

}  // namespace mobius
