#include "weights/gguf.h"

#include <algorithm>
#include <utility>
#include <cstring>

#include "util/error.h"
#include "util/input_files.h"

namespace mobius {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian uint32
constexpr int kMaxArrayDepth = 8;
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;              // empty key, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, n_dims, ne[0], type, offset
constexpr uint64_t kMaxKeyBytes = 65535;                 // spec: keys at most 2^16 - 1 bytes
constexpr uint64_t kMaxTensorNameBytes = 64;             // spec: names at most 64 bytes

// Encoded size of a scalar value type; 0 for STRING and ARRAY.
size_t scalar_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::UINT8: case GgufValueType::INT8: case GgufValueType::BOOL: return 1;
    case GgufValueType::UINT16: case GgufValueType::INT16: return 2;
    case GgufValueType::UINT32: case GgufValueType::INT32: case GgufValueType::FLOAT32: return 4;
    case GgufValueType::UINT64: case GgufValueType::INT64: case GgufValueType::FLOAT64: return 8;
    case GgufValueType::STRING: case GgufValueType::ARRAY: return 0;
  }
  return 0;
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Bounds-checked sequential reads over the mapping; every failure names the file.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const std::string& path) : b_(bytes), path_(path) {}
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return b_.size() - pos_; }
  [[noreturn]] void fail(const std::string& msg) const { throw Error(path_ + ": " + msg); }

  void need(uint64_t n, const std::string& what) const {
    if (n > left())
      fail("truncated: " + what + " needs " + std::to_string(n) + " bytes at offset " +
           std::to_string(pos_) + ", the file has " + std::to_string(b_.size()));
  }
  template <typename T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    T v = load<T>(b_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  std::string_view read_string(const std::string& what) {
    uint64_t n = read<uint64_t>(what);
    if (n > left())
      fail("truncated: " + what + ": string length " + std::to_string(n) + " at offset " + std::to_string(pos_ - 8) +
           " runs past the end of the file (" + std::to_string(left()) + " bytes left)");
    std::string_view s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  GgufValueType read_value_type(const std::string& what) {
    uint32_t t = read<uint32_t>(what);
    if (t > static_cast<uint32_t>(GgufValueType::FLOAT64))
      fail(what + ": unknown value type " + std::to_string(t));
    return static_cast<GgufValueType>(t);
  }
  // Consumes one value of type `t`, checking every length against the bytes left; returns the
  // span of its encoding.
  std::span<const uint8_t> skip_value(GgufValueType t, const std::string& what, int depth = 0) {
    const uint64_t start = pos_;
    if (size_t n = scalar_size(t)) {
      need(n, what);
      pos_ += n;
    } else if (t == GgufValueType::STRING) {
      read_string(what);
    } else {  // ARRAY
      if (depth >= kMaxArrayDepth) fail(what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
      GgufValueType et = read_value_type(what + " (array element type)");
      uint64_t count = read<uint64_t>(what + " (array length)");
      size_t esize = scalar_size(et);
      uint64_t min_elem = esize ? esize : (et == GgufValueType::STRING ? 8 : 12);
      if (count > left() / min_elem)
        fail("truncated: " + what + ": array of " + std::to_string(count) + " " + gguf_value_type_name(et) +
             " values at offset " + std::to_string(pos_) + " runs past the end of the file (" +
             std::to_string(left()) + " bytes left)");
      if (esize)
        pos_ += count * esize;
      else
        for (uint64_t i = 0; i < count; ++i) skip_value(et, what, depth + 1);
    }
    return b_.subspan(start, pos_ - start);
  }
  void seek(uint64_t p) { pos_ = p; }

 private:
  std::span<const uint8_t> b_;
  const std::string& path_;
  uint64_t pos_ = 0;
};

std::string in_quotes(std::string_view s) {  // one line: \n, \0 ... escaped
  std::string r(1, '\'');
  r += escaped(s);
  r += '\'';
  return r;
}

}  // namespace

const GgmlTypeTraits* ggml_type_traits(uint32_t type) {
  static const std::map<uint32_t, GgmlTypeTraits> table = {
      {0, {"F32", 1, 4}},           {1, {"F16", 1, 2}},           {2, {"Q4_0", 32, 18}},
      {3, {"Q4_1", 32, 20}},        {6, {"Q5_0", 32, 22}},        {7, {"Q5_1", 32, 24}},
      {8, {"Q8_0", 32, 34}},        {9, {"Q8_1", 32, 40}},        {10, {"Q2_K", 256, 84}},
      {11, {"Q3_K", 256, 110}},     {12, {"Q4_K", 256, 144}},     {13, {"Q5_K", 256, 176}},
      {14, {"Q6_K", 256, 210}},     {15, {"Q8_K", 256, 292}},     {16, {"IQ2_XXS", 256, 66}},
      {17, {"IQ2_XS", 256, 74}},    {18, {"IQ3_XXS", 256, 98}},   {19, {"IQ1_S", 256, 50}},
      {20, {"IQ4_NL", 32, 18}},     {21, {"IQ3_S", 256, 110}},    {22, {"IQ2_S", 256, 82}},
      {23, {"IQ4_XS", 256, 136}},   {24, {"I8", 1, 1}},           {25, {"I16", 1, 2}},
      {26, {"I32", 1, 4}},          {27, {"I64", 1, 8}},          {28, {"F64", 1, 8}},
      {29, {"IQ1_M", 256, 56}},     {30, {"BF16", 1, 2}},         {34, {"TQ1_0", 256, 54}},
      {35, {"TQ2_0", 256, 66}},     {39, {"MXFP4", 32, 17}},      {40, {"NVFP4", 64, 36}},
      {41, {"Q1_0", 128, 18}},
  };
  auto it = table.find(type);
  return it == table.end() ? nullptr : &it->second;
}

std::string gguf_value_type_name(GgufValueType t) {
  static const char* names[] = {"uint8", "int8",  "uint16", "int16", "uint32", "int32", "float32",
                                "bool",  "string", "array", "uint64", "int64", "float64"};
  auto i = static_cast<size_t>(t);
  return i < std::size(names) ? names[i] : "type " + std::to_string(i);
}

// --- GgufValue ------------------------------------------------------------------------------

bool GgufValue::is_integer() const {
  return scalar_size(type_) && type_ != GgufValueType::BOOL && !is_float();
}
bool GgufValue::is_float() const {
  return type_ == GgufValueType::FLOAT32 || type_ == GgufValueType::FLOAT64;
}

int64_t GgufValue::as_int() const {
  const uint8_t* p = bytes_.data();
  switch (type_) {
    case GgufValueType::UINT8: return load<uint8_t>(p);
    case GgufValueType::INT8: return load<int8_t>(p);
    case GgufValueType::UINT16: return load<uint16_t>(p);
    case GgufValueType::INT16: return load<int16_t>(p);
    case GgufValueType::UINT32: return load<uint32_t>(p);
    case GgufValueType::INT32: return load<int32_t>(p);
    case GgufValueType::INT64: return load<int64_t>(p);
    case GgufValueType::UINT64: {
      uint64_t v = load<uint64_t>(p);
      MOBIUS_ASSERT(v <= static_cast<uint64_t>(INT64_MAX), "GgufValue::as_int: uint64 out of range");
      return static_cast<int64_t>(v);
    }
    default: MOBIUS_ASSERT(false, "GgufValue::as_int on a " + gguf_value_type_name(type_));
  }
}

double GgufValue::as_float() const {
  if (type_ == GgufValueType::FLOAT32) return load<float>(bytes_.data());
  MOBIUS_ASSERT(type_ == GgufValueType::FLOAT64, "GgufValue::as_float on a " + gguf_value_type_name(type_));
  return load<double>(bytes_.data());
}

bool GgufValue::as_bool() const {
  MOBIUS_ASSERT(type_ == GgufValueType::BOOL, "GgufValue::as_bool on a " + gguf_value_type_name(type_));
  return bytes_[0] != 0;
}

std::string_view GgufValue::as_string() const {
  MOBIUS_ASSERT(type_ == GgufValueType::STRING, "GgufValue::as_string on a " + gguf_value_type_name(type_));
  return {reinterpret_cast<const char*>(bytes_.data() + 8), bytes_.size() - 8};
}

GgufValueType GgufValue::element_type() const {
  MOBIUS_ASSERT(type_ == GgufValueType::ARRAY, "GgufValue::element_type on a " + gguf_value_type_name(type_));
  return static_cast<GgufValueType>(load<uint32_t>(bytes_.data()));
}

uint64_t GgufValue::size() const {
  MOBIUS_ASSERT(type_ == GgufValueType::ARRAY, "GgufValue::size on a " + gguf_value_type_name(type_));
  return load<uint64_t>(bytes_.data() + 4);
}

std::vector<GgufValue> GgufValue::elements() const {
  // The encoding was validated on open: re-walking it cannot fail.
  static const std::string unused_path;
  Reader r(bytes_.subspan(12), unused_path);
  const GgufValueType et = element_type();
  std::vector<GgufValue> out;
  out.reserve(size());
  for (uint64_t i = 0; i < size(); ++i) out.emplace_back(et, r.skip_value(et, "array element"));
  return out;
}

nlohmann::json GgufValue::to_json() const {
  switch (type_) {
    case GgufValueType::BOOL: return as_bool();
    case GgufValueType::FLOAT32:
    case GgufValueType::FLOAT64: return as_float();
    case GgufValueType::UINT64: return load<uint64_t>(bytes_.data());
    case GgufValueType::STRING: return std::string(as_string());
    case GgufValueType::ARRAY: {
      nlohmann::json a = nlohmann::json::array();
      for (const GgufValue& e : elements()) a.push_back(e.to_json());
      return a;
    }
    default: return as_int();
  }
}

// --- GgufTensor -----------------------------------------------------------------------------

int64_t GgufTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;  // validated against overflow on open
  return n;
}

