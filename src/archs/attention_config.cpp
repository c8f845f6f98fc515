#include "archs/attention_config.h"

#include "blocks/activation.h"

namespace mobius {

AttentionOptions read_attention(const HfConfig& c, int64_t hidden_size, DataType dtype,
                                const HeadFields& f) {
  AttentionOptions a;
  a.hidden_size = hidden_size;
  a.dtype = dtype;
  a.num_attention_heads = c.get_int(f.num_attention_heads);
  const bool explicit_head_dim = f.head_dim && c.has(f.head_dim);
  if (a.num_attention_heads <= 0 ||
      (!explicit_head_dim && !f.default_head_dim && hidden_size % a.num_attention_heads != 0))
    c.fail(f.num_attention_heads, "must be positive and divide the hidden size");
  const int64_t kv_default = f.default_num_key_value_heads ? f.default_num_key_value_heads
                                                          : a.num_attention_heads;
  a.num_key_value_heads = f.num_key_value_heads ? c.int_or(f.num_key_value_heads, kv_default)
                                                : a.num_attention_heads;
  if (a.num_key_value_heads <= 0 || a.num_attention_heads % a.num_key_value_heads != 0)
    c.fail(f.num_key_value_heads, "must divide " + std::string(f.num_attention_heads));
  const int64_t hd_default = f.default_head_dim ? f.default_head_dim : hidden_size / a.num_attention_heads;
  a.head_dim = f.head_dim ? c.int_or(f.head_dim, hd_default) : hd_default;
  if (a.head_dim <= 0 || a.head_dim % 2 != 0)
    c.fail(f.head_dim ? f.head_dim : f.num_attention_heads, "the head size must be positive and even");
  return a;
}

std::string read_activation(const HfConfig& c, const char* key, const std::string& fallback) {
  std::string act = c.string_or(key, fallback);
  if (!is_known_activation(act)) c.fail(key, "unsupported activation '" + act + "'");
  return act;
}

}  // namespace mobius
