// UltraBERT (transformers/models/ultrabert/modeling_ultrabert.py, configuration_ultrabert.py;
// UltrabertModel and its heads): EuroBERT's bidirectional Llama layers (archs/eurobert.cpp,
// archs/bidirectional_decoder.h) with a type per layer: a "full_attention" layer sees every token
// of attention_mask, a "sliding_attention" layer the tokens with |i - j| <= sliding_window
// (create_bidirectional_sliding_window_mask), each type its own RoPE (ModernBertRotaryEmbedding:
// rope_parameters keyed by layer type).
// UltrabertConfig.__post_init__ as it reads config.json:
//   attention_windows (the released checkpoints): sliding_window = its first non-zero entry, and
//     without layer_types a layer is sliding where its window is non-zero
//   layer_types, else "sliding_attention" unless (i + 1) % 3 == 0
//   rope_parameters, else a rope_theta list (one theta per layer, zipped with layer_types: the last
//     layer of a type gives its theta), else theta 10000 (sliding) and 2560000 (full); a single
//     rope_theta number is not read (the class-default table fills one in; transformers cannot zip it)
// Heads (no multiple choice), keys as saved (conversion_mapping.py: the encoder under "ultrabert"
// for the class's "model", head.decoder as "cls"):
//   fill-mask            head.{linear1 (to prediction_head_size), linear2} (no biases) with
//                        gelu_pytorch_tanh after each, cls (head.decoder: no bias; tied to
//                        embed_tokens only with tie_word_embeddings, false by default)
//   text-classification  classifier over the first token ("cls") or the mean over the mask
//                        ("mean"), classifier_pooling
//   token-classification classifier;  question-answering qa_outputs
#include <map>

#include "archs/archs.h"
#include "archs/bidirectional_decoder.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "blocks/spec_check.h"

namespace mobius {

namespace {

// The RoPE of each layer type as UltrabertConfig.__post_init__ makes rope_parameters (see above).
void read_ultrabert_rope(const HfConfig& c, DecoderSpec& s) {
  const int64_t head_dim = s.attention.head_dim;
  std::map<std::string, double> thetas = {{"sliding_attention", 10000.0}, {"full_attention", 2560000.0}};
  std::map<std::string, std::optional<HfConfig>> params;
  if (c.sub("rope_parameters")) {
    const auto [full, sliding] = read_layer_type_rope_params(c);
    for (const auto& [key, value] : c.json()["rope_parameters"].items())
      if (key != "full_attention" && key != "sliding_attention")
        c.fail("rope_parameters", "its keys are the layer types full_attention and sliding_attention, not '" + key + "'");
    params = {{"full_attention", full}, {"sliding_attention", sliding}};
    for (const std::string& type : s.layer_types)
      if (!params.at(type)) c.fail("rope_parameters", "has no entry for the layer type " + type);
  } else if (c.has("rope_theta") && c.json()["rope_theta"].is_array()) {  // one per layer, zipped with layer_types
    const std::vector<double> list = c.float_list("rope_theta");
    for (size_t i = 0; i < list.size() && i < s.layer_types.size(); ++i) thetas[s.layer_types[i]] = list[i];
  }
  auto rope = [&](const std::string& type) {
    return RopeConfig::from_params(c, params.count(type) ? params.at(type) : std::nullopt, head_dim,
                                   {.rope_theta = thetas.at(type)});
  };
  s.rope = rope("full_attention");
  s.layer_type_rope["sliding_attention"] = rope("sliding_attention");
}

}  // namespace

std::unique_ptr<Architecture> create_ultrabert(const HfConfig& c, DataType dtype) {
  // llama_spec without the RoPE fields: they are keyed by layer type here
  nlohmann::json sizes = c.json();
  for (const char* key : {"rope_theta", "rope_parameters", "rope_scaling"}) sizes.erase(key);
  DecoderSpec s = llama_spec(HfConfig(sizes, c.file()), dtype);

  int64_t window = c.int_or("sliding_window", 128);
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    fallback.push_back((i + 1) % 3 ? "sliding_attention" : "full_attention");
  if (c.has("attention_windows")) {
    const nlohmann::json& windows = c.json()["attention_windows"];
    if (!windows.is_array() || static_cast<int64_t>(windows.size()) != s.num_hidden_layers)
      c.fail("attention_windows", "expected a list of num_hidden_layers windows");
    bool first = true;
    for (size_t i = 0; i < windows.size(); ++i) {
      if (!windows[i].is_number_integer()) c.fail("attention_windows", "expected integers");
      const int64_t w = windows[i].get<int64_t>();
      if (w != 0 && first) window = w, first = false;
      fallback[i] = w != 0 ? "sliding_attention" : "full_attention";
    }
  }
  if (window < 0 || window > kMaxPositions) c.fail("sliding_window", "must be within 0.." + std::to_string(kMaxPositions));
  s.layer_types = read_layer_types(c, s.num_hidden_layers, fallback);
  s.sliding_window = window;
  read_ultrabert_rope(c, s);
  for (const RopeConfig* r : {&s.rope, &s.layer_type_rope.at("sliding_attention")})
    if (r->rotary_dim() < 2 || r->rotary_dim() % 2) c.fail("num_attention_heads", "the rotated head size must be even");

  const std::string pooling = c.string_or("classifier_pooling", "cls");
  if (pooling != "cls" && pooling != "mean") c.fail("classifier_pooling", "unsupported '" + pooling + "' (cls, mean)");
  const int64_t width = c.int_or("prediction_head_size", 768);
  if (width <= 0 || width > kMaxHiddenSize) c.fail("prediction_head_size", "expected a positive width");
  TextHeadLayout heads{.base_model_prefix = "ultrabert", .base_model_class = "UltrabertModel",
                       .masked_lm = {.dense = "head.linear1", .act = "gelu_pytorch_tanh", .decoder = "cls",
                                     .width = width, .dense_bias = false, .decoder_bias = false,
                                     .project = "head.linear2"},
                       .sequence_classification = {.out = "classifier", .pooling = pooling == "mean" ? "mean" : ""},
                       .missing = {"multiple-choice"}};
  return std::make_unique<BidirectionalDecoder>(s, window, std::move(heads));
}

}  // namespace mobius
