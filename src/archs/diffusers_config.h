// Reading a diffusers config.json (a component's, keyed by _class_name): the list fields and the
// ranges of the fields diffusers' model classes take as sizes. Every error names the file and field
// (HfConfig::fail).
#pragma once

#include <string>
#include <vector>

#include "config/hf_config.h"

namespace mobius {

// Integer field `key` within [lo, hi]; throws "file: field 'key': expected a value in [lo, hi], got v".
int64_t diffusers_int(const HfConfig& c, const std::string& key, int64_t lo, int64_t hi);
// A list of integers each within [lo, hi], with at least one entry (block_out_channels).
std::vector<int64_t> diffusers_int_list(const HfConfig& c, const std::string& key, int64_t lo, int64_t hi);
// A field diffusers takes as one integer for every block or as a list of one per block
// (layers_per_block, attention_head_dim, transformer_layers_per_block): `n` values, each in [lo, hi];
// a list of another length is refused.
std::vector<int64_t> diffusers_per_block(const HfConfig& c, const std::string& key, size_t n, int64_t lo, int64_t hi);
// Refuses a field set to anything but its default: `key` absent or null (default null), or equal
// to `expected` (a bool, number or string). Throws "file: field 'key': <value> is not supported
// (mobius builds <what>)".
void diffusers_require(const HfConfig& c, const std::string& key, const nlohmann::json& expected, const std::string& what);
// A list of booleans (temperal_downsample); an empty list is allowed.
std::vector<bool> diffusers_bool_list(const HfConfig& c, const std::string& key);
// A list of strings with at least one entry (down_block_types).
std::vector<std::string> diffusers_string_list(const HfConfig& c, const std::string& key);

// The sizes of a diffusers VAE config that AutoencoderKL and AutoencoderKLCogVideoX read alike.
struct VaeSizes {
  int64_t in_channels, out_channels, latent_channels, layers_per_block;
  int64_t groups;                 // norm_num_groups
  std::vector<int64_t> channels;  // block_out_channels, each a multiple of groups
};
// in_channels, out_channels, latent_channels, layers_per_block, norm_num_groups within their caps,
// block_out_channels, and down_block_types / up_block_types with one entry per block, each the one
// class `down_block` / `up_block` mobius builds. Throws naming the field.
VaeSizes read_vae_sizes(const HfConfig& c, const std::string& down_block, const std::string& up_block);

// The transformers activation of diffusers' get_activation name `key` (act_fn: silu, swish, gelu,
// relu); throws naming the field for another.
std::string diffusers_activation(const HfConfig& c, const std::string& key);

}  // namespace mobius
