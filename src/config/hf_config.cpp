#include "config/hf_config.h"

#include <cmath>
#include <filesystem>
#include <map>

#include "util/error.h"
#include "util/input_files.h"

namespace mobius {
namespace {

// The range of a field, by its name at any depth (rope_parameters.factor too).
struct Range {
  double min, max;
  bool min_open = false;  // (min, max] instead of [min, max]
};

const Range* field_range(const std::string& key) {
  static const std::map<std::string, Range> table = [] {
    std::map<std::string, Range> t;
    for (const char* k : {"hidden_size", "n_embd", "n_embed", "d_model", "embedding_size", "word_embed_proj_dim"})
      t[k] = {1, double(kMaxHiddenSize)};
    for (const char* k : {"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim", "moe_intermediate_size",
                          "shared_expert_intermediate_size", "d_ff", "encoder_ffn_dim", "decoder_ffn_dim"})
      t[k] = {1, double(kMaxFfnSize)};
    for (const char* k : {"num_attention_heads", "num_key_value_heads", "num_kv_heads", "n_head", "num_heads",
                          "n_heads", "multi_query_group_num", "encoder_attention_heads", "decoder_attention_heads"})
      t[k] = {1, double(kMaxHeads)};
    for (const char* k : {"head_dim", "d_kv", "kv_channels", "v_head_dim", "qk_rope_head_dim", "qk_nope_head_dim",
                          "rotary_dim", "kv_lora_rank", "q_lora_rank"})
      t[k] = {0, double(kMaxHeadDim)};
    t["head_dim"].min = 1;
    t["vocab_size"] = {1, double(kMaxVocabSize)};
    t["type_vocab_size"] = {0, double(kMaxVocabSize)};
    for (const char* k : {"num_hidden_layers", "n_layer", "n_layers", "num_layers", "num_decoder_layers",
                          "encoder_layers", "decoder_layers"})
      t[k] = {1, double(kMaxLayers)};
    for (const char* k : {"depth", "num_blocks"}) t[k] = {0, double(kMaxLayers)};  // vision / audio towers' layers
    for (const char* k : {"relative_attention_num_buckets", "relative_attention_max_distance"})
      t[k] = {1, double(kMaxPositions)};
    for (const char* k : {"max_position_embeddings", "n_positions", "seq_length", "max_seq_len",
                          "original_max_position_embeddings"})
      t[k] = {1, double(kMaxPositions)};
    for (const char* k : {"sliding_window", "window_size"}) t[k] = {0, double(kMaxPositions)};
    for (const char* k : {"num_local_experts", "num_experts", "n_routed_experts", "n_shared_experts",
                          "num_shared_experts", "moe_topk", "moe_num_experts", "moe_num_shared_experts"})
      t[k] = {0, 4096};
    for (const char* k : {"num_experts_per_tok", "moe_k"}) t[k] = {1, 4096};
    for (const char* k : {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon", "norm_eps"})
      t[k] = {0, 1, true};
    for (const char* k : {"rope_theta", "rotary_emb_base", "rope_local_base_freq", "factor"})
      t[k] = {0, 1e300, true};
    for (const char* k : {"partial_rotary_factor", "rotary_pct"}) t[k] = {0, 1, true};
    t["d_kv"].min = 1;  // T5's per-head width: the projections are [heads * d_kv, d_model]
    // Widths the vision, audio and projector towers spell their own way.
    for (const char* k : {"embed_dim", "projection_dim", "projection_size", "out_hidden_size", "pooler_output_size",
                          "feature_projection_input_dim", "input_size", "vision_embed_dim", "text_embed_dim",
                          "nemo_conv_channels", "output_hidden_size"})
      t[k] = {1, double(kMaxHiddenSize)};
    // Lengths of learned or computed position tables and of token sequences.
    for (const char* k : {"max_source_positions", "max_target_positions", "num_position_embeddings",
                          "max_encoder_position_embeddings", "max_decoder_position_embeddings",
                          "left_max_position_embeddings", "right_max_position_embeddings", "relative_max_distance",
                          "max_bucket_distance", "bias_max_distance", "num_patches", "mm_tokens_per_image",
                          "num_buckets", "attention_window"})
      t[k] = {1, double(kMaxPositions)};
    for (const char* k : {"decoder_vocab_size", "src_vocab_size", "tgt_vocab_size"}) t[k] = {1, double(kMaxVocabSize)};
    for (const char* k : {"image_size", "crop_size"}) t[k] = {1, double(kMaxImageSize)};
    // Kernels, patches, strides, ratios and group counts: small integers in every real model.
    for (const char* k : {"patch_size", "spatial_merge_size", "temporal_patch_size", "kernel_size", "conv_kernel_size",
                          "conv_pos_kernel_size", "conv_depthwise_kernel_size", "num_conv_pos_embeddings",
                          "num_conv_pos_embedding_groups", "conv_groups", "mlp_ratio", "squeeze_factor",
                          "time_reduction", "downsample_rate", "depthwise_multiplier", "scale_factor", "ngram",
                          "num_channels", "in_channels", "num_register_tokens", "n_group", "topk_group",
                          "num_mel_bins", "num_ln_in_parallel_attn", "decoder_sparse_step", "encoder_sparse_step",
                          "no_rope_layer_interval", "sliding_window_pattern"})
      t[k] = {0, double(kMaxSmallSize)};
    for (const char* k : {"patch_size", "spatial_merge_size", "temporal_patch_size", "kernel_size", "conv_kernel_size",
                          "conv_pos_kernel_size", "conv_depthwise_kernel_size", "num_conv_pos_embeddings",
                          "num_conv_pos_embedding_groups", "conv_groups", "squeeze_factor", "time_reduction",
                          "downsample_rate", "depthwise_multiplier", "scale_factor", "ngram", "num_channels",
                          "in_channels", "num_mel_bins"})
      t[k].min = 1;  // a divisor or a width
    t["expert_capacity"] = {0, double(kMaxPositions)};
    // Qwen4-Exp's hashed n-gram tables (archs/qwen4_exp.cpp): the first head's prime vocabulary is
    // the first prime from ngram_vocab_size_base (20000000 by default); seed any 32-bit integer
    t["ngram_vocab_size_base"] = {2, double(int64_t{1} << 31)};
    t["seed"] = {-double(int64_t{1} << 31), double(int64_t{1} << 31)};
    t["mlp_ratio"].min_open = true;
    t["mlp_ratio"].min = 0;  // a float in some towers (4.0)
    return t;
  }();
  auto it = table.find(key);
  if (it != table.end()) return &it->second;
  // A count another family spells differently still gets a cap before anything is sized from it.
  static const Range layers{0, double(kMaxLayers)}, heads{0, double(kMaxHeads)};
  if (key.find("layers") != std::string::npos) return &layers;
  if (key.find("heads") != std::string::npos) return &heads;
  return nullptr;
}

// Every other integer field (token ids, counts no table names): within +-2^24, so that a size or
// product formed from it cannot overflow and nothing is sized from a field a new type forgot to
// name.
const Range kDefaultIntRange{-double(kMaxPositions), double(kMaxPositions)};

// Throws unless `v` is in the range of `key` (when it has one; an integer always has one).
void check_range(const HfConfig& c, const std::string& key, double v, bool integer = false) {
  const Range* r = field_range(key);
  if (!r && integer) r = &kDefaultIntRange;
  if (!r) return;
  if (v > r->max || v < r->min || (r->min_open && v == r->min)) {
    char bound[96];
    std::snprintf(bound, sizeof bound, "%s%.17g, %.17g]", r->min_open ? "(" : "[", r->min, r->max);
    char got[40];
    std::snprintf(got, sizeof got, "%.17g", v);
    c.fail(key, std::string("expected a value in ") + bound + ", got " + got +
                    (v > r->max ? " (mobius' limit for this field; larger values describe no real model)" : ""));
  }
}

// Every list in the file (at any depth) within kMaxConfigList entries: a field read as a list
// sizes graph parts per entry (vision_feature_layer, layer_types, conv_dim).
void check_list_lengths(const nlohmann::json& j, const std::string& file, const std::string& path) {
  if (j.is_array() && j.size() > kMaxConfigList)
    throw Error(file + ": field '" + path + "': a list of " + std::to_string(j.size()) +
                " entries, more than mobius' limit of " + std::to_string(kMaxConfigList));
  if (j.is_object())
    for (const auto& [k, v] : j.items()) check_list_lengths(v, file, path + (path.empty() ? "" : ".") + escaped(k));
  else if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) check_list_lengths(j[i], file, path + "[" + std::to_string(i) + "]");
}

}  // namespace

HfConfig HfConfig::load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(path + ": cannot open (is this a Hugging Face checkpoint directory?)");
  nlohmann::json j = read_json_file(path, kMaxConfigBytes);
  if (!j.is_object()) throw Error(path + ": expected a JSON object");
  check_list_lengths(j, path, "");
  return HfConfig(std::move(j), path);
}

HfConfig::HfConfig(nlohmann::json j, std::string file, std::string prefix)
    : j_(std::move(j)), file_(std::move(file)), prefix_(std::move(prefix)) {}

void HfConfig::fail(const std::string& key, const std::string& message) const {
  throw Error(file_ + ": field '" + prefix_ + key + "': " + message);
}

const nlohmann::json* HfConfig::find(const std::string& key) const {
  auto it = j_.find(key);
  if (it == j_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool HfConfig::has(const std::string& key) const { return find(key) != nullptr; }

bool HfConfig::names_architecture(const std::string& cls) const {
  return j_.contains("architectures") && j_["architectures"].is_array() && !j_["architectures"].empty() &&
         j_["architectures"][0] == cls;
}

static std::string type_of(const nlohmann::json& v) { return v.type_name(); }

int64_t HfConfig::get_int(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_number_integer()) fail(key, "expected an integer, got " + type_of(*v));
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    fail(key, "integer out of range");
  check_range(*this, key, static_cast<double>(v->get<int64_t>()), true);
  return v->get<int64_t>();
}

double HfConfig::get_float(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_number()) fail(key, "expected a number, got " + type_of(*v));
  if (!std::isfinite(v->get<double>())) fail(key, "expected a finite number");
  check_range(*this, key, v->get<double>());
  return v->get<double>();
}

std::string HfConfig::get_string(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_string()) fail(key, "expected a string, got " + type_of(*v));
  return v->get<std::string>();
}

