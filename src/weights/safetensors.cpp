#include "weights/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/input_files.h"
#include "weights/convert.h"

namespace mobius {

namespace {

// The transformers class that loads the checkpoint in `dir`: config.json's `architectures[0]`
// (the class save_pretrained wrote), or "AutoModel" when config.json does not name one.
std::string model_class(const std::string& dir) {
  try {
    const nlohmann::json c = read_json_file((std::filesystem::path(dir) / "config.json").string(), size_t{1} << 24);
    const auto it = c.find("architectures");
    if (it != c.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) return escaped((*it)[0].get<std::string>());
  } catch (const Error&) {  // an unreadable config.json only costs the advice its class name
  }
  return "AutoModel";
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = open_regular_file(path);  // refuses a FIFO or device before reading
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(path + ": cannot stat: " + std::strerror(errno));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw Error(path + ": cannot map: " + std::strerror(errno));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

void MappedFile::release(std::span<const uint8_t> range) const {
  if (range.empty()) return;
  // A fault maps the whole page-cache folio around it (up to 2 MiB of the file, its neighbours'
  // bytes included), so the range is widened to 2 MiB boundaries (within the mapping): else the
  // bytes of a neighbour released before stay mapped for good (Qwen3-30B-A3B's 3 MB experts, in
  // another order in the file than in the graph: RssFile grew to 216 MiB). A neighbour still
  // being read is mapped again on its next access, from the page cache.
  constexpr uintptr_t kFolio = uintptr_t{2} << 20;
  const auto base = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t first = reinterpret_cast<uintptr_t>(range.data()) - base;
  const uintptr_t begin = base + first / kFolio * kFolio;
  const uintptr_t end = std::min(base + size_, base + (first + range.size() + kFolio - 1) / kFolio * kFolio);
  MOBIUS_ASSERT(range.data() >= data_ && range.data() + range.size() <= data_ + size_,
                "MappedFile::release: range outside the mapping");
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);  // advisory: errors ignored
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

DataType safetensors_dtype(const std::string& s) {
  static const std::map<std::string, DataType> table = {
      {"F64", DataType::DOUBLE}, {"F32", DataType::FLOAT},  {"F16", DataType::FLOAT16},
      {"BF16", DataType::BFLOAT16}, {"I64", DataType::INT64}, {"I32", DataType::INT32},
      {"I16", DataType::INT16},  {"I8", DataType::INT8},    {"U8", DataType::UINT8},
      {"U16", DataType::UINT16}, {"U32", DataType::UINT32}, {"U64", DataType::UINT64},
      {"BOOL", DataType::BOOL}};
  auto it = table.find(s);
  return it == table.end() ? DataType::UNDEFINED : it->second;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path) {
  auto fail = [&](const std::string& msg) -> void { throw Error(path + ": " + msg); };
  auto bytes = file_.bytes();
  if (bytes.size() < 8) fail("truncated: " + std::to_string(bytes.size()) + " bytes, no header");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  if (n > bytes.size() - 8)
    fail("header length " + std::to_string(n) + " runs past the end of the file (" +
         std::to_string(bytes.size()) + " bytes)");
  nlohmann::json header = parse_json(bytes.subspan(8, n), path + " (header)");  // not const: info["x"] of a missing x is null
  if (!header.is_object()) fail("header is not a JSON object");
  const uint64_t data_size = bytes.size() - 8 - n;
  const uint8_t* data = bytes.data() + 8 + n;
  struct Span {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) fail("__metadata__ is not an object");
      for (auto& [k, v] : info.items())
        if (v.is_string()) metadata_[k] = v.get<std::string>();
      continue;
    }
    if (name.size() > kMaxNameBytes)
      fail("tensor '" + escaped(name.substr(0, 64)) + "...': a name of " + std::to_string(name.size()) +
           " bytes, longer than mobius' limit of " + std::to_string(kMaxNameBytes) + " (real names take under 200)");
    auto tfail = [&](const std::string& msg) { fail("tensor '" + escaped(name) + "': " + msg); };
    if (!info.is_object()) tfail("entry is not an object");
    if (!info.contains("dtype") || !info["dtype"].is_string()) tfail("missing dtype");
    std::string ds = info["dtype"].get<std::string>();
    DataType dt = safetensors_dtype(ds);
    if (dt == DataType::UNDEFINED) tfail("unknown dtype '" + escaped(ds) + "'");
    if (!info.contains("shape") || !info["shape"].is_array()) tfail("missing shape");
    std::vector<int64_t> shape;
    uint64_t count = 1;
    for (auto& d : info["shape"]) {
      if (!d.is_number_unsigned()) tfail("shape entries must be non-negative integers");
      const uint64_t dim = d.get<uint64_t>();
      if (dim > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(count, dim, &count))
        tfail("shape is too large (element count overflows 64 bits)");
      shape.push_back(static_cast<int64_t>(dim));
    }
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(count, dtype_size(dt), &nbytes))
      tfail("shape is too large (byte size overflows 64 bits)");
    if (nbytes > static_cast<uint64_t>(INT64_MAX)) tfail("shape is too large (byte size overflows int64)");
    auto& off = info["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      tfail("data_offsets must be two non-negative integers");
    uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end) tfail("data_offsets begin " + std::to_string(begin) + " > end " + std::to_string(end));
    if (end > data_size)
      tfail("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
            "] out of range: data buffer has " + std::to_string(data_size) +
            " bytes (file truncated?)");
    if (end - begin != nbytes)
      tfail(std::to_string(end - begin) + " bytes for " + std::to_string(count) + " elements of " + ds);
    tensors_[name] = TensorView{{name, dt, shape, &file_.path()}, {data + begin, end - begin}};
    spans.push_back({begin, end, name});
  }
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t pos = 0;
  std::string prev;
  for (const Span& s : spans) {
    if (s.begin < pos)
      fail("tensor '" + escaped(s.name) + "' overlaps tensor '" + escaped(prev) + "' (offset " +
           std::to_string(s.begin) + " < " + std::to_string(pos) + ")");
    if (s.begin > pos)
      fail("gap in data buffer before tensor '" + escaped(s.name) + "' (offset " + std::to_string(s.begin) +
           ", expected " + std::to_string(pos) + ")");
    pos = s.end;
    prev = s.name;
  }
  if (pos != data_size)
    fail("data buffer has " + std::to_string(data_size) + " bytes but tensors cover " +
         std::to_string(pos));
}

