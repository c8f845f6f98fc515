#include "package/writer.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "ir/serialize.h"
#include "package/copied_files.h"
#include "util/error.h"
#include "util/input_files.h"
#include "util/interrupt.h"
#include "util/progress.h"

namespace fs = std::filesystem;

namespace mobius {
namespace {

constexpr uint64_t kAlign = 64;
constexpr size_t kWriteBytes = size_t{256} << 10;  // per pwrite call (DataWriter::write_at)
constexpr uint64_t kWritebackBytes = uint64_t{64} << 20;  // settled between writeback starts (DataWriter::settled)

uint64_t align_up(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Removes the temporary directory unless released; registered for removal on Ctrl-C meanwhile.
struct TempDir {
  fs::path path;
  bool keep = false;
  ~TempDir() {
    remove_on_interrupt("");
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
};

// fsync(2) of `path` (a file or a directory), checked.
void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open to sync: " + std::strerror(errno));
  const bool ok = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok && err != EINVAL) throw Error(path.string() + ": sync failed: " + std::strerror(err));
}

// `p` with symbolic links resolved as far as it exists, absolute and normal.
fs::path resolved(const std::string& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p), ec);
  if (ec) r = fs::absolute(p).lexically_normal();
  if (r.filename().empty()) r = r.parent_path();
  return r;
}

// The ONNX producer mobius writes (ir/ir.h Model::producer_name): a ModelProto serializes
// ir_version (field 1) then producer_name (field 2), so a graph file mobius wrote starts with
// 0x08 <varint> 0x12 0x06 "mobius".
bool is_mobius_graph(const fs::path& file) {
  std::string head;
  try {
    head = read_file_head(file.string(), 32);
  } catch (const Error&) {
    return false;
  }
  if (head.empty() || static_cast<uint8_t>(head[0]) != 0x08) return false;
  size_t at = 1;
  while (at < head.size() && (static_cast<uint8_t>(head[at]) & 0x80)) ++at;  // the ir_version varint's last byte
  const std::string_view producer("\x12\x06mobius", 8);
  return head.size() >= at + 1 + producer.size() && std::string_view(head).substr(at + 1, producer.size()) == producer;
}

// `stem` is one of `stems` with one of the variant suffixes (package/layout.h kVariantSuffixes).
bool is_graph_stem(const std::string& stem, const std::vector<std::string>& stems) {
  for (const std::string& s : stems)
    for (const char* suffix : kVariantSuffixes)
      if (stem == s + suffix) return true;
  return false;
}

// A file a previous package holds in a folder whose graphs have `stems` (`flat`: <graph>.onnx.data
// beside them, else <graph>.onnx_data): such a graph file mobius wrote, the external data of one
// beside it, or a package file (is_package_file).
bool is_previous_package_file(const fs::path& file, const std::vector<std::string>& stems, bool flat) {
  const std::string name = file.filename().string();
  auto is_graph = [&](const std::string& graph) {
    std::error_code ec;
    return graph.ends_with(".onnx") && is_graph_stem(graph.substr(0, graph.size() - 5), stems) &&
           fs::is_regular_file(fs::symlink_status(file.parent_path() / graph, ec)) &&
           is_mobius_graph(file.parent_path() / graph);
  };
  if (name.ends_with(".onnx")) return is_graph(name);
  const std::string data = flat ? ".data" : "_data";
  if (name.ends_with(".onnx" + data)) return is_graph(name.substr(0, name.size() - data.size()));
  return is_package_file(name);
}

// Only previous-package files (is_previous_package_file), all regular (no link, no folder), in
// `dir`; counts the files in `files` and the graph files among them in `graphs`.
bool holds_only_package_files(const fs::path& dir, const std::vector<std::string>& stems, bool flat, int& files,
                              int& graphs) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_symlink() || !e.is_regular_file() || !is_previous_package_file(e.path(), stems, flat)) return false;
    ++files;
    graphs += e.path().extension() == ".onnx";
  }
  return !ec;
}

