#include "config/rope_config.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace mobius {

std::optional<HfConfig> RopeConfig::params(const HfConfig& cfg, const RopeDefaults& defaults) {
  // convert_rope_params_to_dict (transformers/modeling_rope_utils.py): `rope_scaling or
  // rope_parameters`: a non-empty legacy rope_scaling wins, and its rope_theta comes from the
  // top-level field or the class default, not from rope_parameters
  std::optional<HfConfig> scaling = cfg.sub("rope_scaling");
  if (scaling && !scaling->json().empty()) return scaling;
  if (std::optional<HfConfig> p = cfg.sub("rope_parameters")) return p;
  if (defaults.rope_parameters.empty()) return std::nullopt;
  return HfConfig(nlohmann::json::parse(defaults.rope_parameters), cfg.file(),
                  "default rope_parameters.");
}

RopeConfig RopeConfig::from_hf(const HfConfig& cfg, int64_t head_dim, const RopeDefaults& defaults) {
  RopeDefaults d = defaults;
  d.rope_theta = cfg.float_or("rope_theta", defaults.rope_theta);
  if (defaults.partial_rotary_factor)
    d.partial_rotary_factor = cfg.float_or("partial_rotary_factor", *defaults.partial_rotary_factor);
  return from_params(cfg, params(cfg, defaults), head_dim, d);
}

RopeConfig RopeConfig::from_params(const HfConfig& cfg, const std::optional<HfConfig>& p,
                                   int64_t head_dim, const RopeDefaults& defaults) {
  RopeConfig r;
  r.head_dim = head_dim;
  r.max_position_embeddings = cfg.int_or("max_position_embeddings", 2048);
  r.rope_theta = defaults.rope_theta;
  r.partial_rotary_factor = defaults.partial_rotary_factor.value_or(1.0);
  if (!p) return r;
  r.rope_type = p->has("rope_type") ? p->get_string("rope_type") : p->string_or("type", "default");
  for (const auto& [legacy, name] : defaults.rope_type_aliases)
    if (r.rope_type == legacy) r.rope_type = name;
  r.rope_theta = p->float_or("rope_theta", r.rope_theta);
  if (defaults.partial_rotary_factor)
    r.partial_rotary_factor = p->float_or("partial_rotary_factor", r.partial_rotary_factor);
  static const char* known[] = {"default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"};
  if (std::find(std::begin(known), std::end(known), r.rope_type) == std::end(known))
    p->fail("rope_type", "unsupported rope type '" + r.rope_type +
                             "' (supported: default, linear, dynamic, yarn, longrope, llama3, proportional)");
  if (r.rope_type == "proportional") {  // rotates the whole head whatever the type's default
    r.partial_rotary_factor = 1.0;
    r.rope_proportion = p->float_or("partial_rotary_factor", 1.0);
    r.factor_set = p->has("factor");
    r.factor = p->float_or("factor", 1.0);
    return r;
  }
  // transformers moves a top-level partial_rotary_factor into the rope dict; a scaled rope type
  // then rotates fewer channels than the type's attention applies it to (a shape error there)
  const bool partial = p->float_or("partial_rotary_factor", cfg.float_or("partial_rotary_factor", 1.0)) != 1.0;
  if (!defaults.partial_rotary_factor && partial && r.rope_type != "default")
    cfg.fail("partial_rotary_factor", "this model type rotates the whole head; transformers cannot apply a "
             "partial rotary factor with rope_type '" + r.rope_type + "': remove the field");
  if (r.rope_type == "default") return r;
  if (p->has("factor")) {
    r.factor = p->get_float("factor");
    r.factor_set = true;
  } else if (r.rope_type != "longrope" && r.rope_type != "yarn") {
    p->get_float("factor");  // throws "missing"
  }
  // Phi-3 style: a top-level original_max_position_embeddings takes priority (transformers
  // standardize_rope_params); otherwise the rope dict's, otherwise max_position_embeddings.
  r.original_max_position_embeddings =
      cfg.has("original_max_position_embeddings")
          ? cfg.get_int("original_max_position_embeddings")
          : p->int_or("original_max_position_embeddings", r.max_position_embeddings);
  r.low_freq_factor = p->float_or("low_freq_factor", r.low_freq_factor);
  r.high_freq_factor = p->float_or("high_freq_factor", r.high_freq_factor);
  if (r.rope_type == "llama3") {
    p->get_float("low_freq_factor");
    p->get_float("high_freq_factor");
  }
  r.beta_fast = p->float_or("beta_fast", 0) ? p->get_float("beta_fast") : 32.0;
  r.beta_slow = p->float_or("beta_slow", 0) ? p->get_float("beta_slow") : 1.0;
  r.mscale = p->float_or("mscale", 0.0);
  r.mscale_all_dim = p->float_or("mscale_all_dim", 0.0);
  r.truncate = p->bool_or("truncate", true);
  if (p->has("attention_factor")) {
    r.attention_factor = p->get_float("attention_factor");
    r.attention_factor_set = true;
  }
  if (r.rope_type == "longrope") {
    r.short_factor = p->float_list("short_factor");
    r.long_factor = p->float_list("long_factor");
    size_t half = static_cast<size_t>(r.rotary_dim() / 2);
    if (r.short_factor.size() != half)
      p->fail("short_factor", "expected " + std::to_string(half) + " values, got " +
                                  std::to_string(r.short_factor.size()));
    if (r.long_factor.size() != half)
      p->fail("long_factor", "expected " + std::to_string(half) + " values, got " +
                                 std::to_string(r.long_factor.size()));
  }
  return r;
}

