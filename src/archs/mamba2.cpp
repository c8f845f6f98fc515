// Mamba-2 (transformers/models/mamba2/modeling_mamba2.py Mamba2ForCausalLM): the Mamba model
// (archs/mamba.h) with the Mamba-2 mixer (blocks/mamba2.h). Mamba2Config: num_heads, head_dim,
// n_groups, state_size, conv_kernel, expand (hidden_size * expand = num_heads * head_dim, its
// validate_architecture), use_bias, use_conv_bias, hidden_act, layer_norm_epsilon (also the gated
// norm's), time_step_limit ([min, max]; transformers writes infinity as {"__float__": "Infinity"}).
// chunk_size (the SSD chunk, blocks/mamba2.h).
// transformers' decode step (mamba2_selective_state_update) does not clamp dt to time_step_limit
// while its prefill does; the graph clamps both (the default limit, [0, inf), clamps nothing).
#include <cmath>
#include <limits>

#include "archs/archs.h"
#include "archs/mamba.h"
#include "blocks/mamba2.h"

namespace mobius {

namespace {

// One bound of time_step_limit: a number, or transformers' {"__float__": "Infinity"}.
float limit_bound(const HfConfig& c, const nlohmann::json& v) {
  if (v.is_number()) return v.get<float>();
  if (v.is_object() && v.size() == 1 && v.contains("__float__") && v["__float__"] == "Infinity")
    return std::numeric_limits<float>::infinity();
  c.fail("time_step_limit", "expected [min, max]: numbers, the max possibly {\"__float__\": \"Infinity\"}");
}

}  // namespace

void read_time_step_limit(const HfConfig& c, Mamba2Options& m) {
  if (!c.has("time_step_limit")) return;
  const nlohmann::json& limit = c.json()["time_step_limit"];
  if (!limit.is_array() || limit.size() != 2) c.fail("time_step_limit", "expected [min, max]");
  m.time_step_min = limit_bound(c, limit[0]);
  m.time_step_max = limit_bound(c, limit[1]);
  if (!std::isfinite(m.time_step_min) || m.time_step_min < 0.0f || !(m.time_step_max >= m.time_step_min))
    c.fail("time_step_limit", "expected 0 <= min <= max, min finite");
}

void check_mamba2_fields(const HfConfig& c, const Mamba2Options& m, int64_t expand, const Mamba2FieldNames& n) {
  auto size = [&](const std::string& field, int64_t v, int64_t max, int64_t min = 1) {
    if (v < min || v > max) c.fail(field, "expected " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                                              std::to_string(v));
  };
  if (!n.expand.empty()) size(n.expand, expand, kMaxSmallSize);
  size(n.num_heads, m.num_heads, kMaxHeads);
  size(n.head_dim, m.head_dim, kMaxHeadDim);
  size(n.n_groups, m.n_groups, m.num_heads);
  if (m.num_heads % m.n_groups != 0)
    c.fail(n.n_groups, std::to_string(m.n_groups) + " does not divide " + n.num_heads + " " + std::to_string(m.num_heads));
  size(n.state_size, m.state_size, kMaxHeadDim);
  size(n.conv_kernel, m.conv_kernel, kMaxSmallSize, 2);
  size(n.chunk_size, m.chunk_size, kMaxSmallSize);
  if (!n.expand.empty() && m.hidden_size * expand != m.num_heads * m.head_dim)  // each bounded (the getters' caps): no overflow
    c.fail(n.num_heads, n.num_heads + " * " + n.head_dim + " (" + std::to_string(m.num_heads) + " * " +
                            std::to_string(m.head_dim) + ") must equal hidden_size * " + n.expand + " (" +
                            std::to_string(m.hidden_size * expand) + ")");
}

std::unique_ptr<Architecture> create_mamba2(const HfConfig& c, DataType dtype) {
  Mamba2Options m{.hidden_size = c.get_int("hidden_size"), .num_heads = c.get_int("num_heads"),
                  .head_dim = c.int_or("head_dim", 64), .n_groups = c.int_or("n_groups", 8),
                  .state_size = c.int_or("state_size", 128), .conv_kernel = c.int_or("conv_kernel", 4),
                  .chunk_size = c.int_or("chunk_size", 256),
                  .use_bias = c.bool_or("use_bias", false), .use_conv_bias = c.bool_or("use_conv_bias", true),
                  .hidden_act = c.string_or("hidden_act", "silu"),
                  .layer_norm_epsilon = static_cast<float>(c.float_or("layer_norm_epsilon", 1e-5)), .dtype = dtype};
  check_mamba2_fields(c, m, c.int_or("expand", 2),
                      {.num_heads = "num_heads", .head_dim = "head_dim", .n_groups = "n_groups",
                       .state_size = "state_size", .conv_kernel = "conv_kernel", .chunk_size = "chunk_size",
                       .expand = "expand"});
  read_time_step_limit(c, m);
  MambaSpec s = mamba_backbone_spec(c, dtype);
  s.make_mixer = [m](int64_t) { return std::make_unique<Mamba2Mixer>(m); };
  return std::make_unique<MambaCausalLM>(s);
}

}  // namespace mobius
