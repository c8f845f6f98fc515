// weights/: the safetensors reader (format: huggingface/safetensors README "Format") on files
// written here, sharded checkpoints, tensor conversion and the strict WeightPlan binding.
#include <cmath>
#include <numeric>

#include "builder/builder.h"
#include "test_util.h"
#include "util/float16.h"
#include "weights/convert.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace mobius {
namespace {

using nlohmann::json;
using test::as_bytes;
using test::expect_error;
using test::SafetensorsWriter;

std::vector<uint16_t> f16_bits(const std::vector<float>& v) {
  std::vector<uint16_t> out;
  for (float x : v) out.push_back(f32_to_f16(x));
  return out;
}

TEST(Safetensors, ReadsValidFile) {
  test::TempDir dir;
  const std::vector<float> f32{1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.5f};
  const std::vector<uint16_t> f16 = f16_bits({1.0f, 2.0f, -3.0f, 0.5f});
  const std::vector<uint16_t> bf16{0x3f80, 0xc000, 0x4040, 0x0000};
  const std::vector<int64_t> i64{1, -2, 1LL << 40};
  SafetensorsWriter w;
  w.f32("a.weight", {2, 3}, f32).add("b", "F16", {4}, as_bytes(f16)).add("c", "BF16", {2, 2}, as_bytes(bf16));
  w.add("ids", "I64", {3}, as_bytes(i64)).add("empty", "F32", {0, 5}, "");
  w.header["__metadata__"] = {{"format", "pt"}, {"note", "unit test"}};
  const std::string path = dir.str("model.safetensors");
  test::write_file(path, test::safetensors_bytes(w.header.dump() + "    ", w.data));  // padded header

  SafetensorsFile f(path);
  EXPECT_EQ(f.path(), path);
  EXPECT_EQ(f.metadata(), (std::map<std::string, std::string>{{"format", "pt"}, {"note", "unit test"}}));
  ASSERT_EQ(f.tensors().size(), 5u);
  auto check = [&](const std::string& name, DataType dt, std::vector<int64_t> shape, const std::string& bytes) {
    SCOPED_TRACE(name);
    const TensorView& t = f.tensors().at(name);
    EXPECT_EQ(t.name, name);
    EXPECT_EQ(t.dtype, dt);
    EXPECT_EQ(t.shape, shape);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size()), bytes);
    EXPECT_EQ(*t.file, path);
  };
  check("a.weight", DataType::FLOAT, {2, 3}, as_bytes(f32));
  check("b", DataType::FLOAT16, {4}, as_bytes(f16));
  check("c", DataType::BFLOAT16, {2, 2}, as_bytes(bf16));
  check("ids", DataType::INT64, {3}, as_bytes(i64));
  check("empty", DataType::FLOAT, {0, 5}, "");
}

// A file with `header` as its JSON header and a data buffer of `data_size` bytes.
std::string write_raw(const test::TempDir& dir, const std::string& header, size_t data_size) {
  const std::string path = dir.str("bad.safetensors");
  test::write_file(path, test::safetensors_bytes(header, std::string(data_size, '\x01')));
  return path;
}

