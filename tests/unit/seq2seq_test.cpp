// Multi-graph packages (package/writer.h) and the text2text-generation task
// (tasks/text2text_generation.h): each graph written with its own data file, nothing left behind
// on failure, and the decoder's cache I/O derived from the layers' declared states.
#include <onnx/onnx.pb.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "archs/archs.h"
#include "driver/build.h"
#include "package/writer.h"
#include "passes/passes.h"
#include "tasks/text2text_generation.h"
#include "test_util.h"
#include "weights/safetensors.h"

namespace mobius {
namespace {

namespace fs = std::filesystem;

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// y = x * w, w [4] read from checkpoint tensor `key`.
Model scale_graph(const std::string& key) {
  Model m;
  GraphBuilder b(m.graph);
  Ops op(b);
  Value* x = b.input("x", DataType::FLOAT, {4});
  b.output(op.Mul(x, b.weight(key, DataType::FLOAT, {4}, {key, {Cast{DataType::FLOAT}}})), "y", {4});
  return m;
}

TEST(MultiGraphPackage, EachGraphHasItsOwnDataFile) {
  test::TempDir root;
  const std::vector<float> a = test::iota_f32(4, 1.0f), d = test::iota_f32(4, -3.0f);
  fs::create_directories(root.path / "ckpt");
  test::SafetensorsWriter().f32("a", {4}, a).f32("d", {4}, d).write(root.path / "ckpt/model.safetensors");
  SafetensorsCheckpoint ckpt(root.str("ckpt"));
  Model enc = scale_graph("a"), dec = scale_graph("d");
  WeightPlan pe = WeightPlan::bind(enc.graph, ckpt), pd = WeightPlan::bind(dec.graph, ckpt);
  const fs::path out = root.path / "out";
  write_package(out.string(), {{{"encoder", hf_graph::encoder}, &enc, &pe}, {{"decoder", hf_graph::decoder}, &dec, &pd}}, {});
  EXPECT_EQ(entries(out), (std::set<std::string>{"encoder.onnx", "encoder.onnx.data", "decoder.onnx",
                                                 "decoder.onnx.data"}));
  for (const auto& [name, data] : {std::pair{"encoder", a}, std::pair{"decoder", d}}) {
    onnx::ModelProto p;
    std::ifstream in(out / (std::string(name) + ".onnx"), std::ios::binary);
    ASSERT_TRUE(p.ParseFromIstream(&in));
    ASSERT_EQ(p.graph().initializer_size(), 1);
    std::map<std::string, std::string> kv;
    for (const auto& e : p.graph().initializer(0).external_data()) kv[e.key()] = e.value();
    EXPECT_EQ(kv["location"], std::string(name) + ".onnx.data");
    EXPECT_EQ(test::read_file(out / (std::string(name) + ".onnx.data")).substr(std::stoull(kv["offset"]), 16),
              test::as_bytes(data));
  }
}

TEST(MultiGraphPackage, FailureLeavesNothing) {
  test::TempDir root;
  Model enc = scale_graph("a"), dec = scale_graph("d");
  WriteOptions o;
  o.check = [](const std::string& dir) {
    EXPECT_TRUE(fs::exists(fs::path(dir) / "decoder.onnx.data"));
    throw Error("check failed");
  };
  test::expect_error([&] { write_package(root.str("out"), {{{"encoder", hf_graph::encoder}, &enc, nullptr}, {{"decoder", hf_graph::decoder}, &dec, nullptr}}, o); },
                     {"check failed"});
  EXPECT_TRUE(entries(root.path).empty());
}

std::unique_ptr<Architecture> create(ArchFactory f, const nlohmann::json& config) {
  return f(HfConfig(config, "config.json"), DataType::FLOAT);
}

TEST(Text2TextGeneration, DecoderCachesFollowTheLayerStates) {
  // BART: decoder heads 2 of 64 / 2 = 32 (the encoder's 4 must not leak into the cache shapes)
  auto bart = create(create_bart, {{"vocab_size", 50}, {"d_model", 64}, {"encoder_layers", 1}, {"decoder_layers", 3},
                                   {"encoder_attention_heads", 4}, {"decoder_attention_heads", 2},
                                   {"encoder_ffn_dim", 16}, {"decoder_ffn_dim", 8}, {"max_position_embeddings", 32}});
  EXPECT_EQ(bart->task(), "text2text-generation");
  std::vector<NamedGraph> graphs = bart->build_graphs();
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_EQ(graphs[0].path.name, "encoder");
  EXPECT_EQ(graphs[1].path.name, "decoder");
  const auto enc_in = test::io_shapes(graphs[0].model.graph.inputs), enc_out = test::io_shapes(graphs[0].model.graph.outputs);
  EXPECT_EQ(enc_in.size(), 2u);
  EXPECT_EQ(enc_in.at("attention_mask"), (std::vector<std::string>{"batch_size", "encoder_sequence_length"}));
  EXPECT_EQ(enc_out.at("last_hidden_state"),
            (std::vector<std::string>{"batch_size", "encoder_sequence_length", "64"}));
  const auto in = test::io_shapes(graphs[1].model.graph.inputs), out = test::io_shapes(graphs[1].model.graph.outputs);
  EXPECT_EQ(in.size(), 3u + 3 * 4);
  EXPECT_EQ(out.size(), 1u + 3 * 4);
  EXPECT_EQ(in.at("encoder_hidden_states"),
            (std::vector<std::string>{"batch_size", "encoder_hidden_sequence_length", "64"}));
  EXPECT_EQ(in.at("past_key_values.2.decoder.value"),
            (std::vector<std::string>{"batch_size", "2", "past_decoder_sequence_length", "32"}));
  EXPECT_EQ(in.at("past_key_values.2.encoder.key"),
            (std::vector<std::string>{"batch_size", "2", "past_encoder_sequence_length", "32"}));
  EXPECT_EQ(out.at("present.0.decoder.key"),
            (std::vector<std::string>{"batch_size", "2", "total_decoder_sequence_length", "32"}));
  EXPECT_EQ(out.at("present.1.encoder.value"),
            (std::vector<std::string>{"batch_size", "2", "encoder_sequence_length", "32"}));
  EXPECT_EQ(out.at("logits"), (std::vector<std::string>{"batch_size", "decoder_sequence_length", "50"}));
}

// The decoder graph lowered as GraphLowering::attention (passes/multi_head_attention.cpp): the
// self-attention reads its cache as MultiHeadAttention's past_key / past_value and writes the
// presents; the cross-attention reads the carried cross cache [batch, heads, len, head_dim] as its
// key and value (no past); both take the mask as attention_bias, BART's scale head_dim^-0.5 and the
// decoder's 2 heads (not the encoder's 4).
TEST(Text2TextGeneration, DecoderAttentionLowersToMultiHeadAttention) {
  auto bart = create(create_bart, {{"vocab_size", 50}, {"d_model", 64}, {"encoder_layers", 1}, {"decoder_layers", 1},
                                   {"encoder_attention_heads", 4}, {"decoder_attention_heads", 2},
                                   {"encoder_ffn_dim", 16}, {"decoder_ffn_dim", 8}, {"max_position_embeddings", 32}});
  std::vector<NamedGraph> graphs = bart->build_graphs();
  ASSERT_EQ(graphs[1].lowering, GraphLowering::attention);
  Model& m = graphs[1].model;
  const PassContext ctx{.ep = ExecutionProvider::cpu, .lowering = graphs[1].lowering};
  Pipeline::for_context(ctx).run(m, ctx);
  std::vector<const Node*> mha;
  for (const Node& n : m.graph.nodes) {
    EXPECT_NE(n.op_type, "Attention");
    EXPECT_NE(n.op_type, "GroupQueryAttention");
    if (n.op_type == "MultiHeadAttention") mha.push_back(&n);
  }
  ASSERT_EQ(mha.size(), 2u);
  for (const Node* n : mha) {
    EXPECT_EQ(n->domain, "com.microsoft");
    std::map<std::string, AttributeValue> a;
    for (const Attribute& at : n->attributes) a.emplace(at.name, at.value);
    EXPECT_EQ(std::get<int64_t>(a.at("num_heads")), 2);
    EXPECT_FLOAT_EQ(std::get<float>(a.at("scale")), 1.0f / std::sqrt(32.0f));
    ASSERT_GE(n->inputs.size(), 6u);
    EXPECT_NE(n->inputs[5], nullptr);  // attention_bias
  }
  const bool self_first = mha[0]->inputs.size() == 8;
  const Node& self = *mha[self_first ? 0 : 1];
  const Node& cross = *mha[self_first ? 1 : 0];
  ASSERT_EQ(self.inputs.size(), 8u);
  EXPECT_EQ(self.inputs[6]->name, "past_key_values.0.decoder.key");
  EXPECT_EQ(self.inputs[7]->name, "past_key_values.0.decoder.value");
  ASSERT_EQ(self.outputs.size(), 3u);
  EXPECT_EQ(self.outputs[1]->name, "present.0.decoder.key");
  EXPECT_EQ(cross.inputs.size(), 6u);  // no past: the key and value are the cross cache itself
  EXPECT_EQ(cross.outputs.size(), 1u);
  for (int j : {1, 2}) {  // ... the Concat of the past cross cache and the new projections, present.0.encoder.*
    const bool is_present = std::any_of(m.graph.outputs.begin(), m.graph.outputs.end(),
                                        [&](const Value* o) { return o == cross.inputs[j]; });
    EXPECT_TRUE(is_present) << cross.inputs[j]->name;
  }
}

TEST(Text2TextGeneration, T5ReadsItsConfigClassFields) {
  // T5Config: d_kv is the head size whatever d_model / num_heads is; num_decoder_layers defaults
  // to num_layers
  auto t5 = create(create_t5, {{"vocab_size", 50}, {"d_model", 32}, {"d_kv", 12}, {"d_ff", 16}, {"num_layers", 2},
                               {"num_heads", 3}, {"feed_forward_proj", "gated-gelu"}});
  const auto in = test::io_shapes(t5->build_graphs()[1].model.graph.inputs);
  EXPECT_EQ(in.size(), 3u + 2 * 4);
  EXPECT_EQ(in.at("past_key_values.1.encoder.key"),
            (std::vector<std::string>{"batch_size", "3", "past_encoder_sequence_length", "12"}));
  test::expect_error([&] { create(create_t5, {{"vocab_size", 50}, {"feed_forward_proj", "fancy-gelu"}}); },
                     {"config.json", "feed_forward_proj", "'fancy-gelu'"});
}

// `mobius build` of a config.json alone (--no-weights): the four graph files and config.json; with --ep cpu each graph
// lowered as its task says (GraphLowering::attention): the encoder's self-attention, the decoder's self-attention on
// its cache and its cross-attention on the carried cross cache become MultiHeadAttention, none GroupQueryAttention.
TEST(Text2TextGeneration, BuildWritesTwoGraphsEachLowered) {
  test::TempDir root;
  fs::create_directories(root.path / "t5");
  test::write_file(root.path / "t5/config.json",
                   R"({"model_type": "t5", "vocab_size": 40, "d_model": 16, "d_kv": 4, "d_ff": 8, "num_layers": 1,
                       "num_heads": 2})");
  BuildOptions o;
  o.config_dir = root.str("t5");
  o.output_dir = root.str("out");
  o.weights = false;
  o.ep = "cpu";
  BuildReport r = build_package(o);
  EXPECT_EQ(r.task, "text2text-generation");
  EXPECT_EQ(entries(root.path / "out"), (std::set<std::string>{"config.json", "onnx"}));  // the default hf layout
  EXPECT_EQ(entries(root.path / "out/onnx"),
            (std::set<std::string>{"encoder_model.onnx", "encoder_model.onnx_data", "decoder_model_merged.onnx",
                                   "decoder_model_merged.onnx_data"}));
  std::map<std::string, int> rewrites;
  for (const PassReport& p : r.passes) rewrites[p.pass] = p.rewrites;
  EXPECT_EQ(rewrites["multi_head_attention"], 3);
  EXPECT_FALSE(rewrites.count("group_query_attention"));
  for (const auto& [graph, want] : {std::pair{hf_graph::encoder, 1}, std::pair{hf_graph::decoder, 2}}) {
    onnx::ModelProto p;
    std::ifstream in(root.path / "out" / (std::string(graph) + ".onnx"), std::ios::binary);
    ASSERT_TRUE(p.ParseFromIstream(&in));
    int mha = 0, attention = 0;
    for (const auto& n : p.graph().node()) {
      mha += n.op_type() == "MultiHeadAttention" && n.domain() == "com.microsoft";
      attention += n.op_type() == "Attention";
    }
    EXPECT_EQ(mha, want) << graph;
    EXPECT_EQ(attention, 0) << graph;
  }
}

TEST(Text2TextGeneration, LongInputAttentionsSayWhatIsBuilt) {
  const nlohmann::json bart = {{"vocab_size", 50}, {"d_model", 16}, {"encoder_layers", 2}, {"decoder_layers", 1},
                               {"encoder_attention_heads", 2}, {"decoder_attention_heads", 2},
                               {"encoder_ffn_dim", 8}, {"decoder_ffn_dim", 8}};
  // BigBirdPegasusConfig's default attention_type block_sparse is refused, saying what to set
  test::expect_error([&] { create(create_bigbird_pegasus, bart); },
                     {"config.json", "attention_type", "'block_sparse' is not supported", "original_full"});
  nlohmann::json full = bart;
  full["attention_type"] = "original_full";
  EXPECT_EQ(create(create_bigbird_pegasus, full)->build_graphs().size(), 2u);
  // LEDConfig.attention_window: one even window per encoder layer, or one int for all
  nlohmann::json led = bart;
  led["attention_window"] = {4, 8, 8};
  test::expect_error([&] { create(create_led, led); }, {"attention_window", "one window per layer (2)"});
  led["attention_window"] = 6;
  EXPECT_EQ(create(create_led, led)->build_graphs().size(), 2u);
  led["attention_window"] = 5;
  test::expect_error([&] { create(create_led, led); }, {"attention_window", "even and positive", "got 5"});
  // LongT5: encoder_attention_type "local" or "transient-global" (global_block_size at least 1)
  const nlohmann::json longt5 = {{"vocab_size", 50}, {"d_model", 16}, {"d_kv", 4}, {"d_ff", 8}, {"num_layers", 1},
                                 {"num_heads", 2}, {"local_radius", 3}};
  EXPECT_EQ(create(create_longt5, longt5)->build_graphs().size(), 2u);
  nlohmann::json global = longt5;
  global["encoder_attention_type"] = "transient-global";
  EXPECT_EQ(create(create_longt5, global)->build_graphs().size(), 2u);
  global["global_block_size"] = 0;
  test::expect_error([&] { create(create_longt5, global); }, {"config.json", "global_block_size", "at least 1"});
  global["encoder_attention_type"] = "global";
  test::expect_error([&] { create(create_longt5, global); },
                     {"encoder_attention_type", "'global' is neither \"local\" nor \"transient-global\""});
  // PegasusXConfig: blocks staggered by block_size / 2 need an even block_size
  nlohmann::json pegasus_x = bart;
  pegasus_x["block_size"] = 5;
  test::expect_error([&] { create(create_pegasus_x, pegasus_x); }, {"config.json", "block_size", "must be even"});
  pegasus_x["stagger_local_blocks"] = false;
  EXPECT_EQ(create(create_pegasus_x, pegasus_x)->build_graphs().size(), 2u);
  // NllbMoeConfig: the second-expert policies that draw random numbers at inference are refused
  nlohmann::json nllb = bart;
  nllb["num_experts"] = 4;
  nllb["encoder_sparse_step"] = nllb["decoder_sparse_step"] = 1;
  EXPECT_EQ(create(create_nllb_moe, nllb)->build_graphs().size(), 2u);
  nllb["second_expert_policy"] = "sampling";
  test::expect_error([&] { create(create_nllb_moe, nllb); },
                     {"config.json", "second_expert_policy", "'sampling' draws random numbers", "\"all\""});
  // ProphetNetConfig: pad_token_id 0 only (transformers' cached steps fail with another)
  nlohmann::json prophetnet = {{"vocab_size", 50}, {"hidden_size", 16}, {"num_encoder_layers", 1},
                               {"num_decoder_layers", 1}, {"num_encoder_attention_heads", 2},
                               {"num_decoder_attention_heads", 2}, {"encoder_ffn_dim", 8}, {"decoder_ffn_dim", 8},
                               {"num_buckets", 8}, {"relative_max_distance", 16}};
  EXPECT_EQ(create(create_prophetnet, prophetnet)->build_graphs().size(), 2u);
  prophetnet["pad_token_id"] = 1;
  test::expect_error([&] { create(create_prophetnet, prophetnet); }, {"config.json", "pad_token_id", "must be 0"});
}

}  // namespace
}  // namespace mobius
