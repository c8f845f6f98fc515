// The speech-to-text task (tasks/speech_to_text.h) on Whisper (archs/whisper.cpp): onnxruntime-genai's
// whisper graph I/O derived from the decoder layers' states, and the package `mobius build` writes
// (genai_config.json, audio_processor_config.json; docs/speech.md).
#include <nlohmann/json.hpp>

#include <set>

#include "archs/archs.h"
#include "driver/build.h"
#include "tasks/speech_to_text.h"
#include "test_util.h"

namespace mobius {
namespace {

namespace fs = std::filesystem;

// d_model 64, decoder heads 2 (head_dim 32; the encoder's 4 must not leak into the cache shapes),
// 128 mel bins, 20 source positions (40 frames)
const nlohmann::json kWhisper = {{"model_type", "whisper"}, {"vocab_size", 50}, {"d_model", 64},
                                 {"encoder_layers", 1}, {"decoder_layers", 3}, {"encoder_attention_heads", 4},
                                 {"decoder_attention_heads", 2}, {"encoder_ffn_dim", 16}, {"decoder_ffn_dim", 8},
                                 {"num_mel_bins", 128}, {"max_source_positions", 20}, {"max_target_positions", 32},
                                 // WhisperConfig's defaults (50256, 50257) are outside this vocabulary
                                 {"pad_token_id", 0}, {"bos_token_id", 1}, {"eos_token_id", 2},
                                 {"decoder_start_token_id", 3}};

TEST(SpeechToText, WhisperGraphsHaveGenaiNames) {
  auto whisper = create_whisper(HfConfig(kWhisper, "config.json"), DataType::FLOAT);
  EXPECT_EQ(whisper->task(), "speech-to-text");
  std::vector<NamedGraph> graphs = whisper->build_graphs();
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_EQ(graphs[0].path.name, "encoder");
  EXPECT_EQ(graphs[1].path.name, "decoder");
  const auto enc_in = test::io_shapes(graphs[0].model.graph.inputs), enc_out = test::io_shapes(graphs[0].model.graph.outputs);
  EXPECT_EQ(enc_in.size(), 1u);
  EXPECT_EQ(enc_in.at("audio_features"), (std::vector<std::string>{"batch_size", "128", "40"}));
  EXPECT_EQ(enc_out.size(), 1u + 3 * 2);
  EXPECT_EQ(enc_out.at("encoder_hidden_states"), (std::vector<std::string>{"batch_size", "20", "64"}));
  EXPECT_EQ(enc_out.at("present_value_cross_2"), (std::vector<std::string>{"batch_size", "2", "20", "32"}));
  const auto in = test::io_shapes(graphs[1].model.graph.inputs), out = test::io_shapes(graphs[1].model.graph.outputs);
  EXPECT_EQ(in.size(), 1u + 3 * 4);
  EXPECT_EQ(out.size(), 1u + 3 * 2);
  EXPECT_EQ(in.at("input_ids"), (std::vector<std::string>{"batch_size", "sequence_length"}));
  EXPECT_EQ(in.at("past_key_self_1"), (std::vector<std::string>{"batch_size", "2", "past_sequence_length", "32"}));
  EXPECT_EQ(in.at("past_value_cross_0"), (std::vector<std::string>{"batch_size", "2", "20", "32"}));
  EXPECT_EQ(out.at("present_value_self_2"),
            (std::vector<std::string>{"batch_size", "2", "total_sequence_length", "32"}));
  EXPECT_EQ(out.at("logits"), (std::vector<std::string>{"batch_size", "sequence_length", "50"}));
  nlohmann::json bad = kWhisper;
  bad["decoder_attention_heads"] = 3;
  test::expect_error([&] { create_whisper(HfConfig(bad, "config.json"), DataType::FLOAT); },
                     {"config.json", "decoder_attention_heads", "must divide d_model"});
}

// `mobius build` of a config.json alone (--no-weights): both graphs, genai_config.json with the
// whisper sections and audio_processor_config.json with the config's mel bins.
TEST(SpeechToText, BuildWritesTheGenaiPackage) {
  test::TempDir root;
  fs::create_directories(root.path / "whisper");
  test::write_file(root.path / "whisper/config.json", kWhisper.dump());
  BuildOptions o;
  o.config_dir = root.str("whisper");
  o.output_dir = root.str("out");
  o.weights = false;
  BuildReport r = build_package(o);
  EXPECT_EQ(r.task, "speech-to-text");
  std::set<std::string> files;  // the default hf layout (package/layout.h)
  for (const auto& e : fs::recursive_directory_iterator(root.path / "out"))
    if (e.is_regular_file()) files.insert(fs::relative(e.path(), root.path / "out").string());
  EXPECT_EQ(files, (std::set<std::string>{"config.json", "onnx/encoder_model.onnx", "onnx/encoder_model.onnx_data",
                                          "onnx/decoder_model_merged.onnx", "onnx/decoder_model_merged.onnx_data",
                                          "genai_config.json", "audio_processor_config.json"}));
  EXPECT_EQ(nlohmann::json::parse(test::read_file(root.path / "out/genai_config.json"))["model"]["encoder"]["filename"],
            "onnx/encoder_model.onnx");
  const auto g = nlohmann::json::parse(test::read_file(root.path / "out/genai_config.json"));
  EXPECT_EQ(g["model"]["type"], "whisper");
  EXPECT_EQ(g["model"]["context_length"], 32);
  EXPECT_EQ(g["model"]["encoder"]["hidden_size"], 64);
  EXPECT_EQ(g["model"]["encoder"]["num_attention_heads"], 4);
  EXPECT_EQ(g["model"]["decoder"]["num_attention_heads"], 2);
  EXPECT_EQ(g["model"]["decoder"]["num_hidden_layers"], 3);
  EXPECT_EQ(g["model"]["decoder"]["head_size"], 32);
  EXPECT_EQ(g["model"]["decoder"]["inputs"]["cross_past_key_names"], "past_key_cross_%d");
  EXPECT_EQ(g["search"]["past_present_share_buffer"], false);
  const auto a = nlohmann::json::parse(test::read_file(root.path / "out/audio_processor_config.json"));
  EXPECT_EQ(a["feature_extraction"]["sequence"][2]["operation"]["attrs"]["n_mel"], 128);
}

}  // namespace
}  // namespace mobius