// The folders a previous pipeline package in `dir` holds (driver/pipeline.h): those its
// mobius_manifest.json names, the graph roles of its built components and its copied folders;
// none without a readable manifest.
std::set<std::string> manifest_folders(const fs::path& dir) {
  std::set<std::string> folders;
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(dir / "mobius_manifest.json", ec))) return folders;
  try {
    const nlohmann::json m = read_json_file((dir / "mobius_manifest.json").string(), kMaxJsonBytes);
    if (!m.is_object() || !m.contains("components") || !m["components"].is_object()) return folders;
    for (const auto& [key, c] : m["components"].items()) {
      if (!c.is_object()) continue;
      if (c.contains("copied")) folders.insert(key);
      if (c.contains("built") && c["built"].is_array())
        for (const auto& role : c["built"])
          if (role.is_string()) folders.insert(role.get<std::string>());
    }
  } catch (const Error&) {
  }
  return folders;
}

// A previous package: at the top its flat graphs (the roles of model_graph_paths, with a variant
// suffix) and package files; an onnx/ folder of hf graphs (their Hugging Face names); the folders
// of a pipeline's manifest (their graph "model"); nothing else, and a graph among them.
bool is_previous_package(const fs::path& dir) {
  std::vector<std::string> roles, hf_names;
  for (const GraphPath& g : model_graph_paths()) {
    roles.push_back(g.name);
    hf_names.push_back(fs::path(g.hf).filename().string());
  }
  const std::set<std::string> folders = manifest_folders(dir);
  int files = 0, graphs = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_symlink() || !e.is_directory()) continue;  // the files: below
    const std::string name = e.path().filename().string();
    int inside = 0;
    const bool known = name == kHfGraphDir ? holds_only_package_files(e.path(), hf_names, false, inside, graphs)
                       : folders.count(name) ? holds_only_package_files(e.path(), {"model"}, false, inside, graphs)
                                             : false;
    if (!known || inside == 0) return false;
    files += inside;
  }
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_symlink() && e.is_directory()) continue;
    if (e.is_symlink() || !e.is_regular_file() || !is_previous_package_file(e.path(), roles, true)) return false;
    ++files;
    graphs += e.path().extension() == ".onnx";
  }
  return !ec && graphs > 0;
}