json entry(const std::string& dtype, std::vector<int64_t> shape, uint64_t begin, uint64_t end) {
  return {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
}

TEST(Safetensors, MalformedFilesNameFileAndTensor) {
  test::TempDir dir;
  const std::string path = dir.str("bad.safetensors");
  auto open = [&] { SafetensorsFile f(path); };

  test::write_file(path, "abc");
  expect_error(open, {path, "truncated: 3 bytes"});

  test::write_file(path, std::string("\xe8\x03\0\0\0\0\0\0{}", 10));  // header length 1000, 2 bytes follow
  expect_error(open, {path, "header length 1000 runs past the end of the file (10 bytes)"});

  write_raw(dir, "{\"a\": {\"dtype\": ", 0);
  expect_error(open, {path, "(header): invalid JSON at byte"});

  write_raw(dir, "[1, 2]", 0);
  expect_error(open, {path, "header is not a JSON object"});

  write_raw(dir, json{{"w", entry("F8_E4M3", {4}, 0, 4)}}.dump(), 4);
  expect_error(open, {path, "tensor 'w'", "unknown dtype 'F8_E4M3'"});

  write_raw(dir, json{{"w", entry("F32", {2, -1}, 0, 8)}}.dump(), 8);
  expect_error(open, {path, "tensor 'w'", "non-negative"});

  write_raw(dir, json{{"a", entry("F32", {2}, 0, 8)}, {"b", entry("F32", {2}, 4, 12)}}.dump(), 12);
  expect_error(open, {path, "tensor 'b' overlaps tensor 'a'"});

  write_raw(dir, json{{"a", entry("F32", {2}, 0, 8)}, {"b", entry("F32", {2}, 12, 20)}}.dump(), 20);
  expect_error(open, {path, "gap in data buffer before tensor 'b'"});

  write_raw(dir, json{{"a", entry("F32", {4}, 0, 16)}}.dump(), 8);
  expect_error(open, {path, "tensor 'a'", "out of range", "8 bytes"});

  write_raw(dir, json{{"a", entry("F32", {2}, 8, 0)}}.dump(), 8);
  expect_error(open, {path, "tensor 'a'", "begin 8 > end 0"});

  write_raw(dir, json{{"a", entry("F32", {3}, 0, 8)}}.dump(), 8);
  expect_error(open, {path, "tensor 'a'", "8 bytes for 3 elements of F32"});

  // 2^62 * 4 elements wrap a 64-bit count to 0, matching an empty byte range.
  write_raw(dir, json{{"a", entry("F32", {int64_t{1} << 62, 4}, 0, 0)}}.dump(), 0);
  expect_error(open, {path, "tensor 'a'", "too large"});

  write_raw(dir, json{{"a", entry("F32", {2}, 0, 8)}}.dump(), 12);
  expect_error(open, {path, "data buffer has 12 bytes but tensors cover 8"});

  expect_error([&] { SafetensorsFile f(dir.str("absent.safetensors")); }, {dir.str("absent.safetensors"), "cannot open"});
}

struct CheckpointTest : ::testing::Test {
  test::TempDir dir;
  void shard(const std::string& file, const std::vector<std::string>& names) {
    SafetensorsWriter w;
    for (const auto& n : names) w.f32(n, {2}, {1.0f, 2.0f});
    w.write(dir.path / file);
  }
  void index(const json& weight_map) {
    test::write_file(dir.path / "model.safetensors.index.json",
                     json{{"metadata", {{"total_size", 24}}}, {"weight_map", weight_map}}.dump());
  }
};

TEST_F(CheckpointTest, ShardedIndex) {
  shard("model-00001-of-00002.safetensors", {"a", "b"});
  shard("model-00002-of-00002.safetensors", {"c"});
  shard("stray.safetensors", {"a"});  // not in the index: ignored
  index({{"a", "model-00001-of-00002.safetensors"}, {"b", "model-00001-of-00002.safetensors"},
         {"c", "model-00002-of-00002.safetensors"}});
  SafetensorsCheckpoint c(dir.str());
  EXPECT_EQ(c.files().size(), 2u);
  EXPECT_EQ(c.names(), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_NE(c.find("c"), nullptr);
  EXPECT_EQ(*c.find("c")->file, dir.str("model-00002-of-00002.safetensors"));
  EXPECT_EQ(*c.find("a")->file, dir.str("model-00001-of-00002.safetensors"));
  EXPECT_EQ(c.find("d"), nullptr);
}

TEST_F(CheckpointTest, IndexNamingAMissingFile) {
  shard("model-00001-of-00002.safetensors", {"a"});
  index({{"a", "model-00001-of-00002.safetensors"}, {"b", "model-00002-of-00002.safetensors"}});
  expect_error([&] { SafetensorsCheckpoint(dir.str()); },
               {dir.str("model.safetensors.index.json"), "weight_map['b']", "model-00002-of-00002.safetensors"});
}

TEST_F(CheckpointTest, MalformedIndexAndDuplicatesAndEmptyDir) {
  expect_error([&] { SafetensorsCheckpoint(dir.str()); }, {dir.str(), "no *.safetensors files"});
  test::write_file(dir.path / "model.safetensors.index.json", "{\"weight_map\": [");
  expect_error([&] { SafetensorsCheckpoint(dir.str()); }, {"model.safetensors.index.json", "invalid JSON"});
  test::write_file(dir.path / "model.safetensors.index.json", "{\"metadata\": {}}");
  expect_error([&] { SafetensorsCheckpoint(dir.str()); }, {"model.safetensors.index.json", "'weight_map'"});
  std::filesystem::remove(dir.path / "model.safetensors.index.json");
  shard("x.safetensors", {"a", "b"});
  shard("y.safetensors", {"b"});
  expect_error([&] { SafetensorsCheckpoint(dir.str()); }, {dir.str("y.safetensors"), "tensor 'b'", dir.str("x.safetensors")});
}

// ---- convert_tensor ----

const std::string kFile = "ckpt/model.safetensors";

TensorView view(const std::string& bytes, DataType dt, std::vector<int64_t> shape) {
  return {{"t", dt, std::move(shape), &kFile}, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}};
}

template <typename T>
std::vector<T> convert(const TensorView& src, DataType dst, bool transpose) {
  int64_t n = std::accumulate(src.shape.begin(), src.shape.end(), int64_t{1}, std::multiplies<>());
  std::vector<T> out(static_cast<size_t>(n));
  convert_tensor(src, dst, transpose, {reinterpret_cast<uint8_t*>(out.data()), out.size() * sizeof(T)});
  return out;
}

// Floats around the f16 and bf16 rounding decisions: ties, overflow, subnormals, signed zero.
std::vector<float> tricky_floats() {
  std::vector<float> v{0.0f, -0.0f, 1.0f, 0.1f, -3.7f, 65504.0f, 65519.0f, 65520.0f, 1e6f, -1e6f, 3.0e38f,
                       1e-8f, -1e-8f, 3e-5f, 6.1e-5f};
  for (int k : {-11, -10, -9, -8}) {  // 1 + 2^k and 1 + 3 * 2^k: ties at both formats' precisions
    v.push_back(1.0f + std::ldexp(1.0f, k));
    v.push_back(1.0f + 3 * std::ldexp(1.0f, k));
  }
  for (int e = -26; e <= -13; ++e) v.push_back(std::ldexp(1.5f, e));  // f16 subnormal range
  return v;
}

TEST(Convert, F32ToF16AndBf16RoundToNearestEven) {
  const std::vector<float> x = tricky_floats();
  const std::string bytes = as_bytes(x);
  const TensorView src = view(bytes, DataType::FLOAT, {static_cast<int64_t>(x.size())});
  std::vector<uint16_t> h = convert<uint16_t>(src, DataType::FLOAT16, false);
  std::vector<uint16_t> b = convert<uint16_t>(src, DataType::BFLOAT16, false);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(f16_to_f32(h[i]), test::round_f16(x[i])) << x[i];
    EXPECT_EQ(std::signbit(f16_to_f32(h[i])), std::signbit(x[i])) << x[i];
    EXPECT_EQ(bf16_to_f32(b[i]), test::round_bf16(x[i])) << x[i];
  }
}

