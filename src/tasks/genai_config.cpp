#include "tasks/genai_config.h"

#include <filesystem>
#include <algorithm>
#include <cmath>
#include <optional>

#include "package/writer.h"
#include "passes/passes.h"
#include "registry/config_defaults.h"
#include "util/error.h"
#include "util/input_files.h"

namespace fs = std::filesystem;

namespace mobius {
namespace {

int64_t first_int(const HfConfig& c, std::initializer_list<const char*> keys, int64_t fallback) {
  for (const char* k : keys)
    if (c.has(k)) return c.get_int(k);
  return fallback;
}

// A token id field that may be an int or a list of ints (eos lists), or absent; every id in
// [0, vocab_size), else an error naming `file` and the field.
nlohmann::json token_ids(const nlohmann::json& j, const char* key, const std::string& file, int64_t vocab_size) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return nullptr;
  const auto& v = j[key];
  const nlohmann::json ids = v.is_array() ? v : nlohmann::json::array({v});
  for (const auto& id : ids)
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab_size) {
      if (std::string(key) == "pad_token_id" && id.is_number_integer() && id.get<int64_t>() < 0)
        return nullptr;  // -1: "no pad token" in some configs
      throw Error(file + ": field '" + key + "': expected token ids in [0, vocab_size " + std::to_string(vocab_size) +
                  "), got " + (id.is_number_integer() ? std::to_string(id.get<int64_t>()) : id.type_name()));
    }
  if (ids.empty()) return nullptr;
  return ids.size() == 1 ? ids[0] : ids;
}

// The search option `key` of generation_config.json, or `fallback` when absent; of fallback's type
// (an integer or number non-negative and finite), else an error naming `file` and the field.
nlohmann::json search_option(const nlohmann::json& gen, const char* key, const nlohmann::json& fallback,
                             const std::string& file) {
  if (!gen.contains(key) || gen[key].is_null()) return fallback;
  const nlohmann::json& v = gen[key];
  const bool ok = fallback.is_boolean()          ? v.is_boolean()
                  : fallback.is_number_integer() ? v.is_number_integer() && v.get<int64_t>() >= 0
                                                 : v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
  if (!ok)
    throw Error(file + ": field '" + key + "': expected " +
                (fallback.is_boolean() ? "true or false" : fallback.is_number_integer() ? "a non-negative integer"
                                                                                        : "a finite non-negative number"));
  return v;
}

// generation_config.json of `checkpoint_dir` ({} when absent or `checkpoint_dir` is empty) and its path.
std::pair<nlohmann::json, std::string> generation_config(const std::string& checkpoint_dir) {
  const fs::path gen_file = checkpoint_dir.empty() ? fs::path()
                                                     : checkpoint_file(checkpoint_dir, "generation_config.json");
  const nlohmann::json gen = gen_file.empty() || !fs::exists(gen_file) ? nlohmann::json::object()
                                                                       : read_json_file(gen_file.string(), kMaxConfigBytes);
  if (!gen.is_object()) throw Error(gen_file.string() + ": expected a JSON object");
  return {gen, gen_file.string()};
}

// model.bos/eos/pad_token_id: generation_config.json's ids, else config.json's (both checked);
// pad falls back to eos. Null ids are left out.
void set_token_ids(nlohmann::json& m, const HfConfig& config, const nlohmann::json& gen, const std::string& gen_file,
                   int64_t vocab_size) {
  auto pick = [&](const char* key) {
    nlohmann::json from_gen = token_ids(gen, key, gen_file, vocab_size);
    nlohmann::json from_cfg = token_ids(config.json(), key, config.file(), vocab_size);  // checked either way
    return from_gen.is_null() ? from_cfg : from_gen;
  };
  nlohmann::json eos = pick("eos_token_id");
  nlohmann::json bos = pick("bos_token_id");
  nlohmann::json pad = pick("pad_token_id");
  if (pad.is_null()) pad = eos.is_array() ? eos[0] : eos;
  if (!bos.is_null()) m["bos_token_id"] = bos;
  if (!eos.is_null()) m["eos_token_id"] = eos;
  if (!pad.is_null()) m["pad_token_id"] = pad;
}