class DataWriter {
 public:
  // Writes `path`; errors name `shown` (the file's path once the package is in place).
  DataWriter(const fs::path& path, const fs::path& shown) : path_(shown.string()) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd_ < 0) throw Error(path_ + ": cannot create: " + std::strerror(errno));
  }
  ~DataWriter() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Writes in pwrite calls of at most kWriteBytes. The page cache sizes the folios it allocates
  // for a write by the write's length, and on a virtual machine that returns free memory to its
  // host (virtio-balloon free page reporting, done in free blocks of 2 MiB and more) large folios
  // land on memory the host must fault in again: writing 4.94 GB in 8 MiB calls took 5.0-7.3 s
  // of system time on the benchmark machine, in 256 KiB calls 1.7-3.3 s (docs/benchmarks.md).
  void write_at(uint64_t offset, const uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::pwrite(fd_, p, std::min(n, kWriteBytes), static_cast<off_t>(offset));
      if (w < 0) {
        if (errno == EINTR) continue;
        throw Error(path_ + ": write failed: " + std::strerror(errno));
      }
      p += w;
      n -= static_cast<size_t>(w);
      offset += static_cast<uint64_t>(w);
    }
  }
  // Writes `parts` one after the other from `offset` (pwritev(2): a tile band's row, a few KiB a
  // part); a short write goes on from where it stopped (advancing `parts`).
  void write_at(uint64_t offset, std::span<iovec> parts) {
    while (!parts.empty()) {
      ssize_t w = ::pwritev(fd_, parts.data(), static_cast<int>(parts.size()), static_cast<off_t>(offset));
      if (w < 0) {
        if (errno == EINTR) continue;
        throw Error(path_ + ": write failed: " + std::strerror(errno));
      }
      offset += static_cast<uint64_t>(w);
      for (auto done = static_cast<size_t>(w); !parts.empty() && done > 0;) {
        const size_t n = std::min(done, parts.front().iov_len);
        parts.front().iov_base = static_cast<uint8_t*>(parts.front().iov_base) + n;
        parts.front().iov_len -= n;
        done -= n;
        if (parts.front().iov_len == 0) parts = parts.subspan(1);
      }
    }
  }
  // Everything below `offset` is written for good: once kWritebackBytes more are, starts their disk
  // writes without waiting for them (sync_file_range(2), SYNC_FILE_RANGE_WRITE, whole pages below
  // `offset` only, never a page still being filled): the disk then writes while the weights are
  // converted, and close()'s fsync waits only for the last of them (Qwen2.5-0.5B f16, 0.99 GB: that
  // fsync took 0.40 s after the streaming, docs/benchmarks.md "The weight path"). A hint: a file
  // system without it, or an error, leaves the work to fsync, which is checked.
  void settled(uint64_t offset) {
    offset &= ~uint64_t{4095};
    if (offset < started_ + kWritebackBytes) return;
    (void)::sync_file_range(fd_, static_cast<off_t>(started_), static_cast<off_t>(offset - started_),
                            SYNC_FILE_RANGE_WRITE);
    started_ = offset;
  }
  void resize(uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
      throw Error(path_ + ": cannot resize: " + std::strerror(errno));
  }
  // Allocates the file's blocks before it is written (fallocate(2), mode 0: the size becomes
  // `size`). Writing into allocated blocks skips the file system's per-page delayed allocation:
  // on ext4 this makes page-cache writes about 3 x faster (bench/, docs/benchmarks.md), and a
  // full disk fails here, before anything is converted. File systems without fallocate get a
  // plain resize.
  void allocate(uint64_t size) {
    if (size == 0) return;
    if (::fallocate(fd_, 0, 0, static_cast<off_t>(size)) == 0) return;
    if (errno == EOPNOTSUPP || errno == ENOSYS) return resize(size);
    throw Error(path_ + ": cannot allocate " + std::to_string(size) + " bytes: " + std::strerror(errno));
  }
  void close() {
    if (::fsync(fd_) != 0) throw Error(path_ + ": sync failed: " + std::strerror(errno));
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) throw Error(path_ + ": close failed: " + std::strerror(errno));
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t started_ = 0;  // the disk writes of the bytes below it are started (settled)
};

// One piece of the work: rows [row_begin, row_end) of a binding's outputs (WeightBinding::outputs),
// produced into one buffer and written as one segment per output.
struct Chunk {
  struct Segment {
    uint64_t offset;  // in the data file
    size_t bytes;
  };
  const WeightBinding* binding;
  int64_t row_begin, row_end;
  std::vector<Segment> segments;  // in the order produce() lays out the outputs
  size_t bytes;                   // of all segments
  bool last;                      // the last chunk of its binding
  // A tile (WeightBinding::produce_tile): output columns [col_begin, col_end) of the rows, a
  // segment per row; col_end == 0: whole rows.
  int64_t col_begin = 0, col_end = 0;
};

// A transposed weight's tiles: [rows, cols] of its output.
TileShape weight_tiles(const WeightBinding& b, size_t chunk_bytes) {
  const Initializer& init = *b.init;
  return tile_shape(b.rows(), init.value->shape->back().value, dtype_size(b.source->dtype),
                    dtype_size(init.value->dtype), chunk_bytes);
}

// Whether `b` is the tile after `a` in a band of rows: the same rows, the columns that follow.
bool next_tile(const Chunk& a, const Chunk& b) {
  return a.col_end != 0 && b.binding == a.binding && b.row_begin == a.row_begin && b.row_end == a.row_end &&
         b.col_begin == a.col_end;
}

// The source bytes from which a transposed binding written by ranges of whole rows counts as large
// for stream_chunks (one such source resident at a time).
constexpr uint64_t kLargeColumnSource = uint64_t{64} << 20;