// F64 sources round once, straight to the target (no double rounding through float32):
// 1 + 2^-11 + 2^-40 lies just above an f16 tie but rounds to the tie itself in float32.
TEST(Convert, F64ToF16AndBf16RoundOnce) {
  std::vector<double> x;
  for (int k : {-11, -8}) {
    for (double tail : {std::ldexp(1.0, -40), -std::ldexp(1.0, -40), 0.0}) {
      x.push_back(1 + std::ldexp(1.0, k) + tail);
      x.push_back(-(1 + 3 * std::ldexp(1.0, k) + tail));
    }
  }
  x.push_back(65520.0 - std::ldexp(1.0, -30));  // just below f16 overflow
  x.push_back(std::ldexp(1.0, -25) + std::ldexp(1.0, -60));  // just above half the least subnormal
  x.push_back(1e300);
  const std::string bytes = as_bytes(x);
  const TensorView src = view(bytes, DataType::DOUBLE, {static_cast<int64_t>(x.size())});
  std::vector<uint16_t> h = convert<uint16_t>(src, DataType::FLOAT16, false);
  std::vector<uint16_t> b = convert<uint16_t>(src, DataType::BFLOAT16, false);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(f16_to_f32(h[i]), test::round_f16(x[i])) << x[i];
    EXPECT_EQ(bf16_to_f32(b[i]), test::round_bf16(x[i])) << x[i];
  }
}

TEST(Convert, F16AndBf16ToF32AreExact) {
  std::vector<uint16_t> all(65536);
  std::iota(all.begin(), all.end(), 0);
  const std::string bytes = as_bytes(all);
  std::vector<float> from_f16 = convert<float>(view(bytes, DataType::FLOAT16, {65536}), DataType::FLOAT, false);
  std::vector<float> from_bf16 = convert<float>(view(bytes, DataType::BFLOAT16, {256, 256}), DataType::FLOAT, false);
  for (uint32_t i = 0; i < 65536; ++i) {
    EXPECT_EQ(f32_bits(from_f16[i]), f32_bits(f16_to_f32(static_cast<uint16_t>(i)))) << i;
    EXPECT_EQ(f32_bits(from_bf16[i]), i << 16) << i;
  }
  const std::vector<double> d{0.1, -1e300, 1e-300, 3.5};
  const std::string dbytes = as_bytes(d);
  std::vector<float> f = convert<float>(view(dbytes, DataType::DOUBLE, {4}), DataType::FLOAT, false);
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(f[i], static_cast<float>(d[i]));
}

