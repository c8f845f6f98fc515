// weights/quantize.h: the MatMulNBits block quantization (layout of onnxruntime's contrib op
// spec, rounding of its quantizer, MLAS q4_dq.cpp; the bit-for-bit comparison with onnxruntime
// itself is tests/parity/test_quantized.py), and quantized weights produced by the WeightPlan in
// row ranges as the writer streams them.
#include <cstring>
#include <map>

#include "builder/builder.h"
#include "test_util.h"
#include "util/float16.h"
#include "weights/quantize.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace mobius {
namespace {

using Part = BlockQuantize::Part;

float f32_at(const std::vector<uint8_t>& bytes, size_t i) {
  float f;
  std::memcpy(&f, bytes.data() + 4 * i, 4);
  return f;
}

int nibble(const std::vector<uint8_t>& bytes, size_t i) { return i % 2 ? bytes[i / 2] >> 4 : bytes[i / 2] & 15; }

TEST(BlockQuantize, Shapes) {
  const BlockQuantization q4{4, 32, false}, q8{8, 128, true};
  EXPECT_EQ(shape_str(quant_shape(Part::data, 6, 80, q4)), shape_str({6, 3, 16}));
  EXPECT_EQ(shape_str(quant_shape(Part::scales, 6, 80, q4)), shape_str({6, 3}));
  EXPECT_EQ(shape_str(quant_shape(Part::zero_points, 6, 80, q4)), shape_str({6, 2}));  // 3 nibbles
  EXPECT_EQ(shape_str(quant_shape(Part::data, 6, 80, q8)), shape_str({6, 1, 128}));
  EXPECT_EQ(shape_str(quant_shape(Part::zero_points, 6, 300, q8)), shape_str({6, 3}));
}

// Symmetric 4 bits: scale = -m / 8 with m the value of largest magnitude; q = roundf(v / scale + 8)
// (halves away from zero), element 2i in the low nibble; the short last block is padded with 0.
TEST(BlockQuantize, Symmetric4BitsLayoutAndPadding) {
  const int64_t k = 40;  // block 0: 32 values, block 1: 8 values + 24 padding
  std::vector<float> w(k);
  for (int i = 0; i < 32; ++i) w[i] = (i - 16) * 0.25f;  // [-4, 3.75]: m = -4, scale 0.5
  for (int i = 32; i < 40; ++i) w[i] = (i - 32) * 0.5f;  // [0, 3.5]: m = 3.5, scale -0.4375
  std::vector<uint8_t> data(2 * 16), scales(2 * 4);
  block_quantize_rows(w.data(), 1, k, {4, 32, true}, DataType::FLOAT, data.data(), scales.data(), nullptr);
  EXPECT_EQ(f32_at(scales, 0), 0.5f);
  EXPECT_EQ(f32_at(scales, 1), -3.5f / 8);
  for (int i = 0; i < 32; ++i)  // v / 0.5 + 8 = (i - 16) / 2 + 8: halves round up (away from 0)
    EXPECT_EQ(nibble(data, i), std::min(15, (i + 1) / 2)) << i;
  const float recip = 1.0f / (-3.5f / 8);
  for (int i = 32; i < 40; ++i) EXPECT_EQ(nibble(data, i), static_cast<int>(std::roundf(w[i] * recip + 8))) << i;
  EXPECT_EQ(nibble(data, 39), 0);  // 3.5 / -0.4375 = -8 → code 0
  for (int i = 40; i < 64; ++i) EXPECT_EQ(nibble(data, i), 0) << i;
}

// Asymmetric 8 bits: lo = min(min, 0), hi = max(max, 0), scale = (hi - lo) / 255,
// zero point roundf(-lo / scale), codes clamped to [0, 255].
TEST(BlockQuantize, Asymmetric8Bits) {
  std::vector<float> w{-1.0f, 3.0f, 0.0f, 1.0f};
  for (int i = 4; i < 32; ++i) w.push_back(0.5f);
  std::vector<uint8_t> data(32), scales(4), zp(1);
  block_quantize_rows(w.data(), 1, 32, {8, 32, false}, DataType::FLOAT, data.data(), scales.data(), zp.data());
  const float s = 4.0f / 255.0f;
  EXPECT_EQ(f32_at(scales, 0), s);
  EXPECT_EQ(zp[0], 64);  // 1 / (4 / 255) = 63.75
  EXPECT_EQ(data[0], 0);    // -63.75 + 64 = 0.25
  EXPECT_EQ(data[1], 255);  // 191.25 + 64 clamped
  EXPECT_EQ(data[2], 64);
  EXPECT_EQ(data[3], static_cast<int>(std::roundf(1.0f * (1.0f / s) + 64)));
}

// Asymmetric 4 bits: zero points two per byte (block 2j low nibble), a trailing half byte 8; an
// all-zero block has scale 0, zero point 0 and codes 0; a block of one sign still spans 0.
TEST(BlockQuantize, Asymmetric4BitsZeroPointsAndZeroBlock) {
  const int64_t k = 96;
  std::vector<float> w(k, 0.0f);
  for (int i = 32; i < 64; ++i) w[i] = 1.0f + i;     // positive: lo = 0 → zero point 0
  for (int i = 64; i < 96; ++i) w[i] = -1.0f - i;    // negative: hi = 0 → zero point 15
  std::vector<uint8_t> data(3 * 16), scales(3 * 4), zp(2);
  block_quantize_rows(w.data(), 1, k, {4, 32, false}, DataType::FLOAT, data.data(), scales.data(), zp.data());
  EXPECT_EQ(f32_at(scales, 0), 0.0f);
  EXPECT_EQ(f32_at(scales, 1), 64.0f / 15);
  EXPECT_EQ(f32_at(scales, 2), 96.0f / 15);
  EXPECT_EQ(zp[0], 0x00 | (0 << 4));
  EXPECT_EQ(zp[1], 15 | (8 << 4));  // block 2 low nibble, the unused high nibble 8
  for (int i = 0; i < 32; ++i) EXPECT_EQ(nibble(data, i), 0);
  EXPECT_EQ(nibble(data, 63), 15);  // the block maximum
  EXPECT_EQ(nibble(data, 95), 0);   // the block minimum
}

// float16 scales: stored rounded to float16, and codes computed with the rounded scale.
TEST(BlockQuantize, Float16Scales) {
  std::vector<float> w(32);
  for (int i = 0; i < 32; ++i) w[i] = static_cast<float>(test::round_f16(0.01f * (i - 10)));
  std::vector<uint8_t> data(16), scales(2);
  block_quantize_rows(w.data(), 1, 32, {4, 32, true}, DataType::FLOAT16, data.data(), scales.data(), nullptr);
  uint16_t h;
  std::memcpy(&h, scales.data(), 2);
  EXPECT_EQ(h, f32_to_f16(-w[31] / 8));
  const float recip = 1.0f / f16_to_f32(h);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(nibble(data, i), std::clamp(static_cast<int>(std::roundf(w[i] * recip + 8)), 0, 15)) << i;
}

// The AVX2 blocks (best_isa) give the scalar form's bytes: blocks of 32, 64 and 128 with a short
// tail block, values whose code lands exactly on .5, NaN, infinities, blocks of +0 / -0 mixed,
// constant blocks, either scale dtype, 4 and 8 bits, symmetric and not.
TEST(BlockQuantize, VectorBlocksEqualScalar) {
  const int64_t rows = 6, k = 300;
  std::vector<float> w(rows * k);
  uint32_t seed = 12345;
  auto next = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
  for (size_t i = 0; i < w.size(); ++i) w[i] = (static_cast<float>(next() % 20001) - 10000.0f) / 997.0f;
  for (int64_t i = 0; i < 64; ++i) w[i] = static_cast<float>(i % 16) - 7.5f;  // codes on .5 after scaling
  for (int64_t i = 64; i < 128; ++i) w[k + i] = (i % 3) ? 0.0f : -0.0f;      // zeros of both signs
  for (int64_t i = 128; i < 192; ++i) w[2 * k + i] = 0.75f;                 // a constant block
  w[3 * k + 5] = std::numeric_limits<float>::quiet_NaN();
  w[3 * k + 40] = std::numeric_limits<float>::infinity();
  w[4 * k + 70] = -std::numeric_limits<float>::infinity();
  w[5 * k + 3] = 1e30f;
  for (int64_t block : {32, 64, 128})
    for (bool sym : {true, false})
      for (int bits : {4, 8})
        for (DataType scale_dtype : {DataType::FLOAT, DataType::FLOAT16}) {
          const BlockQuantization q{bits, block, sym};
          const size_t d = rows * quant_k_blocks(k, q) * quant_blob_size(q), s = rows * quant_k_blocks(k, q) * 4,
                       z = rows * quant_zero_point_bytes(k, q);
          std::vector<uint8_t> d0(d), s0(s), z0(z), d1(d), s1(s), z1(z);
          block_quantize_rows(w.data(), rows, k, q, scale_dtype, d0.data(), s0.data(), sym ? nullptr : z0.data(),
                              Isa::kScalar);
          block_quantize_rows(w.data(), rows, k, q, scale_dtype, d1.data(), s1.data(), sym ? nullptr : z1.data());
          EXPECT_EQ(d0, d1) << block << sym << bits;
          EXPECT_EQ(s0, s1) << block << sym << bits;
          EXPECT_EQ(z0, z1) << block << sym << bits;
        }
}

TEST(BlockQuantize, RowsAreIndependent) {
  const int64_t rows = 5, k = 72;
  std::vector<float> w(rows * k);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * i) * (1 + i % 7);
  for (bool sym : {true, false})
    for (int bits : {4, 8}) {
      const BlockQuantization q{bits, 32, sym};
      const int64_t d = quant_k_blocks(k, q) * quant_blob_size(q), s = quant_k_blocks(k, q) * 4,
                    z = quant_zero_point_bytes(k, q);
      std::vector<uint8_t> data(rows * d), scales(rows * s), zp(rows * z);
      block_quantize_rows(w.data(), rows, k, q, DataType::FLOAT, data.data(), scales.data(), sym ? nullptr : zp.data());
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<uint8_t> d1(d), s1(s), z1(z);
        block_quantize_rows(w.data() + r * k, 1, k, q, DataType::FLOAT, d1.data(), s1.data(), sym ? nullptr : z1.data());
        EXPECT_TRUE(std::equal(d1.begin(), d1.end(), data.begin() + r * d)) << bits << sym << r;
        EXPECT_TRUE(std::equal(s1.begin(), s1.end(), scales.begin() + r * s)) << bits << sym << r;
        if (!sym) {
          EXPECT_TRUE(std::equal(z1.begin(), z1.end(), zp.begin() + r * z)) << bits << sym << r;
        }
      }
    }
}

