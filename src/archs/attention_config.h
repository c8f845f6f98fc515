// Config readers shared by the decoder architectures: the attention geometry and the activation,
// under each config class's own field names and defaults.
#pragma once

#include <string>

#include "blocks/attention.h"
#include "config/hf_config.h"

namespace mobius {

// Field names (nullptr: the config has no such field) and the config class's defaults.
struct HeadFields {
  const char* num_attention_heads = "num_attention_heads";  // n_head (GPT-J, CodeGen)
  const char* num_key_value_heads = "num_key_value_heads";  // nullptr: multi-head attention
  const char* head_dim = "head_dim";                        // nullptr: hidden_size / heads
  int64_t default_num_key_value_heads = 0;                  // 0: num_attention_heads
  int64_t default_head_dim = 0;                             // 0: hidden_size / heads
};

// hidden_size, heads, kv heads and head_dim of the attention (other options left at their
// defaults). Throws mobius::Error naming the field when heads is not positive, does not divide
// hidden_size while head_dim is unset, or kv heads does not divide heads.
AttentionOptions read_attention(const HfConfig& c, int64_t hidden_size, DataType dtype,
                                const HeadFields& f = {});

// The activation in field `key` (default `fallback`); throws mobius::Error naming the field when
// blocks/activation.h does not know it.
std::string read_activation(const HfConfig& c, const char* key, const std::string& fallback);

}  // namespace mobius