// [rows, cols] -> [cols, rows], across the 128-row x 256-column blocks and their 8 x 8 (16-bit)
// and 4 x 4 (32-bit) tiles; [..., rows, cols] per matrix.
TEST(Convert, Transpose) {
  const int64_t rows = 301, cols = 530;
  const std::vector<float> x = test::iota_f32(rows * cols, -100.0f, 0.37f);
  const std::string bytes = as_bytes(x);
  // Transposed to f32 and to f16, element (r, c) of the source whose values are value(r * cols + c).
  auto expect_transposed = [&](const TensorView& src, auto value) {
    const std::vector<float> f32 = convert<float>(src, DataType::FLOAT, true);
    const std::vector<uint16_t> f16 = convert<uint16_t>(src, DataType::FLOAT16, true);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const float v = value(r * cols + c);
        EXPECT_EQ(f32[c * rows + r], v);
        EXPECT_EQ(f16_to_f32(f16[c * rows + r]), test::round_f16(v));
      }
  };
  expect_transposed(view(bytes, DataType::FLOAT, {rows, cols}), [&](int64_t i) { return x[i]; });
  // 16-bit sources (a bf16 checkpoint), transposed before they are converted.
  std::vector<uint16_t> b(x.size());
  for (size_t i = 0; i < x.size(); ++i) b[i] = f32_to_bf16(x[i]);
  const std::string b_bytes = as_bytes(b);
  expect_transposed(view(b_bytes, DataType::BFLOAT16, {rows, cols}), [&](int64_t i) { return bf16_to_f32(b[i]); });
  // A batch of matrices (stacked experts): the last two axes swap, per matrix.
  const std::vector<float> batched = test::iota_f32(2 * 3 * 4);
  const std::string bbytes = as_bytes(batched);
  std::vector<uint16_t> bt = convert<uint16_t>(view(bbytes, DataType::FLOAT, {2, 3, 4}), DataType::BFLOAT16, true);
  for (int e = 0; e < 2; ++e)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(bf16_to_f32(bt[e * 12 + c * 3 + r]), test::round_bf16(batched[e * 12 + r * 4 + c]));
  const std::vector<int64_t> ids{1, 2, 3, 4, 5, 6};
  const std::string ibytes = as_bytes(ids);
  EXPECT_EQ(convert<int64_t>(view(ibytes, DataType::INT64, {2, 3}), DataType::INT64, true),
            (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

// Any range of output rows equals the same rows of the whole conversion: plain and transposed,
// ranges that cross tile and block edges and (for a batch of matrices) matrix boundaries, every isa.
TEST(Convert, RowRangesEqualTheWholeTensor) {
  const std::vector<float> x = test::iota_f32(3 * 140 * 600, -500.0f, 0.0371f);
  const std::string bytes = as_bytes(x);
  std::vector<Isa> isas{Isa::kScalar};
  if (best_isa() != Isa::kScalar) isas.push_back(best_isa());
  for (bool transpose : {false, true}) {
    const TensorView src = view(bytes, DataType::FLOAT, {3, 140, 600});
    const int64_t rows = output_rows(src.shape, transpose), width = transpose ? 140 : 600;
    EXPECT_EQ(rows, transpose ? 3 * 600 : 3 * 140);
    const std::vector<uint16_t> whole = convert<uint16_t>(src, DataType::BFLOAT16, transpose);
    for (Isa isa : isas)
      for (auto [begin, end] : std::vector<std::pair<int64_t, int64_t>>{{0, rows}, {0, 1}, {5, 69}, {63, 131}, {100, 200}, {rows / 3 - 30, rows / 3 + 30}, {rows / 4, rows / 2}, {rows - 1, rows}, {7, 7}}) {
        std::vector<uint16_t> part(static_cast<size_t>((end - begin) * width));
        convert_rows(src, DataType::BFLOAT16, transpose, begin, end, {reinterpret_cast<uint8_t*>(part.data()), part.size() * 2}, isa);
        EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + begin * width))
            << "transpose " << transpose << " rows [" << begin << ", " << end << ")";
      }
  }
}

