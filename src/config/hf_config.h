// HfConfig: a typed, read-only view of a Hugging Face config.json. Field names are HF's.
// Every error names the file and the JSON path, e.g.
//   "ckpt/config.json: field 'num_attention_heads': expected an integer, got string".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mobius {

// Caps on sizes read from an input: far above any released model (the largest have hidden 16384,
// 126 layers, 256k vocabulary, 10M positions, head_dim 512), low enough that every product the
// build forms (vocab x hidden, hidden x intermediate, positions x head_dim) fits in int64.
constexpr int64_t kMaxHiddenSize = int64_t{1} << 17;
// Feed-forward widths: 64 x the hidden cap (tests/cli/test_large_package.py builds a 1.75M-wide MLP
// to pass 2 GiB of weights with a tiny model).
constexpr int64_t kMaxFfnSize = kMaxHiddenSize * 64;
constexpr int64_t kMaxHeads = int64_t{1} << 12;
constexpr int64_t kMaxHeadDim = int64_t{1} << 14;
constexpr int64_t kMaxVocabSize = int64_t{1} << 24;
constexpr int64_t kMaxLayers = int64_t{1} << 10;
constexpr int64_t kMaxPositions = int64_t{1} << 24;
// Image sides in pixels (the largest processors take 4k), kernels, patches, strides, ratios and
// group counts (patch_size 14, spatial_merge_size 2, num_mel_bins 128), and list lengths.
constexpr int64_t kMaxImageSize = int64_t{1} << 16;
constexpr int64_t kMaxSmallSize = int64_t{1} << 12;
constexpr size_t kMaxConfigList = size_t{1} << 14;

// Every getter checks the type and, for the fields HF configs use for sizes, epsilons and RoPE
// (hidden_size, intermediate_size, *_heads, head_dim, vocab_size, num_hidden_layers,
// max_position_embeddings, sliding_window, experts, *_eps, rope_theta, factor,
// partial_rotary_factor, and their GPT-2/-NeoX/Bloom spellings), the range: sizes within 1 (0 for
// optional sizes such as sliding_window) and the caps above, eps in (0, 1], rope_theta and
// scaling factors > 0, partial_rotary_factor in (0, 1]; every float finite, every integer in
// int64. Out of range is an error "file: field 'key': expected a value in [min, max], got v".
// Fields of the vision, audio and seq2seq families have theirs: widths (embed_dim, projection_dim,
// out_hidden_size) the hidden cap, position tables (max_source_positions, num_position_embeddings)
// the positions cap, image_size kMaxImageSize, kernels / patches / ratios (patch_size,
// spatial_merge_size, mlp_ratio, num_mel_bins) kMaxSmallSize, d_kv at least 1. The table is by
// field name at any depth, so vision_config.hidden_size has hidden_size's range. Every integer
// field the table does not name is still within +-2^24 (kMaxPositions): a new type cannot read an
// unbounded integer. Every list in a loaded file has at most kMaxConfigList entries.
class HfConfig {
 public:
  // Reads `path` (a config.json) through util/input_files.h (a regular file, JSON size and nesting
  // limits). Throws mobius::Error if missing or not a JSON object.
  static HfConfig load(const std::string& path);
  HfConfig(nlohmann::json j, std::string file, std::string prefix = "");

  const std::string& file() const { return file_; }
  // The JSON path of this view in its file ("" at the top, "vision_config." for a sub()).
  const std::string& prefix() const { return prefix_; }
  bool has(const std::string& key) const;  // present and not null
  // Whether config.json's architectures names `cls` first (the class that saved the checkpoint:
  // CLIPTextModelWithProjection, ClapTextModelWithProjection).
  bool names_architecture(const std::string& cls) const;

  // Required fields: throw mobius::Error naming file and field if missing or mistyped.
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;
  std::string get_string(const std::string& key) const;
  bool get_bool(const std::string& key) const;

  // Optional fields: `fallback` when missing or null; still throw when mistyped.
  int64_t int_or(const std::string& key, int64_t fallback) const;
  double float_or(const std::string& key, double fallback) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  bool bool_or(const std::string& key, bool fallback) const;
  std::optional<int64_t> opt_int(const std::string& key) const;
  std::optional<double> opt_float(const std::string& key) const;
  std::vector<double> float_list(const std::string& key) const;  // required list of numbers
  // A nested object as its own view (errors then name "parent.child" paths).
  std::optional<HfConfig> sub(const std::string& key) const;

  // Throws mobius::Error "file: field 'key': message".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  const nlohmann::json& json() const { return j_; }

 private:
  const nlohmann::json* find(const std::string& key) const;
  nlohmann::json j_;
  std::string file_;
  std::string prefix_;
};

}  // namespace mobius