nlohmann::json session_options(const std::string& ep) {
  nlohmann::json provider = nlohmann::json::array();
  if (ep != "cpu" && ep != "default" && ep != "onnx-standard") provider.push_back({{ep, nlohmann::json::object()}});
  return {{"log_id", "onnxruntime-genai"}, {"provider_options", provider}};
}

}  // namespace

int64_t context_length(const HfConfig& config) {
  int64_t context = first_int(
      config, {"max_position_embeddings", "n_positions", "seq_length", "max_seq_len"}, 4096);
  // Dynamic NTK rope extends the usable context by its factor beyond max_position_embeddings.
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    std::optional<HfConfig> rope = config.sub(key);
    if (rope && rope->string_or("rope_type", rope->string_or("type", "")) == "dynamic") {
      const double extended = static_cast<double>(context) * rope->float_or("factor", 1.0);
      if (extended > static_cast<double>(kMaxPositions))
        rope->fail("factor", "extends the context to " + std::to_string(extended) + " positions, over mobius' limit of " +
                                 std::to_string(kMaxPositions));
      context = static_cast<int64_t>(extended);
    }
  }
  return std::max<int64_t>(context, 1);
}

namespace {

// The file of the graph `role` among `files`; a task that did not build it is a bug.
const std::string& file_of(const std::map<std::string, std::string>& files, const std::string& role) {
  const auto it = files.find(role);
  MOBIUS_ASSERT(it != files.end(), "genai_config: the package has no '" + role + "' graph");
  return it->second;
}

}  // namespace

nlohmann::json genai_config(const CausalLM& model, const HfConfig& config,
                            const std::string& checkpoint_dir, const GenaiOptions& o) {
  const CacheLayout c = model.cache_layout();
  // ONNX Runtime GenAI sizes every value cache like its key cache (DefaultKeyValueCacheBase reads
  // the shapes of the past key inputs), so it cannot feed values of another head size.
  if (c.v_head_dim && c.v_head_dim != c.head_dim)
    throw Error(config.file() + ": onnxruntime-genai cannot run this model: its value cache has head size " +
                std::to_string(c.v_head_dim) + ", its key cache " + std::to_string(c.head_dim) +
                " (genai sizes both like the key); build with --runtime none");
  const auto [gen, gen_file] = generation_config(checkpoint_dir);
  const int64_t context = context_length(config);

  nlohmann::json decoder = {
      {"session_options", session_options(o.ep)},
      {"filename", file_of(o.files, o.graph)},
      {"head_size", c.head_dim},
      {"hidden_size", first_int(config, {"hidden_size", "n_embd", "n_embed", "d_model"}, 0)},
      {"num_attention_heads",
       first_int(config, {"num_attention_heads", "n_head", "num_heads", "n_heads"}, 0)},
      {"num_key_value_heads", c.num_key_value_heads},
      {"num_hidden_layers", c.num_layers},
      {"inputs",
       {{"input_ids", "input_ids"},
        {"attention_mask", "attention_mask"},
        {"past_key_names", "past_key_values.%d.key"},
        {"past_value_names", "past_key_values.%d.value"}}},
      {"outputs",
       {{"logits", "logits"},
        {"present_key_names", "present.%d.key"},
        {"present_value_names", "present.%d.value"}}}};

  if (o.position_ids) decoder["inputs"]["position_ids"] = "position_ids";
  // a hybrid: which layers carry a KV cache and which {conv_state, recurrent_state}, in the names
  // and layer types onnxruntime-genai 0.18 reads (its builder's "full_attention" / "linear_attention")
  const std::vector<LayerStates> states = model.layer_states();
  if (std::any_of(states.begin(), states.end(), is_genai_recurrent)) {
    nlohmann::json types = nlohmann::json::array();
    for (const LayerStates& layer : states) types.push_back(is_genai_recurrent(layer) ? "linear_attention" : "full_attention");
    decoder["layer_types"] = types;
    decoder["inputs"]["past_conv_names"] = "past_key_values.%d.conv_state";
    decoder["inputs"]["past_recurrent_names"] = "past_key_values.%d.recurrent_state";
    decoder["outputs"]["present_conv_names"] = "present.%d.conv_state";
    decoder["outputs"]["present_recurrent_names"] = "present.%d.recurrent_state";
  }
  // LFM2: which layers carry a KV cache and which the {conv_state} window of conv_cache_size
  // positions, in the names and layer types of onnxruntime-genai 0.18's "lfm2" type
  const auto conv = std::find_if(states.begin(), states.end(), is_genai_conv);
  if (conv != states.end()) {
    nlohmann::json types = nlohmann::json::array();
    for (const LayerStates& layer : states) types.push_back(is_genai_conv(layer) ? "conv" : "full_attention");
    decoder["layer_types"] = types;
    decoder["conv_cache_size"] = conv->front().tensors.front().shape.back().value;
    decoder["inputs"]["past_conv_names"] = "past_key_values.%d.conv_state";
    decoder["outputs"]["present_conv_names"] = "present.%d.conv_state";
  }

  auto gen_or = [&](const char* key, nlohmann::json fallback) {
    return search_option(gen, key, fallback, gen_file);
  };
  nlohmann::json search = {
      {"diversity_penalty", 0.0},
      {"do_sample", gen_or("do_sample", false)},
      {"early_stopping", true},
      {"length_penalty", 1.0},
      {"max_length", context},
      {"min_length", 0},
      {"no_repeat_ngram_size", 0},
      {"num_beams", 1},
      {"num_return_sequences", 1},
      {"past_present_share_buffer", o.past_present_share_buffer},
      {"repetition_penalty", gen_or("repetition_penalty", 1.0)},
      {"temperature", gen_or("temperature", 1.0)},
      {"top_k", gen_or("top_k", 50)},  // transformers' GenerationConfig default
      {"top_p", gen_or("top_p", 1.0)}};

  nlohmann::json m = {{"type", o.type},
                      {"context_length", context},
                      {"vocab_size", model.vocab_size()},
                      {"decoder", decoder}};
  set_token_ids(m, config, gen, gen_file, model.vocab_size());
  return {{"model", m}, {"search", search}};
}

