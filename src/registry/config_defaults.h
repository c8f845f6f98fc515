// The defaults a registered type's transformers configuration class gives the config.json fields
// mobius reads with a fallback, and which of them it refuses as null (registry/config_defaults.inc, generated from transformers by
// scripts/gen_config_defaults.py: dataclass defaults of configuration_<type>.py and its
// default_theta as rope_theta).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "config/hf_config.h"

namespace mobius {

// `cfg` with every field that config.json leaves out (absent; an explicit null stays null, as
// transformers reads it as None) set to `model_type`'s config-class default; unchanged for a type
// without a row. The view keeps cfg's file name and JSON path (a sub-config's) for errors.
// Throws mobius::Error naming the field when config.json sets to null a field the class refuses as
// null (e.g. Qwen3Config's head_dim).
HfConfig with_class_defaults(const HfConfig& cfg, const std::string& model_type);

// `cfg` with the value of each alias in `attribute_map` ({alias, field}: a config class'
// attribute_map) that config.json sets (null included) stored under the field it names:
// PreTrainedConfig resolves an alias to its field on assignment, so an alias in config.json wins
// over the field itself (transformers/configuration_utils.py, PreTrainedConfig.__setattr__; e.g.
// T5Config's head_dim -> d_kv). The view keeps cfg's file name for errors. Throws nothing.
HfConfig with_attribute_map(const HfConfig& cfg,
                            std::initializer_list<std::pair<const char*, const char*>> attribute_map);

}  // namespace mobius
