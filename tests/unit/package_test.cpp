// package/writer: the files of a package, their contents, and the all-or-nothing rules for the
// output directory (refuse non-empty without force, replace with force, leave nothing on failure).
#include "package/writer.h"

#include <onnx/onnx.pb.h>

#include <set>

#include "builder/ops.h"
#include "test_util.h"
#include "util/float16.h"
#include "weights/convert.h"
#include "weights/safetensors.h"

namespace mobius {
namespace {

namespace fs = std::filesystem;
using test::expect_error;

struct PackageTest : ::testing::Test {
  test::TempDir root;
  fs::path out = root.path / "out";
  Model model;
  const std::vector<float> w_data = test::iota_f32(3 * 5, -1.0f, 0.3f);
  const std::vector<float> b_data = test::iota_f32(5);

  // x [batch, 3] @ w [3, 5] (checkpoint [5, 3], transposed) + b [5]; weights in `dtype`.
  void build(DataType dtype, DataType bias_dtype) {
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* x = b.input("x", dtype, {"batch", 3});
    Value* w = b.weight("w", dtype, {3, 5}, {"w", {Transpose{}, Cast{dtype}}});
    Value* bias = b.weight("b", bias_dtype, {5}, {"b", {Cast{bias_dtype}}});
    b.output(op.Add(op.MatMul(x, w), bias), "y", {"batch", 5});
  }
  SafetensorsCheckpoint checkpoint() {
    fs::create_directories(root.path / "ckpt");
    test::SafetensorsWriter().f32("w", {5, 3}, w_data).f32("b", {5}, b_data).write(root.path / "ckpt/model.safetensors");
    return SafetensorsCheckpoint(root.str("ckpt"));
  }
  std::set<std::string> entries(const fs::path& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
    return out;
  }
  static WriteOptions forced() {
    WriteOptions o;
    o.force = true;
    return o;
  }
  void keep_existing() {
    fs::create_directories(out);
    test::write_file(out / "keep.txt", "precious");
  }
  void expect_existing_untouched() {
    EXPECT_EQ(entries(out), std::set<std::string>{"keep.txt"});
    EXPECT_EQ(test::read_file(out / "keep.txt"), "precious");
  }
  onnx::ModelProto read_model(const std::string& file = "model.onnx") {
    onnx::ModelProto p;
    std::ifstream in(out / file, std::ios::binary);
    EXPECT_TRUE(p.ParseFromIstream(&in));
    return p;
  }
  // (offset, length) of each external initializer.
  std::map<std::string, std::pair<uint64_t, uint64_t>> locations(const onnx::ModelProto& p,
                                                                   const std::string& data_file = "model.onnx.data") {
    std::map<std::string, std::pair<uint64_t, uint64_t>> out;
    for (const auto& t : p.graph().initializer()) {
      EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << t.name();
      std::map<std::string, std::string> kv;
      for (const auto& e : t.external_data()) kv[e.key()] = e.value();
      EXPECT_EQ(kv["location"], data_file);
      out[t.name()] = {std::stoull(kv["offset"]), std::stoull(kv["length"])};
    }
    return out;
  }
};

TEST_F(PackageTest, WritesModelAndConvertedWeights) {
  build(DataType::FLOAT16, DataType::FLOAT);
  SafetensorsCheckpoint c = checkpoint();
  WeightPlan plan = WeightPlan::bind(model.graph, c);
  write_package(out.string(), model, &plan, {});
  EXPECT_EQ(entries(out), (std::set<std::string>{"model.onnx", "model.onnx.data"}));
  EXPECT_EQ(entries(root.path), (std::set<std::string>{"ckpt", "out"}));  // no temp dirs left

  onnx::ModelProto p = read_model();
  EXPECT_EQ(p.graph().output(0).name(), "y");
  auto loc = locations(p);
  ASSERT_EQ(loc.size(), 2u);
  EXPECT_EQ(loc["w"].second, 3u * 5u * 2u);
  EXPECT_EQ(loc["b"].second, 5u * 4u);
  const std::string data = test::read_file(out / "model.onnx.data");
  for (const auto& [name, l] : loc) {
    EXPECT_EQ(l.first % 64, 0u) << name;  // aligned slots
    EXPECT_LE(l.first + l.second, data.size());
  }
  std::vector<uint16_t> w(15);
  std::memcpy(w.data(), data.data() + loc["w"].first, 30);
  for (int o = 0; o < 5; ++o)
    for (int i = 0; i < 3; ++i) EXPECT_EQ(f16_to_f32(w[i * 5 + o]), test::round_f16(w_data[o * 3 + i]));
  EXPECT_EQ(data.substr(loc["b"].first, 20), test::as_bytes(b_data));
}

TEST_F(PackageTest, NoWeightsWritesZeroFilledData) {
  build(DataType::FLOAT, DataType::FLOAT);
  write_package(out.string(), model, nullptr, {});
  auto loc = locations(read_model());
  const std::string data = test::read_file(out / "model.onnx.data");
  uint64_t end = 0;
  for (const auto& [name, l] : loc) end = std::max(end, l.first + l.second);
  EXPECT_EQ(data.size(), end);
  EXPECT_EQ(data, std::string(data.size(), '\0'));
}

TEST_F(PackageTest, RefusesNonEmptyOutputWithoutForce) {
  build(DataType::FLOAT, DataType::FLOAT);
  keep_existing();
  expect_error([&] { write_package(out.string(), model, nullptr, {}); },
               {out.string(), "not empty", "--force"});
  expect_existing_untouched();
  EXPECT_EQ(entries(root.path), std::set<std::string>{"out"});
  fs::remove_all(out);
  fs::create_directories(out);  // an empty directory is fine without force
  write_package(out.string(), model, nullptr, {});
  EXPECT_TRUE(fs::exists(out / "model.onnx"));
}

TEST_F(PackageTest, ForceReplacesOnlyAPreviousPackage) {
  build(DataType::FLOAT, DataType::FLOAT);
  keep_existing();
  expect_error([&] { write_package(out.string(), model, nullptr, forced()); },
               {out.string(), "only a previous mobius package"});
  expect_existing_untouched();
  fs::remove(out / "keep.txt");
  write_package(out.string(), model, nullptr, {});
  test::write_file(out / "tokenizer.json", "{}");  // a package with a copied tokenizer file
  write_package(out.string(), model, nullptr, forced());
  EXPECT_EQ(entries(out), (std::set<std::string>{"model.onnx", "model.onnx.data"}));
  EXPECT_EQ(entries(root.path), std::set<std::string>{"out"});  // the old tree is gone too
}

// The hf layout (package/layout.h): onnx/model.onnx + onnx/model.onnx_data, the location relative
// to the graph's folder, the same bytes as the flat layout's data file.
TEST_F(PackageTest, HfLayoutWritesTheGraphUnderOnnx) {
  build(DataType::FLOAT, DataType::FLOAT);
  SafetensorsCheckpoint c = checkpoint();
  WeightPlan plan = WeightPlan::bind(model.graph, c);
  write_package(out.string(), model, &plan, {});
  const std::string flat_data = test::read_file(out / "model.onnx.data");
  fs::remove_all(out);
  WriteOptions hf;
  hf.layout = PackageLayout::hf;
  write_package(out.string(), model, &plan, hf);
  EXPECT_EQ(entries(out), std::set<std::string>{"onnx"});
  EXPECT_EQ(entries(out / "onnx"), (std::set<std::string>{"model.onnx", "model.onnx_data"}));
  auto loc = locations(read_model("onnx/model.onnx"), "model.onnx_data");
  EXPECT_EQ(loc.size(), 2u);
  EXPECT_EQ(test::read_file(out / "onnx/model.onnx_data"), flat_data);
  EXPECT_EQ(graph_disk_bytes({"model", hf_graph::model}, model, true, PackageLayout::hf),
            fs::file_size(out / "onnx/model.onnx") + fs::file_size(out / "onnx/model.onnx_data"));
}

// --force replaces a previous package of either layout (either into the other), and nothing with
// a foreign file at the top or in onnx/, or an onnx/ that is a link.
TEST_F(PackageTest, ForceRecognizesBothLayouts) {
  build(DataType::FLOAT, DataType::FLOAT);
  WriteOptions hf = forced();
  hf.layout = PackageLayout::hf;
  write_package(out.string(), model, nullptr, {});  // flat
  write_package(out.string(), model, nullptr, hf);  // flat → hf
  EXPECT_EQ(entries(out), std::set<std::string>{"onnx"});
  write_package(out.string(), model, nullptr, hf);  // hf → hf
  write_package(out.string(), model, nullptr, forced());  // hf → flat
  EXPECT_EQ(entries(out), (std::set<std::string>{"model.onnx", "model.onnx.data"}));
  write_package(out.string(), model, nullptr, hf);
  test::write_file(out / "onnx/keep.txt", "precious");  // a foreign file in onnx/
  expect_error([&] { write_package(out.string(), model, nullptr, hf); }, {out.string(), "only a previous mobius package"});
  EXPECT_EQ(test::read_file(out / "onnx/keep.txt"), "precious");
  fs::remove(out / "onnx/keep.txt");
  fs::create_directories(out / "onnx/sub");  // a folder inside onnx/
  expect_error([&] { write_package(out.string(), model, nullptr, hf); }, {out.string(), "only a previous mobius package"});
  fs::remove_all(out);
  fs::create_directories(root.path / "elsewhere");
  test::write_file(root.path / "elsewhere/model.onnx", "x");
  fs::create_directories(out);
  fs::create_directory_symlink(root.path / "elsewhere", out / "onnx");  // onnx/ a link
  expect_error([&] { write_package(out.string(), model, nullptr, hf); }, {out.string(), "only a previous mobius package"});
  EXPECT_EQ(test::read_file(root.path / "elsewhere/model.onnx"), "x");
}

// --force knows a previous package by what its graphs are, not by their names: a graph file mobius
// wrote (its producer), with its data, in any folder down to two levels (a variant, a pipeline's
// component folders); a .onnx file another tool wrote, or an empty folder, is not one.
TEST_F(PackageTest, ForceKnowsMobiusGraphsByTheirProducer) {
  build(DataType::FLOAT, DataType::FLOAT);
  WriteOptions o = forced();
  o.layout = PackageLayout::hf;
  const PackageGraph unet{{"unet", "unet/model"}, &model, nullptr};
  const PackageGraph vae{{"vae_decoder", "vae_decoder/model"}, &model, nullptr};
  write_package(out.string(), {unet, vae}, o);
  EXPECT_EQ(entries(out), (std::set<std::string>{"unet", "vae_decoder"}));
  EXPECT_EQ(entries(out / "unet"), (std::set<std::string>{"model.onnx", "model.onnx_data"}));
  // component folders are a package's only when its manifest names them (driver/pipeline.h)
  expect_error([&] { write_package(out.string(), {unet, vae}, o); }, {out.string(), "only a previous mobius package"});
  o.extra_files = [](const std::string& dir) {
    test::write_file(fs::path(dir) / "mobius_manifest.json",
                     R"({"components": {"unet": {"built": ["unet"]}, "vae": {"built": ["vae_decoder"]}}})");
  };
  fs::remove_all(out);
  write_package(out.string(), {unet, vae}, o);
  write_package(out.string(), {unet, vae}, o);  // named by its manifest: a previous package
  fs::create_directories(out / "backup");  // a user's copy of a graph mobius wrote, in a folder of their own
  fs::copy_file(out / "unet/model.onnx", out / "backup/model.onnx");
  expect_error([&] { write_package(out.string(), {unet}, o); }, {out.string(), "only a previous mobius package"});
  fs::remove_all(out / "backup");
  fs::copy_file(out / "unet/model.onnx", out / "unet/model_edited.onnx");  // saved under a name mobius does not write
  expect_error([&] { write_package(out.string(), {unet}, o); }, {out.string(), "only a previous mobius package"});
  fs::remove(out / "unet/model_edited.onnx");
  fs::copy_file(out / "unet/model.onnx", out / "unet/model_q4.onnx");  // a variant's name is one
  write_package(out.string(), {unet, vae}, o);
  test::write_file(out / "unet/other.onnx", std::string("\x08\x07\x12\x05torch", 9));  // another producer
  expect_error([&] { write_package(out.string(), {unet}, o); }, {out.string(), "only a previous mobius package"});
  EXPECT_TRUE(fs::exists(out / "unet/other.onnx"));
  fs::remove(out / "unet/other.onnx");
  fs::create_directories(out / "empty");
  expect_error([&] { write_package(out.string(), {unet}, o); }, {out.string(), "only a previous mobius package"});
  fs::remove(out / "empty");
  test::write_file(out / "unet/stray.onnx_data", "x");  // data without its graph
  expect_error([&] { write_package(out.string(), {unet}, o); }, {out.string(), "only a previous mobius package"});
}

// WriteOptions::add (--variant): the graphs go into a previous package beside its files, each a
// new file or replaced with force; an absent directory gets the whole package.
TEST_F(PackageTest, AddPutsAVariantBesideThePackage) {
  build(DataType::FLOAT, DataType::FLOAT);
  SafetensorsCheckpoint c = checkpoint();
  WeightPlan plan = WeightPlan::bind(model.graph, c);
  WriteOptions o;
  o.layout = PackageLayout::hf;
  o.add = true;
  o.extra_files = [](const std::string& dir) { test::write_file(fs::path(dir) / "config.json", "{}"); };
  const GraphPath q4 = with_suffix({"model", hf_graph::model}, "_q4");
  EXPECT_EQ(graph_file(q4, PackageLayout::hf), "onnx/model_q4.onnx");
  EXPECT_EQ(graph_data_path(q4, PackageLayout::flat), "model_q4.onnx.data");
  write_package(out.string(), {{GraphPath{"model", hf_graph::model}, &model, &plan}}, o);  // absent: all of it
  EXPECT_EQ(entries(out), (std::set<std::string>{"config.json", "onnx"}));
  test::write_file(out / "config.json", "{\"kept\": 1}");
  write_package(out.string(), {{q4, &model, &plan}}, o);
  EXPECT_EQ(entries(out / "onnx"),
            (std::set<std::string>{"model.onnx", "model.onnx_data", "model_q4.onnx", "model_q4.onnx_data"}));
  EXPECT_EQ(test::read_file(out / "config.json"), "{\"kept\": 1}");  // the package's other files stay
  EXPECT_EQ(test::read_file(out / "onnx/model_q4.onnx_data"), test::read_file(out / "onnx/model.onnx_data"));
  expect_error([&] { write_package(out.string(), {{q4, &model, &plan}}, o); },
               {(out / "onnx/model_q4.onnx").string(), "already holds this variant", "--force"});
  o.force = true;
  write_package(out.string(), {{q4, &model, &plan}}, o);
  test::write_file(out / "notes.txt", "mine");
  expect_error([&] { write_package(out.string(), {{q4, &model, &plan}}, o); }, {out.string(), "only a previous mobius package"});
  EXPECT_EQ(test::read_file(out / "notes.txt"), "mine");
  EXPECT_EQ(entries(root.path), (std::set<std::string>{"ckpt", "out"}));  // no temporary directory left
}

TEST_F(PackageTest, RefusesAnOutputThatIsContainsOrIsInsideAnInput) {
  build(DataType::FLOAT, DataType::FLOAT);
  const std::string ckpt = root.str("ckpt");
  fs::create_directories(ckpt);
  test::write_file(fs::path(ckpt) / "config.json", "{}");
  WriteOptions o = forced();
  o.inputs = {ckpt};
  expect_error([&] { write_package(ckpt, model, nullptr, o); }, {ckpt, "is the input"});
  expect_error([&] { write_package(root.str(""), model, nullptr, o); }, {"contains the input"});
  expect_error([&] { write_package(ckpt + "/onnx", model, nullptr, o); }, {"inside the input"});
  EXPECT_EQ(entries(ckpt), std::set<std::string>{"config.json"});
  EXPECT_EQ(entries(root.path), std::set<std::string>{"ckpt"});
}

TEST_F(PackageTest, ExtraFilesGoIntoThePackageAtomically) {
  build(DataType::FLOAT, DataType::FLOAT);
  WriteOptions o;
  o.extra_files = [](const std::string& dir) { test::write_file(fs::path(dir) / "genai_config.json", "{}"); };
  write_package(out.string() + "/", model, nullptr, o);  // a trailing slash names the same directory
  EXPECT_EQ(entries(out), (std::set<std::string>{"genai_config.json", "model.onnx", "model.onnx.data"}));
  EXPECT_EQ(entries(root.path), std::set<std::string>{"out"});

  fs::remove_all(out);
  o.extra_files = [](const std::string& dir) { throw Error(dir + "/tokenizer.json: cannot copy"); };
  expect_error([&] { write_package(out.string(), model, nullptr, o); }, {"tokenizer.json: cannot copy"});
  EXPECT_TRUE(entries(root.path).empty());
}

// Tiny chunks: many more chunks than workers and buffer slots, transposed and plain tensors split
// mid-tensor; the data file equals each tensor converted whole.
TEST_F(PackageTest, ChunkedWriteEqualsWholeTensors) {
  GraphBuilder b(model.graph);
  Ops op(b);
  Value* x = b.input("x", DataType::BFLOAT16, {"batch", 30});
  Value* w = b.weight("w", DataType::BFLOAT16, {30, 40}, {"w", {Transpose{}, Cast{DataType::BFLOAT16}}});
  Value* e = b.weight("e", DataType::BFLOAT16, {40, 30}, {"e", {Cast{DataType::BFLOAT16}}});
  b.output(op.MatMul(op.MatMul(x, w), e), "y", {"batch", 30});
  const std::vector<float> wd = test::iota_f32(40 * 30, -3.0f, 0.0071f), ed = test::iota_f32(40 * 30, 2.0f, -0.013f);
  fs::create_directories(root.path / "ckpt");
  test::SafetensorsWriter().f32("w", {40, 30}, wd).f32("e", {40, 30}, ed).write(root.path / "ckpt/model.safetensors");
  SafetensorsCheckpoint c(root.str("ckpt"));
  WeightPlan plan = WeightPlan::bind(model.graph, c);
  WriteOptions o;
  o.chunk_bytes = 3 * 60 + 1;  // three rows of either tensor
  write_package(out.string(), model, &plan, o);
  auto loc = locations(read_model());
  const std::string data = test::read_file(out / "model.onnx.data");
  for (const WeightBinding& wb : plan.bindings()) {
    std::vector<uint8_t> want(1200 * 2);
    convert_tensor(static_cast<const TensorView&>(*wb.source), DataType::BFLOAT16, transposes(wb.init->weight->transforms), want);
    const auto& [offset, length] = loc[wb.init->value->name];
    ASSERT_EQ(length, want.size());
    EXPECT_EQ(data.substr(offset, length), std::string(want.begin(), want.end())) << wb.init->value->name;
  }
}

// Tiles (WriteOptions::tiled_above): a transposed weight and a packed one (a Concat along the last
// axis, its tiles crossing the parts' boundary), bf16 sources of 2100 columns (two bands of output
// rows: 2048 = a page of bf16, and 52) and tiles of 6 columns; the data file equals each tensor
// converted whole, as the untiled write of the same plan.
TEST_F(PackageTest, TiledWriteEqualsWholeTensors) {
  GraphBuilder b(model.graph);
  Ops op(b);
  constexpr int64_t kIn = 2100;
  Value* x = b.input("x", DataType::FLOAT, {"batch", kIn});
  Value* w = b.weight("w", DataType::FLOAT, {kIn, 10}, {"w", {Transpose{}, Cast{DataType::FLOAT}}});
  Value* p = b.weight("p", DataType::FLOAT16, {kIn, 12}, {"p", {Transpose{}, Concat{{"q"}}, Cast{DataType::FLOAT16}}});
  b.output(op.MatMul(x, w), "y", {"batch", 10});
  b.output(op.MatMul(op.Cast(x, {.to = DataType::FLOAT16}), p), "z", {"batch", 12});
  const std::vector<float> wd = test::iota_f32(10 * kIn, -3.0f, 0.0011f), pd = test::iota_f32(7 * kIn, 2.0f, -0.0013f),
                           qd = test::iota_f32(5 * kIn, 0.5f, 0.0007f);
  fs::create_directories(root.path / "ckpt");
  test::SafetensorsWriter().bf16("w", {10, kIn}, wd).bf16("p", {7, kIn}, pd).bf16("q", {5, kIn}, qd)
      .write(root.path / "ckpt/model.safetensors");
  SafetensorsCheckpoint c(root.str("ckpt"));
  WeightPlan plan = WeightPlan::bind(model.graph, c);
  for (const WeightBinding& wb : plan.bindings()) EXPECT_TRUE(wb.tiles()) << wb.init->value->name;
  EXPECT_EQ(tile_shape(kIn, 12, 2, 2, 2048 * 2 * 3), (TileShape{2048, 6}));
  WriteOptions o;
  o.chunk_bytes = 2048 * 2 * 3;
  o.tiled_above = 0;
  write_package(out.string(), model, &plan, o);
  const std::string tiled = test::read_file(out / "model.onnx.data");
  o.tiled_above = UINT64_MAX;
  o.force = true;
  write_package(out.string(), model, &plan, o);
  EXPECT_EQ(tiled, test::read_file(out / "model.onnx.data"));
  auto loc = locations(read_model());
  std::vector<uint8_t> want(kIn * 10 * 4);
  convert_tensor(static_cast<const TensorView&>(*c.find("w")), DataType::FLOAT, true, want);
  const auto& [offset, length] = loc["w"];
  ASSERT_EQ(length, want.size());
  EXPECT_EQ(tiled.substr(offset, length), std::string(want.begin(), want.end()));
}

// A constant of kExternalConstantBytes or more (a cos/sin cache of a long context) goes into the
// data file in graph order with the weights, with and without them; a smaller one stays inline.
TEST_F(PackageTest, LargeConstantsAreExternal) {
  GraphBuilder b(model.graph);
  Ops op(b);
  constexpr int64_t kBig = kExternalConstantBytes / 4;  // float32 elements
  Value* x = b.input("x", DataType::FLOAT, {"batch", kBig});
  const std::vector<float> big = test::iota_f32(kBig, 0.5f, 0.25f);
  Value* w = b.weight("w", DataType::FLOAT, {kBig}, {"w", {Cast{DataType::FLOAT}}});
  Value* y = op.Add(op.Mul(x, b.constant_f32(big, {kBig})), w);
  b.output(op.Add(y, b.constant_f32({1.0f}, {1})), "y", {"batch", kBig});
  fs::create_directories(root.path / "ckpt");
  test::SafetensorsWriter().f32("w", {kBig}, test::iota_f32(kBig, -1.0f, 0.125f)).write(root.path / "ckpt/model.safetensors");
  SafetensorsCheckpoint c(root.str("ckpt"));
  WeightPlan plan = WeightPlan::bind(model.graph, c);
  for (const WeightPlan* p : std::vector<const WeightPlan*>{&plan, nullptr}) {
    write_package(out.string(), model, p, forced());
    const onnx::ModelProto proto = read_model();
    const std::string data = test::read_file(out / "model.onnx.data");
    EXPECT_EQ(data.size(), external_data_bytes(model.graph));
    int inline_constants = 0;
    for (const auto& t : proto.graph().initializer()) {
      if (t.data_location() != onnx::TensorProto::EXTERNAL) {
        EXPECT_LT(t.raw_data().size(), kExternalConstantBytes) << t.name();
        ++inline_constants;
        continue;
      }
      std::map<std::string, std::string> kv;
      for (const auto& e : t.external_data()) kv[e.key()] = e.value();
      const uint64_t offset = std::stoull(kv["offset"]), length = std::stoull(kv["length"]);
      ASSERT_EQ(length, kExternalConstantBytes) << t.name();
      if (t.name() != "w") EXPECT_EQ(data.substr(offset, length), test::as_bytes(big)) << t.name();
      else if (p) EXPECT_EQ(data.substr(offset, length), test::as_bytes(test::iota_f32(kBig, -1.0f, 0.125f)));
    }
    EXPECT_EQ(inline_constants, 1);
  }
}

// A DOUBLE initializer binds to a float tensor but the conversion to DOUBLE throws mid-write.
TEST_F(PackageTest, FailingWeightLeavesNothingBehind) {
  build(DataType::FLOAT, DataType::DOUBLE);
  SafetensorsCheckpoint c = checkpoint();
  WeightPlan plan = WeightPlan::bind(model.graph, c);
  const std::string where = "while writing b from " + root.str("ckpt/model.safetensors");
  expect_error([&] { write_package(out.string(), model, &plan, {}); }, {where, "cannot convert FLOAT to DOUBLE"});
  EXPECT_EQ(entries(root.path), std::set<std::string>{"ckpt"});

  write_package(out.string(), model, nullptr, {});  // with --force a previous package stays as it was
  const std::string before = test::read_file(out / "model.onnx");
  expect_error([&] { write_package(out.string(), model, &plan, forced()); }, {where});
  EXPECT_EQ(test::read_file(out / "model.onnx"), before);
  EXPECT_EQ(entries(root.path), (std::set<std::string>{"ckpt", "out"}));
}

}  // namespace
}  // namespace mobius