// A quantized packed weight (q and k stacked along N) produced in row ranges, as the writer
// streams it, equals the quantization of the stacked matrix; a transposed source ([K, N], GPT-2's
// Conv1D) is quantized as its transpose.
TEST(BlockQuantize, WeightPlanProducesStackedRowsInRanges) {
  test::TempDir dir;
  const int64_t k = 40;
  std::vector<float> q(4 * k), kk(2 * k), c(k * 3);
  for (size_t i = 0; i < q.size(); ++i) q[i] = std::cos(0.11f * i) * 3;
  for (size_t i = 0; i < kk.size(); ++i) kk[i] = std::sin(0.23f * i);
  for (size_t i = 0; i < c.size(); ++i) c[i] = 0.1f * static_cast<float>(i % 17) - 0.8f;
  test::SafetensorsWriter().f32("q.weight", {4, k}, q).f32("k.weight", {2, k}, kk).f32("c.weight", {k, 3}, c)
      .write(dir.path / "model.safetensors");
  SafetensorsCheckpoint ckpt(dir.str());
  const BlockQuantization scheme{4, 32, false};
  for (Part part : {Part::data, Part::scales, Part::zero_points}) {
    Graph g;
    GraphBuilder b(g);
    const DataType dt = part == Part::scales ? DataType::FLOAT : DataType::UINT8;
    WeightRef packed{"q.weight", {Concat{{"k.weight"}, -2}, Cast{DataType::FLOAT}, BlockQuantize{part, scheme}}};
    WeightRef conv{"c.weight", {Transpose{}, Cast{DataType::FLOAT}, BlockQuantize{part, scheme}}};
    b.weight("qk", dt, quant_shape(part, 6, k, scheme), packed);
    b.weight("c", dt, quant_shape(part, 3, k, scheme), conv);
    WeightPlan plan = WeightPlan::bind(g, ckpt);
    ASSERT_EQ(plan.bindings().size(), 2u);
    // expected: the stacked [6, k] and the transposed [3, k] quantized whole
    std::vector<float> stacked(q);
    stacked.insert(stacked.end(), kk.begin(), kk.end());
    std::vector<float> ct(3 * k);
    for (int64_t r = 0; r < k; ++r)
      for (int col = 0; col < 3; ++col) ct[col * k + r] = c[r * 3 + col];
    const std::vector<float>* src[] = {&stacked, &ct};
    for (int i = 0; i < 2; ++i) {
      const WeightBinding& wb = plan.bindings()[i];
      const int64_t rows = wb.rows();
      ASSERT_EQ(rows, i == 0 ? 6 : 3);
      EXPECT_EQ(wb.scratch_row_bytes(), k * 8);
      const size_t row_bytes = wb.init->nbytes() / rows;
      std::vector<uint8_t> want(wb.init->nbytes()), got(wb.init->nbytes());
      block_quantize_rows(src[i]->data(), rows, k, scheme, DataType::FLOAT, part == Part::data ? want.data() : nullptr,
                          part == Part::scales ? want.data() : nullptr, part == Part::zero_points ? want.data() : nullptr);
      // ranges, one crossing the q / k boundary (row 4)
      const std::vector<std::pair<int64_t, int64_t>> ranges =
          i == 0 ? std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 5}, {5, 6}} : std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 3}};
      for (auto [r, e] : ranges) wb.produce(r, e, {got.data() + r * row_bytes, static_cast<size_t>(e - r) * row_bytes});
      EXPECT_EQ(got, want) << "part " << static_cast<int>(part) << " binding " << i;
    }
  }
  Graph bad;
  GraphBuilder bb(bad);
  bb.weight("qk", DataType::UINT8, {5, 2, 16}, {"q.weight", {Concat{{"k.weight"}, -2}, Cast{DataType::FLOAT}, BlockQuantize{Part::data, scheme}}});
  test::expect_error([&] { WeightPlan::bind(bad, ckpt); }, {"quantizes to [6, 2, 16]", "'qk'"});
}

