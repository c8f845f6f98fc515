// The registry: the one table mapping a config.json model_type to its architecture.
#pragma once

#include <string>
#include <vector>

#include "archs/archs.h"

namespace mobius {

struct RegistryEntry {
  const char* model_type;  // config.json "model_type"
  const char* family;      // the architecture file / family it belongs to
  const char* task;        // I/O contract, e.g. "text-generation"
  ArchFactory create;
};

// All entries, sorted by model_type.
const std::vector<RegistryEntry>& registry();
// The entry for `model_type`; throws mobius::Error naming the nearest registered types.
const RegistryEntry& find_architecture(const std::string& model_type, const std::string& config_file);

}  // namespace mobius
