#include "driver/source_path.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "util/error.h"
#include "util/input_files.h"

namespace mobius {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string hf_hub_cache_dir() {
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
    if (!env(name).empty()) return env(name);
  if (!env("HF_HOME").empty()) return (fs::path(env("HF_HOME")) / "hub").string();
  const fs::path xdg = env("XDG_CACHE_HOME").empty() ? fs::path(env("HOME")) / ".cache" : fs::path(env("XDG_CACHE_HOME"));
  return (xdg / "huggingface" / "hub").string();
}

std::string resolve_checkpoint_dir(const std::string& arg) {
  if (fs::is_directory(arg)) return arg;
  static const std::regex id(R"([A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)");
  if (fs::exists(arg) || !std::regex_match(arg, id)) throw Error(arg + ": not a directory");
  const fs::path repo = fs::path(hf_hub_cache_dir()) / ("models--" + std::regex_replace(arg, std::regex("/"), "--"));
  std::string revision;
  std::ifstream(repo / "refs" / "main") >> revision;
  const fs::path snapshot = repo / "snapshots" / revision;
  if (revision.empty() || !fs::is_directory(snapshot))
    throw Error(arg + ": not a directory, and not in the Hugging Face cache (no " +
                (revision.empty() ? (repo / "refs" / "main").string() : snapshot.string()) +
                "): download it with `hf download " + arg + "` (huggingface_hub's CLI; HF_HUB_CACHE or HF_HOME "
                "choose the cache) or pass a checkpoint directory");
  return snapshot.string();
}

namespace {

// The first four bytes of a regular file are GGUF's magic (read through the safe opener).
bool has_gguf_magic(const std::string& path) {
  const int fd = open_regular_file(path);
  char magic[4] = {};
  const ssize_t n = ::read(fd, magic, sizeof magic);
  ::close(fd);
  return n == 4 && std::string_view(magic, 4) == "GGUF";
}

}  // namespace

SourceArg classify_source(const std::string& arg) {
  const fs::path p(arg);
  if (fs::is_directory(p)) {
    if (!fs::exists(p / "config.json") && !fs::exists(p / "model_index.json")) {
      std::vector<std::string> ggufs;
      for (const auto& e : fs::directory_iterator(p))
        if (e.path().extension() == ".gguf") ggufs.push_back(e.path().filename().string());
      std::sort(ggufs.begin(), ggufs.end());
      if (!ggufs.empty())
        throw Error(arg + ": a directory without config.json that holds " + escaped(ggufs.front()) +
                    (ggufs.size() > 1 ? " and " + std::to_string(ggufs.size() - 1) + " more .gguf files" : "") +
                    ": pass the .gguf file itself as the source");
    }
    return {arg, false};
  }
  if (fs::is_regular_file(p)) {
    if (has_gguf_magic(arg)) return {arg, true};
    if (p.extension() == ".gguf") return {arg, true};  // the reader names what is wrong with it
    if (p.filename() == "config.json") return {p.has_parent_path() ? p.parent_path().string() : ".", false};
    throw Error(arg + ": neither a GGUF file (no GGUF magic) nor a checkpoint directory: pass the directory "
                "holding config.json and *.safetensors, a Hugging Face id (ORG/NAME) or a .gguf file");
  }
  return {arg, p.extension() == ".gguf"};
}

}  // namespace mobius