TEST(Convert, UnsupportedConversionNamesFileAndTensor) {
  const std::vector<int64_t> ids{1, 2};
  const std::string bytes = as_bytes(ids);
  expect_error([&] { convert<float>(view(bytes, DataType::INT64, {2}), DataType::FLOAT, false); },
               {kFile, "tensor 't'", "cannot convert INT64 to FLOAT"});
  const std::vector<float> x{1.0f, 2.0f};
  const std::string fbytes = as_bytes(x);
  expect_error([&] { convert<double>(view(fbytes, DataType::FLOAT, {2}), DataType::DOUBLE, false); },
               {kFile, "tensor 't'", "cannot convert FLOAT to DOUBLE"});
}

// ---- WeightPlan ----

struct PlanTest : ::testing::Test {
  test::TempDir dir;
  Model model;
  GraphBuilder b{model.graph};
  const std::vector<float> up = test::iota_f32(6 * 4);
  const std::vector<float> norm{1.0f, 2.0f, 3.0f, 4.0f};

  void SetUp() override {
    b.weight("model.layers.0.mlp.up_proj.weight", DataType::FLOAT16, {4, 6}, {"model.layers.0.mlp.up_proj.weight", {Transpose{}, Cast{DataType::FLOAT16}}});
    b.weight("model.norm.weight", DataType::FLOAT, {4}, {"model.norm.weight", {Cast{DataType::FLOAT}}});
    b.constant_f32({1.0f}, {});  // constants are not bound
  }
  SafetensorsCheckpoint write(SafetensorsWriter w) {
    w.write(dir.path / "model.safetensors");
    return SafetensorsCheckpoint(dir.str());
  }
  SafetensorsWriter good() {
    SafetensorsWriter w;
    w.f32("model.layers.0.mlp.up_proj.weight", {6, 4}, up).f32("model.norm.weight", {4}, norm);
    return w;
  }
};