SafetensorsCheckpoint::SafetensorsCheckpoint(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> weight_map;  // index entries: tensor, shard path
  fs::path index = checkpoint_file(dir, "model.safetensors.index.json");
  std::error_code ec;
  if (fs::exists(index, ec)) {
    const nlohmann::json j = read_json_file(index.string(), kMaxIndexBytes);
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      throw Error(index.string() + ": missing object 'weight_map'");
    for (auto& [name, file] : j["weight_map"].items()) {
      if (!file.is_string())
        throw Error(index.string() + ": weight_map['" + escaped(name) + "'] is not a file name");
      std::string p = with_context(index.string() + ": weight_map['" + escaped(name) + "']", [&] {
        return checkpoint_file(dir, file.get<std::string>()).string();
      });
      if (!fs::exists(p))
        throw Error(index.string() + ": weight_map['" + escaped(name) + "'] names missing file " + escaped(p));
      if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
      weight_map.emplace_back(name, p);
    }
  } else {
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".safetensors")
        paths.push_back(checkpoint_file(dir, e.path().filename().string()).string());
    if (ec) throw Error(dir + ": cannot list: " + ec.message());
    std::sort(paths.begin(), paths.end());
  }
  if (paths.empty()) {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".bin" || e.path().extension() == ".pt" || e.path().extension() == ".pth")
        throw Error(e.path().string() + ": PyTorch pickle weights are not read (loading a pickle can run code), only "
                    "*.safetensors: convert the checkpoint once with transformers, `" + model_class(dir) +
                    ".from_pretrained(DIR).save_pretrained(NEW_DIR)`, which writes model.safetensors");
    throw Error(dir + ": no *.safetensors files (use --no-weights to build without weights)");
  }
  for (const auto& p : paths) {
    files_.push_back(std::make_unique<SafetensorsFile>(p));
    for (const auto& [name, view] : files_.back()->tensors()) {
      auto [it, inserted] = index_.emplace(name, &view);
      if (!inserted)
        throw Error(p + ": tensor '" + escaped(name) + "' also in " + *it->second->file);
      mapping_[&view] = &files_.back()->mapping();
    }
  }
  for (const auto& [name, p] : weight_map)  // a stale entry: the tensor is taken from where it is
    if (auto it = index_.find(name); it == index_.end() || *it->second->file != p)
      std::cerr << "mobius: warning: " << index.string() << ": weight_map['" << escaped(name) << "'] names " << escaped(p)
                << ", which does not hold that tensor\n";
}

const TensorView* SafetensorsCheckpoint::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

std::vector<std::string> SafetensorsCheckpoint::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : index_) out.push_back(name);
  return out;
}

void SafetensorsCheckpoint::produce(const TensorInfo& t, DataType dst, bool transpose,
                                    int64_t row_begin, int64_t row_end, std::span<uint8_t> out) const {
  convert_rows(static_cast<const TensorView&>(t), dst, transpose, row_begin, row_end, out);
}

void SafetensorsCheckpoint::produce_tile(const TensorInfo& t, DataType dst, int64_t row_begin, int64_t row_end,
                                         int64_t col_begin, int64_t col_end, std::span<uint8_t> out) const {
  const TensorView& view = static_cast<const TensorView&>(t);
  MOBIUS_ASSERT(view.shape.size() == 2 && 0 <= col_begin && col_begin <= col_end && col_end <= view.shape[0],
                "SafetensorsCheckpoint::produce_tile: column range");
  const size_t row_bytes = static_cast<size_t>(view.shape[1]) * dtype_size(view.dtype);
  TensorView rows = view;  // source rows [col_begin, col_end): the tile's output columns
  rows.shape = {col_end - col_begin, view.shape[1]};
  rows.data = view.data.subspan(static_cast<size_t>(col_begin) * row_bytes,
                                static_cast<size_t>(col_end - col_begin) * row_bytes);
  convert_rows(rows, dst, true, row_begin, row_end, out);
}

void SafetensorsCheckpoint::release(const TensorInfo& t, bool transpose, int64_t row_begin,
                                    int64_t row_end) const {
  if (row_end <= row_begin) return;
  const TensorView& view = static_cast<const TensorView&>(t);
  const size_t esize = dtype_size(view.dtype);
  size_t begin, end;  // the source bytes the range read: its elements, or its matrices
  if (!transpose) {
    const size_t cols = view.shape.empty() ? 1 : static_cast<size_t>(view.shape.back());
    begin = static_cast<size_t>(row_begin) * cols * esize;
    end = static_cast<size_t>(row_end) * cols * esize;
  } else {
    const size_t rank = view.shape.size(), cols = static_cast<size_t>(view.shape[rank - 1]);
    const size_t matrix = static_cast<size_t>(view.shape[rank - 2]) * cols * esize;
    begin = static_cast<size_t>(row_begin) / cols * matrix;
    end = (static_cast<size_t>(row_end) + cols - 1) / cols * matrix;
  }
  mapping_.at(&view)->release(view.data.subspan(begin, end - begin));
}

}  // namespace mobius