nlohmann::json whisper_genai_config(const SpeechToText& model, const HfConfig& config,
                                    const std::string& checkpoint_dir, const std::string& ep,
                                    const std::map<std::string, std::string>& files) {
  const auto [gen, gen_file] = generation_config(checkpoint_dir);
  const std::vector<LayerStates> states = model.decoder_states();
  const LayerState& cross = states.front().back();  // every layer: {self_kv, cross_kv}
  const int64_t context = config.get_int("max_target_positions");  // a class default when left out
  // WhisperConfig's attribute_map: num_attention_heads, num_hidden_layers name the encoder's
  const HfConfig enc = with_attribute_map(config, {{"num_attention_heads", "encoder_attention_heads"},
                                                   {"num_hidden_layers", "encoder_layers"}});
  nlohmann::json encoder = {
      {"session_options", session_options(ep)},
      {"filename", file_of(files, "encoder")},
      {"head_size", cross.head_dim},
      {"hidden_size", model.hidden_size()},
      {"num_attention_heads", enc.get_int("encoder_attention_heads")},
      {"num_hidden_layers", enc.get_int("encoder_layers")},
      {"num_key_value_heads", enc.get_int("encoder_attention_heads")},
      {"inputs", {{"audio_features", "audio_features"}}},
      {"outputs",
       {{"encoder_hidden_states", "encoder_hidden_states"},
        {"cross_present_key_names", "present_key_cross_%d"},
        {"cross_present_value_names", "present_value_cross_%d"}}}};
  nlohmann::json decoder = {
      {"session_options", session_options(ep)},
      {"filename", file_of(files, "decoder")},
      {"head_size", cross.head_dim},
      {"hidden_size", model.hidden_size()},
      {"num_attention_heads", cross.num_heads},
      {"num_key_value_heads", cross.num_heads},
      {"num_hidden_layers", static_cast<int64_t>(states.size())},
      {"inputs",
       {{"input_ids", "input_ids"},
        {"past_key_names", "past_key_self_%d"},
        {"past_value_names", "past_value_self_%d"},
        {"cross_past_key_names", "past_key_cross_%d"},
        {"cross_past_value_names", "past_value_cross_%d"}}},
      {"outputs",
       {{"logits", "logits"},
        {"present_key_names", "present_key_self_%d"},
        {"present_value_names", "present_value_self_%d"}}}};
  nlohmann::json m = {{"type", "whisper"},
                      {"context_length", context},
                      {"vocab_size", model.vocab_size()},
                      {"encoder", encoder},
                      {"decoder", decoder}};
  set_token_ids(m, config, gen, gen_file, model.vocab_size());
  nlohmann::json search = {
      {"diversity_penalty", 0.0}, {"do_sample", false}, {"early_stopping", true}, {"length_penalty", 1.0},
      {"max_length", context}, {"min_length", 0}, {"no_repeat_ngram_size", 0}, {"num_beams", 1},
      {"num_return_sequences", 1}, {"past_present_share_buffer", false}, {"repetition_penalty", 1.0},
      {"temperature", 1.0}, {"top_k", 1}, {"top_p", 1.0}};
  return {{"model", m}, {"search", search}};
}