// Counts the rows produced of each tensor: a source converted once has each row counted once.
class CountingCheckpoint : public Checkpoint {
 public:
  explicit CountingCheckpoint(const Checkpoint& inner) : inner_(inner) {}
  const TensorInfo* find(const std::string& name) const override { return inner_.find(name); }
  std::vector<std::string> names() const override { return inner_.names(); }
  void produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin, int64_t row_end,
               std::span<uint8_t> out) const override {
    rows[t.name] += row_end - row_begin;
    inner_.produce(t, dst, transpose, row_begin, row_end, out);
  }
  bool streams(const TensorInfo& t) const override { return inner_.streams(t); }
  mutable std::map<std::string, int64_t> rows;

 private:
  const Checkpoint& inner_;
};

// A quantized weight's parts, and a second initializer quantizing the same matrix the same way
// (a tied embedding's GatherBlockQuantized data), share one binding: its source rows are
// converted once for all of them, and each output equals the quantization of the whole matrix.
// Another scheme on the same source is a binding of its own.
TEST(BlockQuantize, WeightPlanConvertsASourceOnceForAllItsParts) {
  test::TempDir dir;
  const int64_t k = 64;
  std::vector<float> q(4 * k), kk(2 * k);
  for (size_t i = 0; i < q.size(); ++i) q[i] = std::cos(0.13f * i) * 2;
  for (size_t i = 0; i < kk.size(); ++i) kk[i] = std::sin(0.29f * i) - 0.3f;
  test::SafetensorsWriter().f32("q.weight", {4, k}, q).f32("k.weight", {2, k}, kk).write(dir.path / "model.safetensors");
  SafetensorsCheckpoint file(dir.str());
  CountingCheckpoint ckpt(file);
  const BlockQuantization scheme{4, 32, false};
  auto ref = [](Part part, BlockQuantization s, bool flat = false) {
    return WeightRef{"q.weight", {Concat{{"k.weight"}, -2}, Cast{DataType::FLOAT}, BlockQuantize{part, s, flat}}};
  };
  Graph g;
  GraphBuilder b(g);
  b.weight("qk.data", DataType::UINT8, quant_shape(Part::data, 6, k, scheme), ref(Part::data, scheme));
  b.weight("qk.scales", DataType::FLOAT, quant_shape(Part::scales, 6, k, scheme), ref(Part::scales, scheme));
  b.weight("qk.zero_points", DataType::UINT8, quant_shape(Part::zero_points, 6, k, scheme), ref(Part::zero_points, scheme));
  b.weight("qk.rows", DataType::UINT8, {6, k * 4 / 8}, ref(Part::data, scheme, true));
  const BlockQuantization q8{8, 32, false};
  b.weight("qk.8bits", DataType::UINT8, quant_shape(Part::data, 6, k, q8), ref(Part::data, q8));
  WeightPlan plan = WeightPlan::bind(g, ckpt);
  ASSERT_EQ(plan.bindings().size(), 2u);
  EXPECT_EQ(plan.num_initializers(), 5u);
  const WeightBinding& wb = plan.bindings()[0];
  std::vector<std::string> names;
  for (const Initializer* o : wb.outputs()) names.push_back(o->value->name);
  EXPECT_EQ(names, (std::vector<std::string>{"qk.data", "qk.scales", "qk.zero_points", "qk.rows"}));
  EXPECT_EQ(plan.bindings()[1].init->value->name, "qk.8bits");

  std::vector<float> stacked(q);
  stacked.insert(stacked.end(), kk.begin(), kk.end());
  const size_t d = 6 * 2 * 16, sc = 6 * 2 * 4, z = 6 * 1;
  std::vector<uint8_t> want_d(d), want_s(sc), want_z(z);
  block_quantize_rows(stacked.data(), 6, k, scheme, DataType::FLOAT, want_d.data(), want_s.data(), want_z.data());
  const std::vector<size_t> row_bytes{d / 6, sc / 6, z / 6, d / 6};
  std::vector<std::vector<uint8_t>> got{std::vector<uint8_t>(d), std::vector<uint8_t>(sc), std::vector<uint8_t>(z),
                                        std::vector<uint8_t>(d)};
  for (auto [r, e] : std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {3, 6}}) {  // rows 0-3 are q's
    std::vector<uint8_t> buffer(static_cast<size_t>(e - r) * (2 * d + sc + z) / 6);
    wb.produce(r, e, buffer);
    size_t at = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const size_t n = static_cast<size_t>(e - r) * row_bytes[i];
      std::copy_n(buffer.begin() + static_cast<std::ptrdiff_t>(at), n, got[i].begin() + static_cast<std::ptrdiff_t>(r * row_bytes[i]));
      at += n;
    }
  }
  EXPECT_EQ(got[0], want_d);
  EXPECT_EQ(got[1], want_s);
  EXPECT_EQ(got[2], want_z);
  EXPECT_EQ(got[3], want_d);
  EXPECT_EQ(ckpt.rows, (std::map<std::string, int64_t>{{"k.weight", 2}, {"q.weight", 4}}));
}

}  // namespace
}  // namespace mobius