std::vector<int64_t> GgufTensor::shape() const { return {ne.rbegin(), ne.rend()}; }

// --- GgufFile -------------------------------------------------------------------------------

GgufFile::GgufFile(const std::string& path) : file_(path) {
  Reader r(file_.bytes(), file_.path());
  const uint64_t file_size = file_.bytes().size();
  if (file_size < 4) r.fail("truncated: " + std::to_string(file_size) + " bytes, not a GGUF file");
  uint32_t magic = r.read<uint32_t>("magic");
  if (magic != kMagic) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", magic);
    r.fail(std::string("not a GGUF file: bad magic ") + hex + " (expected \"GGUF\")");
  }
  version_ = r.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3) {
    if (version_ != 0 && (version_ & 0xffffu) == 0)
      r.fail("big-endian GGUF files are not supported (version field " + std::to_string(version_) + ")");
    r.fail("unsupported GGUF version " + std::to_string(version_) + " (supported: 2, 3)");
  }
  const uint64_t tensor_count = r.read<uint64_t>("tensor_count");
  const uint64_t kv_count = r.read<uint64_t>("kv_count");
  if (kv_count > r.left() / kMinKvBytes)
    r.fail("kv_count " + std::to_string(kv_count) + " is impossible: " + std::to_string(r.left()) +
           " bytes follow the header (file truncated or corrupt)");

  for (uint64_t i = 0; i < kv_count; ++i) {
    const std::string what = "metadata entry " + std::to_string(i);
    std::string_view key = r.read_string(what + " key");
    if (key.size() > kMaxKeyBytes) r.fail(what + ": key longer than " + std::to_string(kMaxKeyBytes) + " bytes");
    const std::string kwhat = "key " + in_quotes(key);
    GgufValueType t = r.read_value_type(kwhat);
    GgufValue v(t, r.skip_value(t, kwhat));
    if (!key_index_.emplace(std::string(key), metadata_.size()).second) r.fail("duplicate " + kwhat);
    metadata_.emplace_back(std::string(key), v);
  }
  if (const GgufValue* a = find_key("general.alignment")) {
    if (a->type() != GgufValueType::UINT32)
      r.fail("key 'general.alignment': expected uint32, got " + gguf_value_type_name(a->type()));
    alignment_ = static_cast<uint64_t>(a->as_int());
    if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0)
      r.fail("key 'general.alignment': " + std::to_string(alignment_) + " is not a power of two");
  }

  if (tensor_count > r.left() / kMinTensorInfoBytes)
    r.fail("tensor_count " + std::to_string(tensor_count) + " is impossible: " +
           std::to_string(r.left()) + " bytes follow the metadata (file truncated or corrupt)");
  std::vector<uint64_t> sizes;
  for (uint64_t i = 0; i < tensor_count; ++i) {
    const std::string what = "tensor info " + std::to_string(i);
    std::string_view name = r.read_string(what + " name");
    const std::string twhat = "tensor " + in_quotes(name);
    if (name.size() > kMaxTensorNameBytes)
      r.fail(twhat + ": name longer than " + std::to_string(kMaxTensorNameBytes) + " bytes");
    uint32_t n_dims = r.read<uint32_t>(twhat + " n_dims");
    if (n_dims < 1 || n_dims > 4) r.fail(twhat + ": n_dims " + std::to_string(n_dims) + " out of range 1..4");
    GgufTensor t{std::string(name), GgmlType::F32, {}, 0, {}};
    int64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t n = r.read<uint64_t>(twhat + " ne[" + std::to_string(d) + "]");
      if (n > static_cast<uint64_t>(INT64_MAX) ||
          __builtin_mul_overflow(elements, static_cast<int64_t>(n), &elements))
        r.fail(twhat + ": ne[" + std::to_string(d) + "] = " + std::to_string(n) + " is too large");
      t.ne.push_back(static_cast<int64_t>(n));
    }
    uint32_t type = r.read<uint32_t>(twhat + " type");
    const GgmlTypeTraits* traits = ggml_type_traits(type);
    if (!traits) r.fail(twhat + ": unknown ggml type " + std::to_string(type));
    t.type = static_cast<GgmlType>(type);
    if (t.ne[0] % traits->block_size != 0)
      r.fail(twhat + ": ne[0] = " + std::to_string(t.ne[0]) + " is not a multiple of the " +
             traits->name + " block size " + std::to_string(traits->block_size));
    t.offset = r.read<uint64_t>(twhat + " offset");
    if (t.offset % alignment_ != 0)
      r.fail(twhat + ": offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
             std::to_string(alignment_));
    // elements / block_size * type_size, with type_size <= 292: no overflow below 2^63 / 292 blocks.
    const uint64_t blocks = static_cast<uint64_t>(elements / traits->block_size);
    if (blocks > UINT64_MAX / static_cast<uint64_t>(traits->type_size))
      r.fail(twhat + ": size overflows");
    if (!tensor_index_.emplace(t.name, tensors_.size()).second) r.fail("duplicate " + twhat);
    tensors_.push_back(std::move(t));
    sizes.push_back(blocks * static_cast<uint64_t>(traits->type_size));  // data checked below
  }

  data_offset_ = (r.pos() + alignment_ - 1) / alignment_ * alignment_;
  const uint64_t data_size = file_size > data_offset_ ? file_size - data_offset_ : 0;
  std::vector<size_t> order(tensors_.size());
  for (size_t i = 0; i < order.size(); ++i) {
    GgufTensor& t = tensors_[i];
    const uint64_t nbytes = sizes[i];
    if (t.offset > data_size || nbytes > data_size - t.offset)
      r.fail("tensor " + in_quotes(t.name) + ": data [" + std::to_string(t.offset) + ", " +
             std::to_string(t.offset + nbytes) + ") out of range: the data section (from offset " +
             std::to_string(data_offset_) + ") has " + std::to_string(data_size) +
             " bytes (file truncated?)");
    t.data = file_.bytes().subspan(data_offset_ + t.offset, nbytes);
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors_[a].offset < tensors_[b].offset; });
  const GgufTensor* last = nullptr;  // the previous tensor with data: an empty one overlaps nothing
  for (size_t k = 0; k < order.size(); ++k) {
    const GgufTensor& cur = tensors_[order[k]];
    if (cur.data.empty()) continue;
    const GgufTensor* before = std::exchange(last, &cur);
    if (!before) continue;
    const GgufTensor& prev = *before;
    if (cur.offset < prev.offset + prev.data.size())
      r.fail("tensor " + in_quotes(cur.name) + " (offset " + std::to_string(cur.offset) +
             ") overlaps tensor " + in_quotes(prev.name) + " (offset " + std::to_string(prev.offset) +
             ", " + std::to_string(prev.data.size()) + " bytes)");
  }
}

const GgufValue* GgufFile::find_key(const std::string& key) const {
  auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &metadata_[it->second].second;
}

const GgufTensor* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace mobius