bool HfConfig::get_bool(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_boolean()) fail(key, "expected true or false, got " + type_of(*v));
  return v->get<bool>();
}

int64_t HfConfig::int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}
double HfConfig::float_or(const std::string& key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}
std::string HfConfig::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}
bool HfConfig::bool_or(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}
std::optional<int64_t> HfConfig::opt_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_int(key);
}
std::optional<double> HfConfig::opt_float(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_float(key);
}

std::vector<double> HfConfig::float_list(const std::string& key) const {
  const auto* v = find(key);
  if (!v) fail(key, "missing");
  if (!v->is_array()) fail(key, "expected a list of numbers, got " + type_of(*v));
  if (v->size() > kMaxConfigList)
    fail(key, "a list of " + std::to_string(v->size()) + " entries, more than mobius' limit of " +
                  std::to_string(kMaxConfigList));
  std::vector<double> out;
  for (const auto& x : *v) {
    if (!x.is_number()) fail(key, "expected a list of numbers, found " + type_of(x));
    if (!std::isfinite(x.get<double>())) fail(key, "expected a list of finite numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

std::optional<HfConfig> HfConfig::sub(const std::string& key) const {
  const auto* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_object()) fail(key, "expected an object, got " + type_of(*v));
  return HfConfig(*v, file_, prefix_ + key + ".");
}

}  // namespace mobius
