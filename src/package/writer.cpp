#include "package/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "ir/serialize.h"
#include "util/error.h"
#include "util/progress.h"

namespace fs = std::filesystem;

namespace mobius {
namespace {

constexpr uint64_t kAlign = 64;
constexpr size_t kWriteBytes = size_t{256} << 10;  // per pwrite call (DataWriter::write_at)

uint64_t align_up(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Removes the temporary directory unless released.
struct TempDir {
  fs::path path;
  bool keep = false;
  ~TempDir() {
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
};

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
    if (::close(fd_) != 0) throw Error(path_ + ": close failed: " + std::strerror(errno));
    fd_ = -1;
  }

 private:
  std::string path_;
  int fd_ = -1;
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
};

// Splits every binding into chunks of whole rows of at most `chunk_bytes` (at least one row; a
// tensor whose checkpoint cannot stream it is one chunk), in data-file order.
std::vector<Chunk> plan_chunks(const WeightPlan& plan,
                               const std::map<std::string, ExternalLocation>& layout, size_t chunk_bytes) {
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

  auto work = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || next == chunks.size() || next < written + slots; });
        if (stop || next == chunks.size()) return;
        i = next++;
      }
      const Chunk& c = chunks[i];
      Slot& s = slot[i % slots];  // free: chunk i - slots has been written
      try {
        s.buffer.resize(std::max(s.buffer.size(), c.bytes));
        with_context("while writing " + c.binding->init->value->name + " from " + *c.binding->source->file,
                     [&] { c.binding->produce(c.row_begin, c.row_end, {s.buffer.data(), c.bytes}); });
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        stop = true;
        changed.notify_all();
        return;
      }
      std::lock_guard lock(mutex);
      s.chunk = i;
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
    for (size_t i = 0; i < chunks.size(); ++i) {
      Slot& s = slot[i % slots];
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || s.chunk == i; });
        if (stop) break;
      }
      const Chunk& c = chunks[i];
      size_t at = 0;
      for (const Chunk::Segment& seg : c.segments) {
        data.write_at(seg.offset, s.buffer.data() + at, seg.bytes);
        at += seg.bytes;
      }
      bar.advance(c.bytes);
      // Written: drop the source pages from the resident set. A transposed tensor reads its whole
      // source matrices for every chunk, so it is released after its last chunk.
      if (!c.binding->init->weight->transpose)
        c.binding->release(c.row_begin, c.row_end);
      else if (c.last)
        c.binding->release(0, c.binding->rows());
      std::lock_guard lock(mutex);
      ++written;
      changed.notify_all();
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  if (error) std::rethrow_exception(error);
}

// Writes `g` into `dir` as g.name.onnx + g.name.onnx.data; errors name the paths under `shown`
// (the package directory once it is in place).
void write_graph(const fs::path& dir, const fs::path& shown, const PackageGraph& g, const WriteOptions& options) {
  const std::string data_file = g.name + ".onnx.data";
  // Layout: every weight initializer gets an aligned slot in the data file.
  std::map<std::string, ExternalLocation> layout;
  std::vector<const Initializer*> weights;
  uint64_t offset = 0;
  for (const Initializer& init : g.model->graph.initializers) {
    if (!init.weight) continue;
    offset = align_up(offset);
    layout[init.value->name] = {data_file, offset, init.nbytes()};
    weights.push_back(&init);
    offset += init.nbytes();
  }
  const uint64_t total = offset;

  DataWriter data(dir / data_file, shown / data_file);
  if (g.plan) {
    MOBIUS_ASSERT(g.plan->num_initializers() == weights.size(), "plan does not cover every weight");
    data.allocate(total);
    Progress bar(g.name == "model" ? "writing weights" : "writing " + g.name + " weights", total, options.progress);
    stream_chunks(plan_chunks(*g.plan, layout, options.chunk_bytes), data, bar);
  } else {
    data.resize(total);  // --no-weights: a sparse file of zeros
  }
  data.close();

  onnx::ModelProto proto = to_model_proto(*g.model, layout);
  const fs::path onnx_file = dir / (g.name + ".onnx");
  std::ofstream f(onnx_file, std::ios::binary);
  if (!f || !proto.SerializeToOstream(&f)) throw Error((shown / (g.name + ".onnx")).string() + ": cannot write");
  f.close();
  if (!f) throw Error((shown / (g.name + ".onnx")).string() + ": cannot write");
}

}  // namespace

void check_output_dir(const std::string& output_dir, bool force) {
  std::error_code ec;
  if (fs::exists(output_dir, ec) && !force) {
    if (!fs::is_directory(output_dir))
      throw Error(output_dir + ": exists and is not a directory (use --force to replace it)");
    if (!fs::is_empty(output_dir))
      throw Error(output_dir + ": output directory exists and is not empty (use --force to replace it)");
  }
}

void write_package(const std::string& output_dir, const Model& model, const WeightPlan* plan,
                   const WriteOptions& options) {
  write_package(output_dir, {{"model", &model, plan}}, options);
}

void write_package(const std::string& output_dir, const std::vector<PackageGraph>& graphs,
                   const WriteOptions& options) {
  check_output_dir(output_dir, options.force);
  fs::path out = fs::absolute(output_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);
  TempDir tmp{out.parent_path() / ("." + out.filename().string() + ".mobius-tmp-" +
                                   std::to_string(::getpid()))};
  fs::remove_all(tmp.path, ec);
  if (!fs::create_directory(tmp.path, ec))
    throw Error(tmp.path.string() + ": cannot create directory: " + ec.message());

  for (const PackageGraph& g : graphs) write_graph(tmp.path, out, g, options);

  if (options.extra_files) options.extra_files(tmp.path.string());
  if (options.check) options.check(tmp.path.string());

  if (fs::exists(out)) {
    fs::path old = out.parent_path() / ("." + out.filename().string() + ".mobius-old-" +
                                        std::to_string(::getpid()));
    fs::rename(out, old);
    fs::rename(tmp.path, out);
    fs::remove_all(old, ec);
  } else {
    fs::rename(tmp.path, out);
  }
  tmp.keep = true;
}

}  // namespace mobius