nlohmann::json whisper_audio_processor_config(int64_t num_mel_bins) {
  // The window values are the ones the 0.18 builder writes under "_comment" (a note, not read).
  const nlohmann::json window = {0.0, 0.0000616908073425293, 0.0002467334270477295, 0.0005550682544708252,
                                 0.000986635684967041, 0.0015413463115692139, 0.0022190213203430176,
                                 0.0030195116996765137, 0.003942638635635376, 0.004988163709640503,
                                 0.006155818700790405, 0.007445335388183594, 0.008856385946273804,
                                 0.010388582944869995, 0.012041628360748291, 0.013815045356750488,
                                 0.01570841670036316, 0.000986635684967041, 0.0005550682544708252,
                                 0.0002467334270477295, 0.0000616908073425293};
  nlohmann::json sequence = nlohmann::json::array();
  sequence.push_back({{"operation", {{"name", "audio_decoder"}, {"type", "AudioDecoder"}}}});
  sequence.push_back({{"operation",
                       {{"name", "STFT"},
                        {"type", "STFTNorm"},
                        {"attrs", {{"n_fft", 400}, {"frame_length", 400}, {"hop_length", 160}, {"_comment", window}}}}}});
  sequence.push_back(
      {{"operation",
        {{"name", "log_mel_spectrogram"},
         {"type", "LogMelSpectrum"},
         {"attrs", {{"chunk_size", 30}, {"hop_length", 160}, {"n_fft", 400}, {"n_mel", num_mel_bins}}}}}});
  return {{"feature_extraction", {{"sequence", sequence}}}};
}

nlohmann::json genai_config_multimodal(const ImageTextToText& model, const HfConfig& config,
                                       const std::string& checkpoint_dir, const GenaiOptions& o) {
  const ImageTextToText::GenaiMultimodal mm = *model.genai_multimodal();
  const std::optional<HfConfig> text = config.sub("text_config");
  // the text part's fields; its model_type (which text_config may leave out) is not read here
  nlohmann::json fields = text ? text->json() : config.json();
  fields["model_type"] = config.get_string("model_type");
  nlohmann::json g = genai_config(model.text(), HfConfig(fields, config.file(), text ? "text_config" : ""),
                                  checkpoint_dir, o);
  nlohmann::json& m = g["model"];
  m["type"] = mm.type;
  for (const auto& [key, id] : mm.token_ids) m[key] = id;
  m["decoder"]["inputs"]["inputs_embeds"] = "inputs_embeds";
  // sizes the image_features and inputs_embeds buffers (wider than the text's with Qwen3-VL's
  // DeepStack levels, archs/qwen2_vl.cpp)
  m["decoder"]["hidden_size"] = model.hidden_size();
  nlohmann::json vision_inputs = nlohmann::json::object();
  for (const GraphInput& in : model.vision_inputs())  // phi4mm's image_attention_mask is its "attention_mask"
    vision_inputs[in.name == "image_attention_mask" ? "attention_mask" : in.name] = in.name;
  m["vision"] = {{"filename", file_of(o.files, "vision")},
                 {"config_filename", "vision_processor.json"},
                 {"inputs", vision_inputs},
                 {"outputs", {{"image_features", "image_features"}}}};
  if (mm.patch_size) {
    m["vision"]["patch_size"] = mm.patch_size;
    m["vision"]["spatial_merge_size"] = mm.spatial_merge_size;
  }
  // phi4mm: speech.filename and speech.config_filename are both set or both empty (its default
  // names a file): a package without a speech graph leaves them empty
  if (mm.type == "phi4mm") m["speech"] = {{"config_filename", ""}};
  if (!model.speech_inputs().empty()) {
    nlohmann::json speech_inputs = nlohmann::json::object();
    for (const GraphInput& in : model.speech_inputs())  // phi4mm's audio_attention_mask is its "attention_mask"
      speech_inputs[in.name == "audio_attention_mask" ? "attention_mask" : in.name] = in.name;
    m["speech"] = {{"filename", file_of(o.files, "speech")},
                   {"config_filename", "speech_processor.json"},
                   {"inputs", speech_inputs},
                   {"outputs", {{"audio_features", "audio_features"}}}};
  }
  m["embedding"] = {{"filename", file_of(o.files, "embedding")},
                    {"inputs", {{"input_ids", "input_ids"}, {"image_features", "image_features"}}},
                    {"outputs", {{"inputs_embeds", "inputs_embeds"}}}};
  if (!model.speech_inputs().empty()) m["embedding"]["inputs"]["audio_features"] = "audio_features";
  return g;
}

