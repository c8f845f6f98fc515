#include "package/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "ir/serialize.h"
#include "util/error.h"
#include "util/progress.h"

namespace fs = std::filesystem;

namespace mobius {
namespace {

constexpr uint64_t kAlign = 64;
constexpr const char* kDataFile = "model.onnx.data";

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
  explicit DataWriter(const fs::path& path) : path_(path.string()) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd_ < 0) throw Error(path_ + ": cannot create: " + std::strerror(errno));
  }
  ~DataWriter() {
    if (fd_ >= 0) ::close(fd_);
  }
  void write_at(uint64_t offset, const uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
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
  void close() {
    if (::close(fd_) != 0) throw Error(path_ + ": close failed: " + std::strerror(errno));
    fd_ = -1;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

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

  // Layout: every weight initializer gets an aligned slot in the data file.
  std::map<std::string, ExternalLocation> layout;
  std::vector<const Initializer*> weights;
  uint64_t offset = 0;
  for (const Initializer& init : model.graph.initializers) {
    if (!init.weight) continue;
    offset = align_up(offset);
    layout[init.value->name] = {kDataFile, offset, init.nbytes()};
    weights.push_back(&init);
    offset += init.nbytes();
  }
  const uint64_t total = offset;

  DataWriter data(tmp.path / kDataFile);
  if (plan) {
    Progress bar("writing weights", total, options.progress);
    std::vector<uint8_t> buffer;
    for (const WeightBinding& b : plan->bindings()) {
      const ExternalLocation& loc = layout.at(b.init->value->name);
      buffer.resize(loc.length);
      with_context("while writing " + b.init->value->name + " from " + *b.source->file,
                   [&] { b.produce(buffer); });
      data.write_at(loc.offset, buffer.data(), buffer.size());
      bar.advance(loc.length);
    }
    MOBIUS_ASSERT(plan->bindings().size() == weights.size(), "plan does not cover every weight");
  }
  data.resize(total);
  data.close();

  onnx::ModelProto proto = to_model_proto(model, layout);
  {
    std::ofstream f(tmp.path / "model.onnx", std::ios::binary);
    if (!f || !proto.SerializeToOstream(&f))
      throw Error((tmp.path / "model.onnx").string() + ": cannot write");
  }

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
