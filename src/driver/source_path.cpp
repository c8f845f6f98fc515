#include "driver/source_path.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

#include "util/error.h"

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

void check_gguf_path(const std::string& path) {
  if (!fs::is_directory(path)) return;
  std::vector<std::string> ggufs;
  for (const auto& e : fs::directory_iterator(path))
    if (e.path().extension() == ".gguf") ggufs.push_back(e.path().filename().string());
  std::sort(ggufs.begin(), ggufs.end());
  std::string found = "no .gguf file in it";
  if (!ggufs.empty())
    found = "it holds " + ggufs.front() + (ggufs.size() > 1 ? " and " + std::to_string(ggufs.size() - 1) + " more" : "");
  throw Error(path + ": a directory, but --gguf takes a .gguf file (" + found +
              "); a Hugging Face checkpoint directory goes to --config");
}

}  // namespace mobius