namespace {

nlohmann::json processor_op(const char* name, const char* type, nlohmann::json attrs) {
  nlohmann::json o = {{"name", name}, {"type", type}};
  if (!attrs.is_null()) o["attrs"] = std::move(attrs);
  return nlohmann::json{{"operation", o}};
}

// mistral3: onnxruntime-genai's pixtral_image_processor (its test/models/mistral3 fixture):
// decode, RGB, smart resize to multiples of patch_size * merge_size between (patch * merge)^2 and
// 1540^2 pixels (PixtralImageProcessor's longest_edge 1540 for Mistral 3), rescale, CLIP
// normalization, channels first, and PixtralImageSizes (the image_sizes output its
// Mistral3ImageProcessor requires).
nlohmann::json pixtral_processor_config(const ImageTextToText::GenaiMultimodal& m) {
  const int64_t factor = m.patch_size * m.spatial_merge_size;
  nlohmann::json transforms = nlohmann::json::array({
      processor_op("decode_image", "DecodeImage", {{"color_space", "RGB"}}),
      processor_op("convert_to_rgb", "ConvertRGB", nullptr),
      processor_op("resize", "Resize",
                   {{"height", 1540}, {"width", 1540}, {"smart_resize", 1}, {"min_pixels", factor * factor},
                    {"max_pixels", 1540 * 1540}, {"patch_size", m.patch_size}, {"merge_size", m.spatial_merge_size}}),
      processor_op("rescale", "Rescale", {{"rescale_factor", 1.0 / 255.0}}),
      processor_op("normalize", "Normalize",
                   {{"mean", {0.48145466, 0.4578275, 0.40821073}}, {"std", {0.26862954, 0.26130258, 0.27577711}}}),
      processor_op("to_channel_first", "Permute3D", {{"dims", {2, 0, 1}}}),
      processor_op("pixtral_image_sizes", "PixtralImageSizes", nullptr),
  });
  return {{"processor", {{"name", "pixtral_image_processor"}, {"transforms", transforms}}}};
}

// phi4mm: onnxruntime-extensions' phi_4_vision_processor (its test/data/models/phi-4 fixture):
// decode, RGB, Phi4VisionDynamicPreprocess (the HD resize and padding to crops of m.image_size, at
// most dynamic_hd 36 crops: Phi4MultimodalImageProcessor's default), rescale, normalization 0.5,
// Phi4VisionProcessor (global image + crops, image_attention_mask, image_sizes, num_img_tokens).
nlohmann::json phi4_processor_config(const ImageTextToText::GenaiMultimodal& m) {
  // the dynamic preprocess has two outputs (the image, its patch mask): Rescale takes the first
  // (without "inputs" onnxruntime-genai 0.18 crashes), the HD processor both
  nlohmann::json rescale = processor_op("rescale", "Rescale", nullptr);
  rescale["operation"]["inputs"] = {":0"};
  nlohmann::json hd = processor_op("phi4_vision_processor", "Phi4VisionProcessor",
                                   {{"dyhd_base_resolution", m.image_size}, {"interpolation", "CUBIC"}});
  hd["operation"]["inputs"] = {":0", "phi4_vision_dynamic_preprocess:1"};
  nlohmann::json transforms = nlohmann::json::array({
      processor_op("decode_image", "DecodeImage", {{"color_space", "RGB"}}),
      processor_op("phi4_vision_dynamic_preprocess", "Phi4VisionDynamicPreprocess",
                   {{"dynamic_hd", 36}, {"dyhd_base_resolution", m.image_size}}),
      rescale,
      processor_op("normalize", "Normalize", {{"mean", {0.5, 0.5, 0.5}}, {"std", {0.5, 0.5, 0.5}}}),
      hd,
  });
  return {{"processor", {{"name", "phi_4_vision_processor"}, {"transforms", transforms},
                         {"output_aligner", "phi4-vision-aligner"}}}};
}

}  // namespace

