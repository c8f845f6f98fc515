#include "util/input_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "util/error.h"

namespace fs = std::filesystem;

namespace mobius {
namespace {

std::string file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The deepest nesting of `text`'s arrays and objects (brackets inside strings do not count),
// stopping as soon as it passes `limit`.
int nesting_depth(std::span<const uint8_t> text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escape = false;
  for (uint8_t c : text) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

bool is_within(const fs::path& p, const fs::path& root) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end() && !r->empty(); ++r, ++q)  // a trailing '/' of root ends in an empty part
    if (q == p.end() || *q != *r) return false;
  return true;
}

std::string escaped(std::string_view name) {
  std::string out;
  for (unsigned char c : name) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\0') out += "\\0";
    else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

fs::path checkpoint_file(const fs::path& dir, const std::string& name, const std::string& source) {
  const std::string who = (source.empty() ? "" : source + ": ") + "file '" + escaped(name) + "'";
  const fs::path rel(name);
  if (name.empty() || rel.is_absolute())
    throw Error(who + ": an absolute path (or none), outside the checkpoint directory " + dir.string());
  for (const fs::path& part : rel)
    if (part == "..") throw Error(who + ": '..' leads outside the checkpoint directory " + dir.string());
  const fs::path path = dir / rel;
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() == fs::file_type::not_found) return path;
  const fs::path root = fs::canonical(dir, ec);
  const fs::path target = ec ? fs::path() : fs::canonical(path, ec);
  if (ec) throw Error(path.string() + ": cannot resolve: " + ec.message());
  // The Hugging Face cache: <repo>/snapshots/<rev>/<file> is a link to <repo>/blobs/<hash>.
  const bool hf_blob = root.parent_path().filename() == "snapshots" &&
                       is_within(target, root.parent_path().parent_path() / "blobs");
  if (!is_within(target, root) && !hf_blob)
    throw Error(who + ": resolves to " + escaped(target.string()) + ", outside the checkpoint directory " +
                root.string() + " (a symbolic link out of the checkpoint is not followed)");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error(path.string() + ": " + file_kind(st.st_mode) + ", expected a regular file");
  return path;
}

int open_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": " + (S_ISREG(st.st_mode) ? std::string("cannot stat: ") + std::strerror(err)
                                                     : file_kind(st.st_mode) + ", expected a regular file"));
  }
  return fd;
}

std::string read_regular_file(const std::string& path, size_t max_bytes) {
  const int fd = open_regular_file(path);
  struct stat st {};
  ::fstat(fd, &st);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw Error(path + ": " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) +
                " this file may have");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::read(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      ::close(fd);
      throw Error(path + ": read failed: " + (err ? std::strerror(err) : "file shrank while read"));
    }
    at += static_cast<size_t>(n);
  }
  ::close(fd);
  return text;
}

std::string read_file_head(const std::string& path, size_t max_bytes) {
  const int fd = open_regular_file(path);
  std::string head(max_bytes, '\0');
  size_t at = 0;
  while (at < head.size()) {
    const ssize_t n = ::read(fd, head.data() + at, head.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": read failed: " + std::strerror(err));
    }
    if (n == 0) break;
    at += static_cast<size_t>(n);
  }
  ::close(fd);
  head.resize(at);
  return head;
}

nlohmann::json parse_json(std::span<const uint8_t> text, const std::string& file) {
  if (text.size() > kMaxJsonBytes)
    throw Error(file + ": " + std::to_string(text.size()) + " bytes of JSON, more than the limit of " +
                std::to_string(kMaxJsonBytes));
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    throw Error(file + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  // A key twice in one object: nlohmann keeps the last silently; refuse the ambiguity instead.
  std::vector<std::set<std::string>> keys;  // of each open object
  // Where the parser is, for a message about a value: per open object or array, the current key
  // or the index of the next element.
  struct Level {
    bool array;
    std::string key;
    size_t index = 0;
  };
  std::vector<Level> path;
  auto next_element = [&] {
    if (!path.empty() && path.back().array) ++path.back().index;
  };
  auto unique_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) {
      keys.emplace_back();
      path.push_back({false, ""});
    } else if (event == E::array_start) {
      path.push_back({true, ""});
    } else if (event == E::object_end || event == E::array_end) {
      if (event == E::object_end) keys.pop_back();
      path.pop_back();
      next_element();
    } else if (event == E::key) {
      if (!keys.back().insert(parsed.get<std::string>()).second)
        throw Error(file + ": key '" + escaped(parsed.get<std::string>()) + "' appears twice in one JSON object");
      path.back().key = parsed.get<std::string>();
    } else if (event == E::value) {
      next_element();
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), unique_keys);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file + ": invalid JSON at byte " + std::to_string(e.byte));
  } catch (const nlohmann::json::out_of_range&) {  // a number beyond a double: 1e999
    std::string field;
    for (const Level& l : path)
      field += l.array ? "[" + std::to_string(l.index) + "]" : (field.empty() ? "" : ".") + escaped(l.key);
    throw Error(file + ": field '" + field + "': a number out of range (beyond a 64-bit float, e.g. 1e999)");
  } catch (const nlohmann::json::exception& e) {
    throw Error(file + ": invalid JSON");
  }
}

nlohmann::json parse_json(const std::string& text, const std::string& file) {
  return parse_json(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), file);
}

nlohmann::json read_json_file(const std::string& path, size_t max_bytes) {
  return parse_json(read_regular_file(path, max_bytes), path);
}

}  // namespace mobius
