#include "driver/source_path.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
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

namespace {

// A name part of a model id or a revision: a letter or digit, then letters, digits, '.', '_', '-'
// (huggingface_hub's repo-id rule), at most 96 bytes; so never '..', '/' or empty.
bool is_name_part(std::string_view s, size_t max = 96) {
  if (s.empty() || s.size() > max || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

}  // namespace

std::string shown_argument(const std::string& arg) {
  if (arg.size() <= 256) return escaped(arg);
  return escaped(arg.substr(0, 128)) + "... (" + std::to_string(arg.size()) + " bytes)";
}

std::string resolve_checkpoint_dir(const std::string& arg) {
  std::error_code ec;  // a name too long for the file system is "not a directory", not an exception
  if (fs::is_directory(arg, ec)) return arg;
  const size_t slash = arg.find('/');
  const bool id = slash != std::string::npos && is_name_part(std::string_view(arg).substr(0, slash)) &&
                  is_name_part(std::string_view(arg).substr(slash + 1));
  if (fs::exists(arg, ec)) throw Error(shown_argument(arg) + ": not a directory (a checkpoint directory with config.json, "
                                     "a .gguf file or a Hugging Face id ORG/NAME)");
  if (!id)
    throw Error(shown_argument(arg) + ": no such file or directory (a checkpoint directory with config.json, a .gguf "
                "file or a Hugging Face id ORG/NAME)");
  const fs::path repo = fs::path(hf_hub_cache_dir()) / ("models--" + arg.substr(0, slash) + "--" + arg.substr(slash + 1));
  const fs::path ref = repo / "refs" / "main";
  auto missing = [&](const fs::path& what) {
    return Error(arg + ": not a directory, and not in the Hugging Face cache (no " + what.string() +
                 "): download it with `hf download " + arg + "` (huggingface_hub's CLI; HF_HUB_CACHE or HF_HOME "
                 "choose the cache) or pass a checkpoint directory");
  };
  if (!fs::exists(ref, ec)) throw missing(ref);
  // refs/main holds a commit hash (huggingface_hub writes 40 hex digits): read as untrusted input,
  // so that it cannot name a snapshot outside the repository ('../..', an absolute path).
  std::string revision = read_regular_file(ref.string(), 1024);
  while (!revision.empty() && std::isspace(static_cast<unsigned char>(revision.back()))) revision.pop_back();
  if (!is_name_part(revision, 256))
    throw Error(ref.string() + ": expected a revision (a commit hash: letters, digits, '.', '_', '-'), got " +
                std::to_string(revision.size()) + " bytes that are not one");
  const fs::path snapshot = repo / "snapshots" / revision;
  if (!fs::is_directory(snapshot, ec)) throw missing(snapshot);
  const fs::path real = fs::canonical(snapshot, ec), snapshots = fs::canonical(repo / "snapshots", ec);
  if (ec || !is_within(real, snapshots) || real == snapshots)
    throw Error(snapshot.string() + ": resolves to " + real.string() + ", outside the cache's " +
                (repo / "snapshots").string() + "; refusing to read it");
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
  std::error_code ec;  // a name too long for the file system is neither, not an exception
  if (fs::is_directory(p, ec)) {
    if (!fs::exists(p / "config.json", ec) && !fs::exists(p / "model_index.json", ec)) {
      std::vector<std::string> ggufs;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.path().extension() == ".gguf") ggufs.push_back(e.path().filename().string());
      std::sort(ggufs.begin(), ggufs.end());
      if (!ggufs.empty())
        throw Error(shown_argument(arg) + ": a directory without config.json that holds " + escaped(ggufs.front()) +
                    (ggufs.size() > 1 ? " and " + std::to_string(ggufs.size() - 1) + " more .gguf files" : "") +
                    ": pass the .gguf file itself as the source");
    }
    return {arg, false};
  }
  if (fs::is_regular_file(p, ec)) {
    if (has_gguf_magic(arg)) return {arg, true};
    if (p.extension() == ".gguf") return {arg, true};  // the reader names what is wrong with it
    if (p.filename() == "config.json") return {p.has_parent_path() ? p.parent_path().string() : ".", false};
    throw Error(shown_argument(arg) + ": neither a GGUF file (no GGUF magic) nor a checkpoint directory: pass the directory "
                "holding config.json and *.safetensors, a Hugging Face id (ORG/NAME) or a .gguf file");
  }
  return {arg, p.extension() == ".gguf"};
}

}  // namespace mobius