// Splits every binding into chunks of whole rows of at most `chunk_bytes` (at least one row; a
// tensor whose checkpoint cannot stream it is one chunk), or, a transposed weight of more than
// `tiled_above` source bytes that tiles, into tiles (tile_shape), in data-file order.
std::vector<Chunk> plan_chunks(const WeightPlan& plan, const std::map<std::string, ExternalLocation>& layout,
                               size_t chunk_bytes, uint64_t tiled_above) {
  std::vector<Chunk> chunks;
  for (const WeightBinding& b : plan.bindings()) {
    const int64_t rows = b.rows();
    if (rows == 0) continue;
    std::vector<std::pair<uint64_t, size_t>> outputs;  // each output's offset and bytes per row
    size_t row_bytes = 0;                              // of all outputs
    for (const Initializer* o : b.outputs()) {
      const ExternalLocation& loc = layout.at(o->value->name);
      outputs.emplace_back(loc.offset, loc.length / static_cast<size_t>(rows));
      row_bytes += outputs.back().second;
    }
    if (row_bytes == 0) continue;
    if (b.streams() && b.tiles(tiled_above)) {
      // tiles by bands of output rows, each band's tiles along the columns: a tile reads its
      // columns' source rows only (Checkpoint::produce_tile)
      const uint64_t offset = outputs.front().first, es = dtype_size(b.init->value->dtype);
      const int64_t cols = static_cast<int64_t>(row_bytes / es);
      const TileShape tile = weight_tiles(b, chunk_bytes);
      for (int64_t r = 0; r < rows; r += tile.rows)
        for (int64_t c = 0; c < cols; c += tile.cols) {
          const int64_t r1 = std::min(rows, r + tile.rows), c1 = std::min(cols, c + tile.cols);
          Chunk t{&b, r, r1, {}, static_cast<size_t>((r1 - r) * (c1 - c)) * es, r1 == rows && c1 == cols, c, c1};
          for (int64_t i = r; i < r1; ++i)
            t.segments.push_back({offset + (static_cast<uint64_t>(i) * cols + c) * es, static_cast<size_t>(c1 - c) * es});
          chunks.push_back(std::move(t));
        }
      continue;
    }
    // a quantized row needs its float source rows too: they bound the chunk
    const size_t row_memory = std::max(row_bytes, static_cast<size_t>(b.scratch_row_bytes()));
    const int64_t step = b.streams() ? std::max<int64_t>(1, static_cast<int64_t>(chunk_bytes / row_memory)) : rows;
    for (int64_t r = 0; r < rows; r += step) {
      const int64_t end = std::min(rows, r + step);
      Chunk c{&b, r, end, {}, static_cast<size_t>(end - r) * row_bytes, end == rows};
      for (auto [offset, out_row] : outputs)
        c.segments.push_back({offset + static_cast<uint64_t>(r) * out_row, static_cast<size_t>(end - r) * out_row});
      chunks.push_back(std::move(c));
    }
  }
  return chunks;
}

