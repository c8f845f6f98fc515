// Reading untrusted input files safely (docs/security.md).
//
// Every file the build reads from a checkpoint is opened through these helpers, which refuse,
// with a one-line mobius::Error naming the file:
//   - a path that resolves (after symlinks) outside the checkpoint directory, except the Hugging
//     Face cache layout, where <repo>/snapshots/<rev>/<file> links into the same <repo>/blobs/;
//   - anything that is not a regular file (a FIFO, a device, a directory): it is opened with
//     O_NONBLOCK and checked with fstat before a byte is read, so nothing blocks;
//   - JSON over a size or nesting limit, before it is parsed (nlohmann's recursive parser would
//     otherwise take gigabytes of memory or overflow the stack).
// Messages never quote the file's bytes, and names taken from files are printed escaped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mobius {

// Limits on JSON text read from input files. A safetensors header may have 100,000,000 bytes (the
// safetensors crate's own MAX_HEADER_SIZE); an index 64 MiB (DeepSeek-V3's 91k tensors take 9 MB);
// config.json and generation_config.json 16 MiB (real ones take under 100 kB). The deepest real
// files (config.json with rope_parameters per layer type) nest 4 levels.
constexpr size_t kMaxJsonBytes = 100'000'000;
constexpr size_t kMaxIndexBytes = size_t{64} << 20;
constexpr size_t kMaxConfigBytes = size_t{16} << 20;
constexpr int kMaxJsonDepth = 64;
// A model.onnx read back (apply-weights' PACKAGE, mobius_cpp.Package.open): protobuf's own limit.
// mobius writes the weights to model.onnx.data, so its model.onnx files take kilobytes to megabytes.
constexpr size_t kMaxOnnxModelBytes = (size_t{2} << 30) - 1;
// Tensor names of a safetensors file (the GGUF spec caps them at 64 bytes): a name is matched
// against patterns (util/linear_regex.h, in time proportional to its length) and printed in errors.
constexpr size_t kMaxNameBytes = 4096;

// `name` with every control byte written as \n, \t, \0 or \xHH, so a name from a file cannot
// split or cut an error line (bytes from 0x80 up, UTF-8, are kept).
std::string escaped(std::string_view name);

// `p` is `root` or inside it, comparing path components (both absolute and normal, e.g. canonical).
bool is_within(const std::filesystem::path& p, const std::filesystem::path& root);

// The checkpoint-relative file `name` (from an index or a fixed file name) inside `dir`: the path
// `dir / name`. Throws mobius::Error "<source>: <what> '<name>': ..." when `name` is absolute or
// has a '..' component, or the file resolves outside `dir` (other than the Hugging Face cache
// layout), or exists and is not a regular file. `source` names the file that named it (the index)
// or is empty for a fixed name. Does not check that the file exists.
std::filesystem::path checkpoint_file(const std::filesystem::path& dir, const std::string& name,
                                      const std::string& source = "");

// Opens `path` read-only without following it into a FIFO or device: O_NONBLOCK, then fstat; a
// non-regular file is closed and refused. Returns the file descriptor (the caller closes it).
// Throws mobius::Error "<path>: cannot open: <strerror>" or "<path>: not a regular file (...)".
int open_regular_file(const std::string& path);

// The whole regular file `path` as text, refusing more than `max_bytes` before reading them.
std::string read_regular_file(const std::string& path, size_t max_bytes = kMaxJsonBytes);

// The first `max_bytes` bytes of the regular file `path` (fewer when it is shorter). Throws
// mobius::Error as open_regular_file, or "<path>: read failed: ...".
std::string read_file_head(const std::string& path, size_t max_bytes);

// Parses `text` (from `file`) as JSON after checking its size and nesting against the limits
// above. Throws mobius::Error "<file>: invalid JSON at byte N" (never the library's message, which
// quotes the bytes), "<file>: JSON nested deeper than 64 levels", "... bytes of JSON, more than
// the limit ..." or "<file>: key 'k' appears twice in one JSON object" (refused as ambiguous).
nlohmann::json parse_json(std::span<const uint8_t> text, const std::string& file);
nlohmann::json parse_json(const std::string& text, const std::string& file);

// read_regular_file(path, max_bytes) + parse_json.
nlohmann::json read_json_file(const std::string& path, size_t max_bytes);

}  // namespace mobius