TEST_F(PlanTest, BindsEveryWeightAndListsUnused) {
  SafetensorsCheckpoint c = write(good().f32("extra.bias", {1}, {0.0f}).f32("a.rotary_emb.inv_freq", {1}, {0.0f}));
  WeightPlan plan = WeightPlan::bind(model.graph, c);
  ASSERT_EQ(plan.bindings().size(), 2u);
  EXPECT_EQ(plan.unused(), (std::vector<std::string>{"a.rotary_emb.inv_freq", "extra.bias"}));
  const WeightBinding& up_b = plan.bindings()[0];
  EXPECT_EQ(up_b.init->value->name, "model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(up_b.source, c.find("model.layers.0.mlp.up_proj.weight"));
  std::vector<uint16_t> out(24);
  up_b.produce(0, up_b.rows(), {reinterpret_cast<uint8_t*>(out.data()), 48});
  for (int o = 0; o < 6; ++o)
    for (int i = 0; i < 4; ++i) EXPECT_EQ(f16_to_f32(out[i * 6 + o]), test::round_f16(up[o * 4 + i]));
}

TEST_F(PlanTest, MissingTensorNamesKeyAndNearestKeys) {
  SafetensorsWriter w;
  w.f32("model.layers.0.mlp.up_proj.weights", {6, 4}, up).f32("model.norm.weight", {4}, norm);
  w.f32("lm_head.weight", {1}, {0.0f});
  SafetensorsCheckpoint c = write(w);
  expect_error([&] { WeightPlan::bind(model.graph, c); },
               {"missing tensor 'model.layers.0.mlp.up_proj.weight'", "nearest: model.layers.0.mlp.up_proj.weights "});
}

TEST_F(PlanTest, ShapeAndDtypeMismatch) {
  SafetensorsWriter w;
  w.f32("model.layers.0.mlp.up_proj.weight", {4, 6}, up).f32("model.norm.weight", {4}, norm);
  SafetensorsCheckpoint c = write(w);
  expect_error([&] { WeightPlan::bind(model.graph, c); },
               {dir.str("model.safetensors"), "tensor 'model.layers.0.mlp.up_proj.weight' has shape [4, 6], expected [6, 4]"});
  SafetensorsWriter v = good();
  v.header.clear();
  v.data.clear();
  v.f32("model.layers.0.mlp.up_proj.weight", {6, 4}, up).add("model.norm.weight", "I64", {4}, std::string(32, '\0'));
  SafetensorsCheckpoint d = write(v);
  expect_error([&] { WeightPlan::bind(model.graph, d); },
               {dir.str("model.safetensors"), "tensor 'model.norm.weight' has dtype INT64, expected a float tensor"});
}

TEST(LegacyKey, TorchWeightNormAndLayerNormNames) {
  using V = std::vector<std::string>;
  EXPECT_EQ(legacy_keys("wav2vec2.encoder.pos_conv_embed.conv.parametrizations.weight.original0"),
            V{"wav2vec2.encoder.pos_conv_embed.conv.weight_g"});
  EXPECT_EQ(legacy_keys("encoder.pos_conv_embed.conv.parametrizations.weight.original1"),
            V{"encoder.pos_conv_embed.conv.weight_v"});
  EXPECT_EQ(legacy_keys("encoder.pos_conv_embed.conv.bias"), V{});
  EXPECT_EQ(legacy_keys("x.parametrizations.weight.original2"), V{});
  EXPECT_EQ(legacy_keys("encoder.layer.0.attention.LayerNorm.weight"), V{"encoder.layer.0.attention.LayerNorm.gamma"});
  EXPECT_EQ(legacy_keys("encoder.layer.0.LayerNorm.bias"), V{"encoder.layer.0.LayerNorm.beta"});
  EXPECT_EQ(legacy_keys("lm_head.layer_norm.weight"), V{});
}

TEST(LegacyKey, ClipTowerPrefix) {
  using V = std::vector<std::string>;
  EXPECT_EQ(legacy_keys("embeddings.token_embedding.weight"),
            (V{"text_model.embeddings.token_embedding.weight", "vision_model.embeddings.token_embedding.weight"}));
  EXPECT_EQ(legacy_keys("encoder.layers.1.mlp.fc2.bias"),
            (V{"text_model.encoder.layers.1.mlp.fc2.bias", "vision_model.encoder.layers.1.mlp.fc2.bias"}));
  EXPECT_EQ(legacy_keys("post_layernorm.weight"), (V{"text_model.post_layernorm.weight", "vision_model.post_layernorm.weight"}));
  EXPECT_EQ(legacy_keys("encoder.layers.0.attention.k_proj.weight"), V{});  // wav2vec2's
  EXPECT_EQ(legacy_keys("embeddings.word_embeddings.weight"), V{});
}

TEST(LegacyKey, KimiLinearDenseMlp) {
  using V = std::vector<std::string>;
  EXPECT_EQ(legacy_keys("model.layers.0.block_sparse_moe.gate_proj.weight"), V{"model.layers.0.mlp.gate_proj.weight"});
  EXPECT_EQ(legacy_keys("model.layers.0.block_sparse_moe.down_proj.weight"), V{"model.layers.0.mlp.down_proj.weight"});
  EXPECT_EQ(legacy_keys("model.layers.1.block_sparse_moe.shared_experts.up_proj.weight"), V{});
  EXPECT_EQ(legacy_keys("model.layers.1.block_sparse_moe.experts.0.w1.weight"), V{});
}

TEST(LegacyKey, EsmRotaryInvFreq) {
  using V = std::vector<std::string>;
  EXPECT_EQ(legacy_keys("esm.rotary_embeddings.inv_freq"),
            (V{"esm.encoder.layer.*.attention.self.rotary_embeddings.inv_freq",
               "esm.encoder.layer.0.attention.self.rotary_embeddings.inv_freq"}));
  EXPECT_EQ(legacy_keys("rotary_embeddings.inv_freq"),
            (V{"encoder.layer.*.attention.self.rotary_embeddings.inv_freq",
               "encoder.layer.0.attention.self.rotary_embeddings.inv_freq"}));
  EXPECT_EQ(legacy_keys("model.my_rotary_embeddings.inv_freq"), V{});
}

TEST(NearestNames, ByEditDistanceThenName) {
  const std::vector<std::string> c{"xyz", "abd", "b", "abcd", "ab"};
  // Distances to "abc": abd 1, abcd 1, ab 1, b 2, xyz 3.
  EXPECT_EQ(nearest_names("abc", c), (std::vector<std::string>{"ab", "abcd", "abd"}));
  EXPECT_EQ(nearest_names("abc", c, 4), (std::vector<std::string>{"ab", "abcd", "abd", "b"}));
  EXPECT_EQ(nearest_names("abc", c, 10).size(), 5u);
  EXPECT_TRUE(nearest_names("abc", {}).empty());
}

}  // namespace
}  // namespace mobius