// Converts the chunks on every core and writes them in order: workers claim chunks in order and
// convert each into one of `slots` reusable buffers; this thread writes each buffer as soon as
// its chunk is next, then frees the slot. A worker waits while all slots are taken, so at most
// `slots` chunks are in memory. The first error stops everything and is rethrown here.
void stream_chunks(const std::vector<Chunk>& chunks, DataWriter& data, Progress& bar) {
  const size_t workers = std::max(1u, std::thread::hardware_concurrency());
  const size_t slots = workers + 2;
  struct Slot {
    std::vector<uint8_t> buffer;
    size_t chunk = SIZE_MAX;  // the chunk whose bytes `buffer` holds, once converted
  };
  std::vector<Slot> slot(slots);
  std::mutex mutex;
  std::condition_variable changed;
  size_t next = 0, written = 0;
  bool stop = false;
  std::exception_ptr error;
  std::map<const WeightBinding*, size_t> columns_left;  // the ranges of a transposed binding not converted
  for (const Chunk& c : chunks)
    if (c.col_end == 0 && c.binding->reads_columns()) ++columns_left[c.binding];
  // A transposed binding of kLargeColumnSource or more source bytes keeps all of it resident from
  // its first range to its last: the next such binding starts once it is released, so that two are
  // never resident together (Llama-3.1-8B's 117 MB MLP matrices, back to back).
  const WeightBinding* large_open = nullptr;
  auto large = [](const Chunk& c) {
    return c.col_end == 0 && c.binding->reads_columns() && c.binding->source_bytes() >= kLargeColumnSource;
  };
  auto waits = [&](size_t i) { return large(chunks[i]) && large_open && large_open != chunks[i].binding; };

  auto work = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] {
          return stop || next == chunks.size() || (next < written + slots && !waits(next));
        });
        if (stop || next == chunks.size()) return;
        i = next++;
        if (large(chunks[i])) large_open = chunks[i].binding;
      }
      const Chunk& c = chunks[i];
      Slot& s = slot[i % slots];  // free: chunk i - slots has been written
      try {
        s.buffer.resize(std::max(s.buffer.size(), c.bytes));
        with_context("while writing " + c.binding->init->value->name + " from " + *c.binding->source->file,
                     [&] {
                       if (c.col_end == 0) return c.binding->produce(c.row_begin, c.row_end, {s.buffer.data(), c.bytes});
                       c.binding->produce_tile(c.row_begin, c.row_end, c.col_begin, c.col_end, {s.buffer.data(), c.bytes});
                       c.binding->release_columns(c.col_begin, c.col_end);  // converted: its source rows are done
                     });
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        stop = true;
        changed.notify_all();
        return;
      }
      std::lock_guard lock(mutex);
      s.chunk = i;
      // a transposed range reads a column band of every source row: the source goes once the
      // binding's last range is converted (not written: the next binding's source is coming in)
      if (c.col_end == 0 && c.binding->reads_columns() && --columns_left[c.binding] == 0) {
        c.binding->release(0, c.binding->rows());
        if (large_open == c.binding) large_open = nullptr;
      }
      changed.notify_all();
    }
  };
  std::vector<std::thread> threads;
  auto finish = [&] {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    changed.notify_all();
    for (std::thread& t : threads) t.join();
    threads.clear();
  };
  for (size_t w = 0; w < workers; ++w) threads.emplace_back(work);
  try {
    for (size_t i = 0; i < chunks.size();) {
      Slot& s = slot[i % slots];
      size_t n = 1;  // chunks written at once: a tile and the next tiles of its band that are converted
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || s.chunk == i; });
        if (stop) break;
        while (i + n < chunks.size() && n < slots && next_tile(chunks[i + n - 1], chunks[i + n]) &&
               slot[(i + n) % slots].chunk == i + n)
          ++n;
      }
      const Chunk& c = chunks[i];
      if (n == 1) {
        size_t at = 0;
        for (const Chunk::Segment& seg : c.segments) {
          data.write_at(seg.offset, s.buffer.data() + at, seg.bytes);
          at += seg.bytes;
        }
      } else {  // each row's segments of the n tiles lie end to end: one write a row
        std::vector<iovec> row(n);
        for (size_t r = 0; r < c.segments.size(); ++r) {
          for (size_t k = 0; k < n; ++k) {
            const size_t width = chunks[i + k].segments[r].bytes;
            row[k] = {slot[(i + k) % slots].buffer.data() + r * width, width};
          }
          data.write_at(c.segments[r].offset, row);
        }
      }
      for (size_t k = i; k < i + n; ++k) {
        const Chunk& w = chunks[k];
        // nothing below the chunk's lowest offset is written again: the chunks are in file order (a
        // binding's further outputs, a tile band's rows, lie above its first)
        data.settled(w.segments.front().offset);
        bar.advance(w.bytes);
        // Written: drop the source pages from the resident set (a tile's source rows and a
        // transposed binding's source were released once converted).
        if (w.col_end == 0 && !w.binding->reads_columns()) w.binding->release(w.row_begin, w.row_end);
      }
      i += n;
      std::lock_guard lock(mutex);
      written += n;
      changed.notify_all();
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  if (error) std::rethrow_exception(error);
}

// Every weight initializer of a graph in its aligned slot of its external-data file.
struct GraphLayout {
  std::map<std::string, ExternalLocation> locations;
  std::vector<const Initializer*> weights;
  std::vector<const Initializer*> constants;  // the external ones (is_external)
  uint64_t total = 0;
};

