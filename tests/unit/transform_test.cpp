// weights/transform.h: the typed list of weight transforms. append() keeps a list in canonical
// order by rewriting it into an equal one (checked here on the values a binding produces, against
// the transforms applied by hand in their written order), transformed_type() derives the shape
// and dtype a list makes, and the streamer produces every form in any row ranges.
#include <cstring>

#include "builder/builder.h"
#include "test_util.h"
#include "weights/safetensors.h"
#include "weights/transform.h"
#include "weights/weight_plan.h"

namespace mobius {
namespace {

// The canonical order, whatever order the transforms are appended in.
TEST(WeightTransforms, AppendKeepsTheCanonicalOrder) {
  WeightTransforms list;
  append(list, Transpose{});
  append(list, Cast{DataType::FLOAT16});
  append(list, Concat{{"k"}});  // moves ahead of the Cast
  EXPECT_EQ(to_string(list), "transpose, concat(k; axis -1), cast(FLOAT16)");
  // a Transpose moves ahead of the Cast and through the Concat (axis -1 -> -2), cancelling the first
  append(list, Transpose{});
  EXPECT_EQ(to_string(list), "concat(k; axis -2), cast(FLOAT16)");
  append(list, Transpose{});
  EXPECT_EQ(to_string(list), "transpose, concat(k; axis -1), cast(FLOAT16)");
  append(list, BlockQuantize{BlockQuantize::Part::scales, {.bits = 4, .block_size = 32}});
  EXPECT_EQ(to_string(list),
            "transpose, concat(k; axis -1), cast(FLOAT16), block_quantize(scales; 4 bits, block 32, symmetric)");
  EXPECT_THROW(append(list, Transpose{}), InternalError);  // nothing follows a quantization
  WeightTransforms casts{Cast{DataType::FLOAT}};
  EXPECT_THROW(append(casts, Cast{DataType::FLOAT16}), InternalError);
  EXPECT_TRUE(transposes(list));
  ASSERT_NE(concat_of(list), nullptr);
  EXPECT_EQ(cast_of(list)->dtype, DataType::FLOAT16);
  EXPECT_EQ(quantize_of(list)->part, BlockQuantize::Part::scales);
}

struct Fixture {
  test::TempDir dir;
  std::vector<float> q = test::iota_f32(4 * 3, -1.0f, 0.37f), k = test::iota_f32(2 * 3, 5.0f, -0.61f);
  std::unique_ptr<SafetensorsCheckpoint> ckpt;
  Fixture() {
    test::SafetensorsWriter().f32("q", {4, 3}, q).f32("k", {2, 3}, k).write(dir.path / "model.safetensors");
    ckpt = std::make_unique<SafetensorsCheckpoint>(dir.str());
  }
  // The bytes of the one initializer `g` holds, produced in ranges of one row.
  std::vector<float> produce(const Graph& g) const {
    WeightPlan plan = WeightPlan::bind(g, *ckpt);
    EXPECT_EQ(plan.bindings().size(), 1u);
    const WeightBinding& wb = plan.bindings()[0];
    std::vector<float> out(wb.init->nbytes() / 4);
    const size_t row = out.size() / static_cast<size_t>(wb.rows()) * 4;
    for (int64_t r = 0; r < wb.rows(); ++r)
      wb.produce(r, r + 1, {reinterpret_cast<uint8_t*>(out.data()) + r * row, row});
    return out;
  }
};

// By hand: q^T [3, 4] and k^T [3, 2] side by side is [3, 6]; q and k stacked is [6, 3].
std::vector<float> side_by_side_transposed(const Fixture& f) {
  std::vector<float> out;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) out.push_back(f.q[c * 3 + r]);
    for (int c = 0; c < 2; ++c) out.push_back(f.k[c * 3 + r]);
  }
  return out;
}

// [Transpose, Concat -1] and its transpose [Concat -2] (what append makes of a Transpose appended
// after it), produced by the streamer, equal the transforms applied by hand in written order.
TEST(WeightTransforms, RewrittenListsProduceTheSameValues) {
  Fixture f;
  WeightTransforms packed;
  append(packed, Transpose{});
  append(packed, Concat{{"k"}});
  append(packed, Cast{DataType::FLOAT});
  Graph g1;
  GraphBuilder(g1).weight("qk", DataType::FLOAT, {3, 6}, {"q", packed});
  EXPECT_EQ(f.produce(g1), side_by_side_transposed(f));
  WeightTransforms back = packed;
  append(back, Transpose{});  // (q^T | k^T)^T = q over k
  Graph g2;
  GraphBuilder(g2).weight("qk", DataType::FLOAT, {6, 3}, {"q", back});
  std::vector<float> stacked(f.q);
  stacked.insert(stacked.end(), f.k.begin(), f.k.end());
  EXPECT_EQ(f.produce(g2), stacked);
  // and once more: the first form again
  append(back, Transpose{});
  EXPECT_TRUE(back == packed);
}

// The shape and dtype a list makes, and the parts that do not fit it, named.
TEST(WeightTransforms, TransformedTypeAndItsErrors) {
  Fixture f;
  const TensorInfo* q = f.ckpt->find("q");
  const TensorInfo* k = f.ckpt->find("k");
  const TensorType t = transformed_type({q, k}, {Transpose{}, Concat{{"k"}}, Cast{DataType::FLOAT16}}, "qk");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(t.dtype, DataType::FLOAT16);
  const TensorType s = transformed_type({q, k}, {Concat{{"k"}, -2}, Cast{DataType::FLOAT16},
                                                 BlockQuantize{BlockQuantize::Part::scales, {.bits = 4, .block_size = 2}}},
                                        "qk");
  EXPECT_EQ(s.shape, (std::vector<int64_t>{6, 2}));  // [N = 4 + 2, ceil(3 / 2)]
  EXPECT_EQ(s.dtype, DataType::FLOAT16);             // the scales: the dtype quantized from
  // side by side untransposed: q [4, 3] and k [2, 3] differ in the rows
  test::expect_error([&] { transformed_type({q, k}, {Concat{{"k"}}}, "qk"); },
                     {"tensor 'k' has shape [2, 3], which does not fit 'q' [4, 3]", "'qk'"});
  test::expect_error([&] { transformed_type({q}, {Cast{DataType::INT64}}, "w"); },
                     {"tensor 'q' has dtype FLOAT, expected INT64"});
}

}  // namespace
}  // namespace mobius
