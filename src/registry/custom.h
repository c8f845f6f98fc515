// Custom model types (the seeds' "register-only" and "config-only" levels): a model_type that is
// not registered, mapped onto a registered architecture with config-field renames and
// checkpoint-key renames. Registered from Python (mobius_cpp.register) or from a JSON file
// (`mobius build --register FILE`, docs/python.md "Custom registration"):
//   {"model_type": "my_llama", "base": "llama",
//    "config_renames": {"d_model": "hidden_size", "n_layers": "num_hidden_layers"},
//    "key_renames": [["^transformer\\.h\\.", "model.layers."], ["\\.attn\\.wq\\.", ".self_attn.q_proj."]]}
// (or a JSON array of such objects). A build of a config.json whose model_type is a custom one
// reads it with each config_renames field renamed (their name -> the base's name) and model_type
// set to `base`, and reads the checkpoint with every tensor name rewritten by key_renames: each
// [pattern, replacement] in order, LinearRegex::replace_all (util/linear_regex.h: std::regex_replace's
// result in linear time, the ECMAScript subset it documents; $1 ... in the replacement) on the
// name as the previous ones left it. Prefix strips, per-layer and per-expert renames are
// such rewrites. Fused tensors are split after the renames (the seeds' preprocess_weights):
//   "fused_qkv": "qkv_proj"         <m>.qkv_proj.{weight,bias} -> <m>.q_proj, <m>.k_proj, <m>.v_proj
//                                   (rows [q | k | v]: num_attention_heads * head_dim, then
//                                   num_key_value_heads * head_dim twice, from the base's config)
//   "fused_gate_up": "gate_up_proj" <m>.gate_up_proj.{weight,bias} -> <m>.gate_proj, <m>.up_proj
//                                   (rows [gate | up], halves)
// The split names are the Llama family's, so these fit the bases whose modules carry them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/hf_config.h"
#include "weights/checkpoint.h"

namespace mobius {

struct CustomType {
  std::string model_type;  // config.json "model_type" of the checkpoints it describes
  std::string base;        // a registered model_type (registry/registry.h)
  std::vector<std::pair<std::string, std::string>> config_renames;  // their field -> the base's field
  std::vector<std::pair<std::string, std::string>> key_renames;     // regex over their names -> replacement
  std::string fused_qkv;      // module name of a fused [q | k | v] projection, "" = none
  std::string fused_gate_up;  // module name of a fused [gate | up] projection, "" = none
};

// Registers `t` for this process (a later registration of the same model_type replaces it).
// Throws mobius::Error: an empty model_type, a model_type that is registered (built in), a base
// that is not registered (naming the nearest ones), a pattern LinearRegex refuses (naming
// key_renames[i]), a replacement over 4,096 bytes or taking a group ($n) the pattern does not have.
void register_custom_type(const CustomType& t);

// Reads and registers the custom types of a JSON file (one object or an array of them, the format
// above), read as untrusted input (util/input_files.h: a regular file of at most 16 MiB, JSON
// nesting 64). Throws mobius::Error naming the file and field: not readable, not JSON, a field
// missing or of the wrong type, or what register_custom_type throws.
void register_custom_types_file(const std::string& path);

// The registration of `model_type`, or nullptr.
const CustomType* find_custom_type(const std::string& model_type);

// `config` read as `t`'s base: each config_renames field renamed (an absent one is skipped; a
// renamed field that would overwrite one the config has is an error naming both), model_type =
// base. The file name stays the config's, for messages.
HfConfig rename_config(const CustomType& t, const HfConfig& config);

// `checkpoint` seen through t's key_renames and fused splits: find() and names() take the renamed
// names, a fused tensor's parts instead of it; the tensors (and the files messages name) are the
// checkpoint's, a part producing its rows of the fused tensor (streamed by rows when not
// transposed, else the fused tensor's rows of the range are produced whole and the part's columns
// copied out: memory, the range at the fused width). `config` is the renamed config (rename_config),
// which gives the q / k / v sizes. Throws mobius::Error naming the file and tensor: two tensors
// renamed to the same name (naming both), a fused tensor whose first axis is not the parts' sum,
// a part's name that the checkpoint already has; a FieldError for the config's head fields.
std::unique_ptr<Checkpoint> rename_keys(const CustomType& t, std::unique_ptr<Checkpoint> checkpoint,
                                        const HfConfig& config);

}  // namespace mobius