// Whether `init` is stored in the external-data file: a weight, or a constant of
// kExternalConstantBytes or more.
bool is_external(const Initializer& init) {
  return init.weight || (init.data.size() >= kExternalConstantBytes && !init.data_shape);
}

GraphLayout layout_of(const PackageGraph& g, PackageLayout layout) {
  GraphLayout l;
  const std::string data_file = graph_data_file(g.path, layout);
  for (const Initializer& init : g.model->graph.initializers) {
    if (!is_external(init)) continue;
    l.total = align_up(l.total);
    l.locations[init.value->name] = {data_file, l.total, init.nbytes()};
    (init.weight ? l.weights : l.constants).push_back(&init);
    l.total += init.nbytes();
  }
  return l;
}

// The bytes of g's graph file; errors name it under `shown` (the package directory once in place).
std::string serialized_model(const PackageGraph& g, const GraphLayout& l, const fs::path& shown,
                             PackageLayout layout) {
  std::string serialized;
  if (!to_model_proto(*g.model, l.locations).SerializeToString(&serialized))
    throw Error((shown / graph_file(g.path, layout)).string() + ": cannot serialize (over protobuf's 2 GiB limit?)");
  return serialized;
}

// Writes `g` into `dir` as its graph file (`serialized`, emptied once written: a graph's constants,
// such as an --ep cpu cos/sin cache of 131072 positions, 64 MiB in float32, are not held while the
// weights stream) + external-data file, where options.layout puts them (creating onnx/); errors
// name the paths under `shown` (the package directory once it is in place).
void write_graph(const fs::path& dir, const fs::path& shown, const PackageGraph& g, const GraphLayout& layout,
                 std::string& serialized, const WriteOptions& options) {
  const fs::path graph = graph_file(g.path, options.layout);
  const fs::path data_file = graph_data_path(g.path, options.layout);
  if (!graph.parent_path().empty()) {
    std::error_code ec;
    fs::create_directories(dir / graph.parent_path(), ec);
    if (ec) throw Error((shown / graph.parent_path()).string() + ": cannot create: " + ec.message());
  }
  write_file_synced((dir / graph).string(), serialized, (shown / graph).string());
  std::string().swap(serialized);
  DataWriter data(dir / data_file, shown / data_file);
  if (g.plan) data.allocate(layout.total);
  else data.resize(layout.total);  // --no-weights: a sparse file of zeros, but for the constants
  uint64_t weight_bytes = layout.total;
  for (const Initializer* c : layout.constants) {
    data.write_at(layout.locations.at(c->value->name).offset, c->data.data(), c->data.size());
    weight_bytes -= c->data.size();
  }
  if (g.plan) {
    MOBIUS_ASSERT(g.plan->num_initializers() == layout.weights.size(), "plan does not cover every weight");
    Progress bar(g.path.name == "model" ? "writing weights" : "writing " + g.path.name + " weights", weight_bytes,
                 options.progress);
    stream_chunks(plan_chunks(*g.plan, layout.locations, options.chunk_bytes, options.tiled_above), data, bar);
  }
  data.close();
  if (!graph.parent_path().empty()) sync_path(dir / graph.parent_path());
}

}  // namespace

uint64_t graph_disk_bytes(const GraphPath& path, const Model& model, bool weights, PackageLayout layout) {
  const PackageGraph g{path, &model, nullptr};
  const GraphLayout l = layout_of(g, layout);
  return serialized_model(g, l, "", layout).size() + (weights ? l.total : 0);
}

void check_free_space(const std::string& output_dir, uint64_t need) {
  fs::path at = fs::absolute(output_dir).lexically_normal();
  std::error_code ec;
  while (!at.empty() && !fs::exists(at, ec) && at != at.parent_path()) at = at.parent_path();  // the file system it will be on
  struct statvfs st{};
  if (::statvfs(at.c_str(), &st) != 0) return;  // no figure to compare: the writes say ENOSPC if it comes to that
  const uint64_t free = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  if (free < need)
    throw Error(output_dir + ": the package needs about " + mib(need) + " and the file system of " + at.string() +
                " has " + mib(free) + " free: free some space or choose an output directory on another file system "
                "(nothing was written)");
}

