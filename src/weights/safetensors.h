// safetensors reader (format: https://github.com/huggingface/safetensors, README "Format"):
// 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}},
// then the data buffer. Files are memory-mapped; tensors are views into the mapping.
// Validation on open (each failure is a mobius::Error naming the file and the tensor):
// header length within the file, valid JSON object within util/input_files.h's limits (size,
// nesting, no duplicate key), known dtype, non-negative shape, byte size within int64,
// offsets ordered and inside the data buffer, byte size = elements * dtype size, tensors
// contiguous without overlap or gaps and covering the whole buffer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "weights/checkpoint.h"

namespace mobius {

// A tensor stored as plain elements (safetensors, or a float buffer).
struct TensorView : TensorInfo {
  std::span<const uint8_t> data;  // points into the mapped file
};

// A read-only memory mapping of a whole regular file (util/input_files.h open_regular_file: a FIFO
// or device is refused without blocking). Throws mobius::Error naming the file.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Drops the pages of `range` (a part of bytes(), widened to whole pages) from this process's
  // resident set (madvise MADV_DONTNEED); they stay in the page cache and are mapped again on the
  // next access. The mapping is read-only, so no data is lost.
  void release(std::span<const uint8_t> range) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

class SafetensorsFile {
 public:
  // Maps and validates `path`.
  explicit SafetensorsFile(const std::string& path);
  const std::string& path() const { return file_.path(); }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const MappedFile& mapping() const { return file_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  MappedFile file_;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// safetensors dtype string ("F32", "BF16", ...) -> DataType; UNDEFINED if unknown.
DataType safetensors_dtype(const std::string& s);

// All tensors of a checkpoint directory: model.safetensors, or the shards listed in
// model.safetensors.index.json, or (without an index) every *.safetensors file in the directory.
// produce() is convert_rows (weights/convert.h) from the mapped bytes, any row range, and
// produce_tile() convert_rows of the source rows a tile reads, as a matrix of its own; release() is
// MappedFile::release of the bytes a range read.
class SafetensorsCheckpoint final : public Checkpoint {
 public:
  // Throws mobius::Error when the directory has no safetensors files, the index is malformed or
  // names a missing file, a file resolves outside the directory or is not a regular file
  // (util/input_files.h checkpoint_file), or two files hold the same tensor name.
  explicit SafetensorsCheckpoint(const std::string& dir);
  const TensorView* find(const std::string& name) const override;
  std::vector<std::string> names() const override;
  void produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin,
               int64_t row_end, std::span<uint8_t> out) const override;
  bool streams(const TensorInfo&) const override { return true; }
  bool tiles(const TensorInfo& t) const override { return t.shape.size() == 2; }
  void produce_tile(const TensorInfo& t, DataType dst, int64_t row_begin, int64_t row_end, int64_t col_begin,
                    int64_t col_end, std::span<uint8_t> out) const override;
  void release(const TensorInfo& t, bool transpose, int64_t row_begin, int64_t row_end) const override;
  const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorView*> index_;
  std::map<const TensorView*, const MappedFile*> mapping_;  // the file each tensor lives in
};

}  // namespace mobius