namespace {

// base ** (arange(0, dim, 2) / dim) in float32, as torch computes it.
std::vector<float> pos_freqs(double base, int64_t dim) {
  std::vector<float> out;
  for (int64_t i = 0; i < dim; i += 2)
    out.push_back(static_cast<float>(
        std::pow(base, static_cast<double>(static_cast<float>(i) / static_cast<float>(dim)))));
  return out;
}

std::vector<float> inverse(const std::vector<float>& v) {
  std::vector<float> out;
  for (float x : v) out.push_back(1.0f / x);
  return out;
}

double yarn_mscale(double scale, double mscale) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

// yarn / longrope: `factor`, or when absent max_position_embeddings /
// original_max_position_embeddings (transformers' _compute_yarn_parameters and
// _compute_longrope_parameters).
double extension_factor(const RopeConfig& r) {
  return r.factor_set ? r.factor
                      : static_cast<double>(r.max_position_embeddings) /
                            static_cast<double>(r.original_max_position_embeddings);
}

RopeFrequencies yarn(const RopeConfig& r) {
  const int64_t dim = r.rotary_dim();
  const double factor = extension_factor(r);
  RopeFrequencies f;
  if (r.attention_factor_set)
    f.attention_factor = static_cast<float>(r.attention_factor);
  else if (r.mscale != 0 && r.mscale_all_dim != 0)
    f.attention_factor =
        static_cast<float>(yarn_mscale(factor, r.mscale) / yarn_mscale(factor, r.mscale_all_dim));
  else
    f.attention_factor = static_cast<float>(yarn_mscale(factor, 1.0));
  auto correction_dim = [&](double rotations) {
    return (dim * std::log(r.original_max_position_embeddings / (rotations * 2 * M_PI))) /
           (2 * std::log(r.rope_theta));
  };
  double low = correction_dim(r.beta_fast), high = correction_dim(r.beta_slow);
  if (r.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;
  std::vector<float> pf = pos_freqs(r.rope_theta, dim);
  for (size_t i = 0; i < pf.size(); ++i) {
    float ramp = static_cast<float>((static_cast<float>(i) - low) / (high - low));
    ramp = std::clamp(ramp, 0.0f, 1.0f);
    float extrapolation_factor = 1.0f - ramp;
    float extrapolation = 1.0f / pf[i];
    float interpolation = 1.0f / (static_cast<float>(factor) * pf[i]);
    f.inv_freq.push_back(interpolation * (1.0f - extrapolation_factor) +
                         extrapolation * extrapolation_factor);
  }
  return f;
}

RopeFrequencies longrope(const RopeConfig& r) {
  const int64_t dim = r.rotary_dim();
  const double factor = extension_factor(r);
  RopeFrequencies f;
  if (r.attention_factor_set)
    f.attention_factor = static_cast<float>(r.attention_factor);
  else if (factor <= 1.0)
    f.attention_factor = 1.0f;
  else
    f.attention_factor = static_cast<float>(
        std::sqrt(1 + std::log(factor) / std::log(r.original_max_position_embeddings)));
  std::vector<float> pf = pos_freqs(r.rope_theta, dim);
  for (size_t i = 0; i < pf.size(); ++i) {
    f.inv_freq.push_back(1.0f / (static_cast<float>(r.short_factor[i]) * pf[i]));
    f.long_inv_freq.push_back(1.0f / (static_cast<float>(r.long_factor[i]) * pf[i]));
  }
  return f;
}

RopeFrequencies llama3(const RopeConfig& r) {
  RopeFrequencies f;
  std::vector<float> inv = inverse(pos_freqs(r.rope_theta, r.rotary_dim()));
  const float factor = static_cast<float>(r.factor);
  const float low = static_cast<float>(r.low_freq_factor);
  const float high = static_cast<float>(r.high_freq_factor);
  const float old_len = static_cast<float>(r.original_max_position_embeddings);
  const float low_freq_wavelen = old_len / low, high_freq_wavelen = old_len / high;
  for (float x : inv) {
    float wavelen = static_cast<float>(2 * M_PI) / x;
    float y = wavelen > low_freq_wavelen ? x / factor : x;
    if (!(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen)) {
      float smooth = (old_len / wavelen - low) / (high - low);
      y = (1 - smooth) * y / factor + smooth * y;
    }
    f.inv_freq.push_back(y);
  }
  return f;
}

}  // namespace

RopeFrequencies compute_rope_frequencies(const RopeConfig& r) {
  if (r.rope_type == "yarn") return yarn(r);
  if (r.rope_type == "longrope") return longrope(r);
  if (r.rope_type == "llama3") return llama3(r);
  RopeFrequencies f;
  if (r.rope_type == "proportional") {
    const auto angles = static_cast<int64_t>(std::floor(r.rope_proportion * static_cast<double>(r.head_dim) / 2.0));
    for (int64_t i = 0; i < r.head_dim / 2; ++i) {
      const float x = i < angles ? 1.0f / static_cast<float>(std::pow(r.rope_theta, static_cast<double>(
                                             static_cast<float>(2 * i) / static_cast<float>(r.head_dim))))
                                 : 0.0f;
      f.inv_freq.push_back(x / static_cast<float>(r.factor));
    }
    return f;
  }
  // default and dynamic (whose init value equals default); linear divides by factor.
  f.inv_freq = inverse(pos_freqs(r.rope_theta, r.rotary_dim()));
  if (r.rope_type == "linear")
    for (float& x : f.inv_freq) x /= static_cast<float>(r.factor);
  return f;
}

}  // namespace mobius