TileShape tile_shape(int64_t rows, int64_t cols, size_t source_size, size_t dst_size, size_t chunk_bytes) {
  const int64_t page_cols = std::max<int64_t>(1, 4096 / static_cast<int64_t>(source_size));
  const int64_t tile = static_cast<int64_t>(2 * chunk_bytes / dst_size);  // elements of a tile's output
  const int64_t source_rows = static_cast<int64_t>(4 * chunk_bytes / (static_cast<size_t>(rows) * source_size));
  const int64_t tc = std::clamp<int64_t>(std::min(source_rows, tile / std::min(rows, page_cols)), 1, cols);
  return {std::clamp<int64_t>(tile / tc, std::min(rows, page_cols), rows), tc};
}

uint64_t external_data_bytes(const Graph& graph) {
  uint64_t offset = 0;
  for (const Initializer& init : graph.initializers)
    if (is_external(init)) offset = align_up(offset) + init.nbytes();
  return offset;
}

bool is_package_file(const std::string& name) {
  if (name.ends_with(".onnx_adapter")) return true;  // --lora-runtime
  if (std::find(std::begin(kRuntimeFiles), std::end(kRuntimeFiles), name) != std::end(kRuntimeFiles)) return true;
  return is_copied_file(name);
}

void check_output_dir(const std::string& output_dir, bool force, const std::vector<std::string>& inputs) {
  const fs::path out = resolved(output_dir);
  for (const std::string& input : inputs) {
    const fs::path in = resolved(input);
    if (is_within(in, out))
      throw Error(output_dir + ": the output directory " + (in == out ? "is" : "contains") + " the input " + input +
                  "; choose another output directory");
    if (is_within(out, in))
      throw Error(output_dir + ": the output directory is inside the input " + input + "; choose another one");
  }
  std::error_code ec;
  const fs::file_status st = fs::status(out, ec);
  if (!fs::exists(st)) return;
  if (!fs::is_directory(st))
    throw Error(output_dir + ": exists and is not a directory; choose another output directory");
  if (fs::is_empty(out, ec)) return;
  if (!force)
    throw Error(output_dir + ": output directory exists and is not empty (use --force to replace a previous mobius "
                "package)");
  if (!is_previous_package(out))
    throw Error(output_dir + ": --force replaces only a previous mobius package (the .onnx graphs mobius wrote "
                "and their data, at the top or in its folders, genai_config.json, processor and tokenizer files) or "
                "an empty directory, and this directory holds other files");
}

void write_file_synced(const std::string& path, std::string_view bytes, const std::string& shown) {
  const std::string& name = shown.empty() ? path : shown;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(name + ": cannot create: " + std::strerror(errno));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    throw Error(name + ": " + what + ": " + std::strerror(err));
  };
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + at, std::min(bytes.size() - at, kWriteBytes));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      fail("write failed");
    }
    at += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail("sync failed");
  if (::close(fd) != 0) throw Error(name + ": close failed: " + std::strerror(errno));
}

void write_package(const std::string& output_dir, const Model& model, const WeightPlan* plan,
                   const WriteOptions& options) {
  write_package(output_dir, {{GraphPath{"model", hf_graph::model}, &model, plan}}, options);
}