nlohmann::json speech_processor_config(const ImageTextToText::GenaiMultimodal& m) {
  MOBIUS_ASSERT(m.type == "phi4mm", "speech_processor_config of " + m.type);
  auto stft = [](nlohmann::json& a, const std::string& k, int64_t n_fft, int64_t frame, int64_t hop) {
    a[k + "/n_fft"] = n_fft;
    a[k + "/frame_length"] = frame;
    a[k + "/hop_length"] = hop;
    a[k + "/win_fn"] = "hamming";
  };
  auto logmel = [](nlohmann::json& a, const std::string& k, int64_t hop) {
    a[k + "/chunk_size"] = 30;
    a[k + "/hop_length"] = hop;
    a[k + "/n_fft"] = 512;
    a[k + "/n_mel"] = 80;
    a[k + "/feature_first"] = 0;
    a[k + "/no_padding"] = 1;
  };
  nlohmann::json attrs = {{"audio_compression_rate", 8}};
  stft(attrs, "stft_normal", 512, 400, 160);
  logmel(attrs, "logmel", 160);
  stft(attrs, "stft_normal_8k", 256, 200, 80);
  logmel(attrs, "logmel_8k", 80);
  nlohmann::json sequence = nlohmann::json::array({
      processor_op("audio_decoder", "AudioDecoderEx", {{"target_sample_rates", {8000, 16000}}}),
      processor_op("phi_4_audio_embed", "Phi4AudioEmbed", attrs),
  });
  return {{"feature_extraction", {{"sequence", sequence}, {"output_aligner", "phi4-audio-aligner"}}}};
}