namespace {

// Whether write_package adds the graphs into a previous package in `out` (WriteOptions::add),
// after checking that it may: `out` holds a previous mobius package and each graph file is new
// there or `force` replaces it. Throws mobius::Error naming the directory or the file otherwise.
bool adds_into_package(const fs::path& out, const std::string& output_dir, const std::vector<PackageGraph>& graphs,
                       const WriteOptions& options) {
  std::error_code ec;
  if (!options.add || !fs::is_directory(out, ec) || fs::is_empty(out, ec)) return false;
  check_output_dir(output_dir, true, options.inputs);  // the inputs, and a previous package only
  for (const PackageGraph& g : graphs)
    for (const std::string& f : {graph_file(g.path, options.layout), graph_data_path(g.path, options.layout)})
      if (fs::exists(fs::symlink_status(out / f, ec)) && !options.force)
        throw Error((out / f).string() + ": the package already holds this variant (use --force to replace it)");
  return true;
}

// Moves the graph and data files of `graphs` from the written temporary directory `tmp` into the
// previous package `out` (adds_into_package allowed it): each data file before its graph file, so
// a graph in place always has its data.
void add_graph_files(const fs::path& tmp, const fs::path& out, const std::string& output_dir,
                     const std::vector<PackageGraph>& graphs, const WriteOptions& options) {
  commit_uninterrupted([&] {
    adds_into_package(out, output_dir, graphs, options);  // unchanged while we wrote?
    for (const PackageGraph& g : graphs)
      for (const std::string& f : {graph_data_path(g.path, options.layout), graph_file(g.path, options.layout)}) {
        std::error_code e;
        fs::create_directories((out / f).parent_path(), e);
        fs::rename(tmp / f, out / f, e);
        if (e) throw Error((out / f).string() + ": cannot rename " + (tmp / f).string() + " into place: " + e.message());
      }
  });
  for (const PackageGraph& g : graphs) sync_path((out / graph_file(g.path, options.layout)).parent_path());
}

}  // namespace

void write_package(const std::string& output_dir, const std::vector<PackageGraph>& graphs,
                   const WriteOptions& options) {
  fs::path out = fs::absolute(output_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  const bool adding = adds_into_package(out, output_dir, graphs, options);
  if (!adding) check_output_dir(output_dir, options.force, options.inputs);
  std::vector<GraphLayout> layouts;
  std::vector<std::string> serialized;
  uint64_t need = options.extra_bytes;
  for (const PackageGraph& g : graphs) {
    layouts.push_back(layout_of(g, options.layout));
    serialized.push_back(serialized_model(g, layouts.back(), out, options.layout));
    need += serialized.back().size() + (g.plan ? layouts.back().total : 0);  // --no-weights: a sparse data file
  }
  if (options.check_graph)
    for (size_t i = 0; i < graphs.size(); ++i) options.check_graph(graphs[i].path.name, serialized[i]);
  check_free_space(out.string(), need);  // a previous package in OUTPUT_DIR is removed only after the new one is in place
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);
  // A name no one else uses: mkdtemp(3) creates it (mode 0700, widened below) or fails.
  const std::string dir = make_temp_dir_removed_on_interrupt(
      (out.parent_path() / std::string(".").append(out.filename().string()).append(".mobius-tmp-XXXXXX")).string());
  if (dir.empty())
    throw Error(out.parent_path().string() + ": cannot create a temporary directory: " + std::strerror(errno));
  TempDir tmp{dir};
  fs::permissions(tmp.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec, ec);

  for (size_t i = 0; i < graphs.size(); ++i) write_graph(tmp.path, out, graphs[i], layouts[i], serialized[i], options);
  if (adding) return add_graph_files(tmp.path, out, output_dir, graphs, options);

  if (options.extra_files) options.extra_files(tmp.path.string());
  if (options.check) options.check(tmp.path.string());
  sync_path(tmp.path);

  // Into place: a previous package (check_output_dir allowed it) moves aside first and is removed
  // only once the new one is in place.
  auto rename = [](const fs::path& from, const fs::path& to) {
    std::error_code e;
    fs::rename(from, to, e);
    if (e) throw Error(to.string() + ": cannot rename " + from.string() + " into place: " + e.message());
  };
  commit_uninterrupted([&] {  // a Ctrl-C now either removes the whole new package or waits
    if (fs::exists(out)) {
      check_output_dir(output_dir, options.force, options.inputs);  // unchanged while we wrote?
      const fs::path old = tmp.path.string() + ".old";
      rename(out, old);
      rename(tmp.path, out);
      fs::remove_all(old, ec);
    } else {
      rename(tmp.path, out);
    }
    tmp.keep = true;
  });
  sync_path(out.parent_path());
}

}  // namespace mobius