nlohmann::json processor_config(const ImageTextToText::GenaiMultimodal& m) {
  if (m.type == "mistral3") return pixtral_processor_config(m);
  if (m.type == "phi4mm") return phi4_processor_config(m);
  MOBIUS_ASSERT(m.type == "qwen2_5_vl" || m.type == "qwen3_vl" || m.type == "gemma3", "processor_config of " + m.type);
  const bool qwen3 = m.type == "qwen3_vl";
  auto op = processor_op;
  if (m.type == "gemma3") {
    // Gemma3ImageProcessor: resize to the tower's square (bilinear), rescale 1/255, normalize
    // with IMAGENET_STANDARD_MEAN / STD (0.5), channels first
    nlohmann::json transforms = nlohmann::json::array({
        op("decode_image", "DecodeImage", {{"color_space", "RGB"}}),
        op("resize", "Resize",
           {{"interpolation", "LINEAR"}, {"width", m.image_size}, {"height", m.image_size}, {"keep_aspect_ratio", 0}}),
        op("rescale", "Rescale", nullptr),
        op("normalize", "Normalize", {{"mean", {0.5, 0.5, 0.5}}, {"std", {0.5, 0.5, 0.5}}}),
        op("to_channel_first", "Permute3D", {{"dims", {2, 0, 1}}}),
    });
    return {{"processor", {{"name", "gemma_3_image_processing"}, {"transforms", transforms}}}};
  }
  // Qwen2VLImageProcessor: min_pixels 56 * 56, max_pixels 28 * 28 * 1280 * 8 (its size
  // shortest_edge / longest_edge), OPENAI_CLIP_MEAN / OPENAI_CLIP_STD; Qwen3-VL's processor
  // normalizes with mean = std = 0.5 (onnxruntime-extensions' Normalize flag "qwen3_vl")
  const std::vector<double> mean = qwen3 ? std::vector<double>{0.5, 0.5, 0.5}
                                         : std::vector<double>{0.48145466, 0.4578275, 0.40821073};
  const std::vector<double> std = qwen3 ? std::vector<double>{0.5, 0.5, 0.5}
                                        : std::vector<double>{0.26862954, 0.26130258, 0.27577711};
  nlohmann::json transforms = nlohmann::json::array({
      op("decode_image", "DecodeImage", {{"color_space", "RGB"}}),
      op("convert_to_rgb", "ConvertRGB", nullptr),
      op("resize", "Resize",
         {{"width", 540}, {"height", 360}, {"smart_resize", 1}, {"min_pixels", 3136}, {"max_pixels", 12845056},
          {"patch_size", m.patch_size}, {"merge_size", m.spatial_merge_size}}),
      op("rescale", "Rescale", {{"rescale_factor", 1.0 / 255.0}}),
      op("normalize", "Normalize",
         {{"mean", mean}, {"std", std}, {m.type, 1}}),
      op("patch_image", "PatchImage",
         {{"patch_size", m.patch_size}, {"temporal_patch_size", m.temporal_patch_size}, {"merge_size", m.spatial_merge_size}}),
  });
  return {{"processor", {{"name", "qwen2_5_image_processor"}, {"transforms", transforms}}}};
}

namespace {

// `name` is one of g's inputs (not only a value inside it).
bool has_input(const Graph& g, const char* name) {
  const Value* v = g.find_value(name);
  return v && std::count(g.inputs.begin(), g.inputs.end(), v) > 0;
}

void write_json(const std::string& dir, const char* file, const nlohmann::json& j) {
  write_file_synced((fs::path(dir) / file).string(), j.dump(4) + "\n");
}

}  // namespace

void CausalLM::write_runtime_files(const RuntimeFilesContext& ctx, const std::string& dir) const {
  if (ctx.runtime != "ort-genai") return;
  const Graph& g = ctx.graphs.front().model.graph;
  const GenaiOptions go{.ep = ctx.ep,
                        .past_present_share_buffer = caches_only_in_group_query_attention(g),
                        .position_ids = has_input(g, "position_ids"),
                        .files = ctx.files,
                        .type = ctx.genai_type};
  write_json(dir, "genai_config.json", genai_config(*this, ctx.config, ctx.checkpoint_dir, go));  // GGUF: dir ""
}

void SpeechToText::write_runtime_files(const RuntimeFilesContext& ctx, const std::string& dir) const {
  if (ctx.runtime != "ort-genai" || ctx.genai_type != "whisper") return;  // moonshine: no genai type (docs/speech.md)
  write_json(dir, "audio_processor_config.json", whisper_audio_processor_config(num_mel_bins()));
  write_json(dir, "genai_config.json", whisper_genai_config(*this, ctx.config, ctx.checkpoint_dir, ctx.ep, ctx.files));
}

void ImageTextToText::write_runtime_files(const RuntimeFilesContext& ctx, const std::string& dir) const {
  const std::optional<GenaiMultimodal> mm = genai_multimodal();
  if (ctx.runtime != "ort-genai" || !mm) return;
  const Graph& decoder = ctx.graphs.back().model.graph;  // vision, (speech,) embedding, decoder
  const GenaiOptions go{.ep = ctx.ep,
                        .past_present_share_buffer = caches_only_in_group_query_attention(decoder),
                        .position_ids = has_input(decoder, "position_ids"),
                        .graph = "decoder",
                        .files = ctx.files};
  write_json(dir, "genai_config.json", genai_config_multimodal(*this, ctx.config, ctx.checkpoint_dir, go));
  write_json(dir, "vision_processor.json", processor_config(*mm));
  if (!speech_inputs().empty()) write_json(dir, "speech_processor.json", speech_processor_config(*mm));
}

}  // namespace mobius
