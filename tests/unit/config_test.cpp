// config/: HfConfig errors name file and field; RopeConfig reads both rope schemas the same way;
// compute_rope_frequencies equals a double-precision re-derivation of
// transformers/modeling_rope_utils.py (_compute_default/linear/llama3/yarn/longrope_parameters).
#include <cmath>
#include <numbers>

#include "config/hf_config.h"
#include "config/rope_config.h"
#include "test_util.h"

namespace mobius {
namespace {

using nlohmann::json;
using test::expect_error;

constexpr const char* kFile = "ckpt/config.json";
HfConfig cfg(const json& j) { return HfConfig(j, kFile); }

TEST(HfConfig, ReadsTypedFields) {
  HfConfig c = cfg({{"hidden_size", 64}, {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"},
                    {"tie_word_embeddings", true}, {"head_dim", nullptr}, {"theta", 10000}});
  EXPECT_EQ(c.get_int("hidden_size"), 64);
  EXPECT_EQ(c.get_float("rms_norm_eps"), 1e-5);
  EXPECT_EQ(c.get_float("theta"), 10000.0);  // an integer is a valid number
  EXPECT_EQ(c.get_string("hidden_act"), "silu");
  EXPECT_TRUE(c.get_bool("tie_word_embeddings"));
  EXPECT_FALSE(c.has("head_dim"));  // null counts as absent
  EXPECT_EQ(c.int_or("head_dim", 16), 16);
  EXPECT_EQ(c.opt_int("missing"), std::nullopt);
  EXPECT_EQ(c.opt_float("rms_norm_eps"), 1e-5);
  EXPECT_FALSE(c.bool_or("missing", false));
}

TEST(HfConfig, ErrorsNameFileAndField) {
  HfConfig c = cfg({{"hidden_size", "64"}, {"eps", 0.5}, {"flag", 1}, {"list", {1, "x"}},
                    {"rope_scaling", 3}, {"rope_parameters", {{"factor", "two"}, {"inner", {{"x", true}}}}}});
  const std::string f = std::string(kFile) + ": field ";
  expect_error([&] { c.get_int("vocab_size"); }, {f + "'vocab_size': missing"});
  expect_error([&] { c.get_int("hidden_size"); }, {f + "'hidden_size': expected an integer, got string"});
  expect_error([&] { c.get_int("eps"); }, {f + "'eps': expected an integer, got number"});
  expect_error([&] { c.get_bool("flag"); }, {f + "'flag': expected true or false, got number"});
  expect_error([&] { c.int_or("hidden_size", 3); }, {f + "'hidden_size': expected an integer"});
  expect_error([&] { c.float_list("list"); }, {f + "'list': expected a list of numbers, found string"});
  expect_error([&] { c.sub("rope_scaling"); }, {f + "'rope_scaling': expected an object, got number"});
  auto p = c.sub("rope_parameters");
  ASSERT_TRUE(p);
  expect_error([&] { p->get_float("factor"); }, {f + "'rope_parameters.factor': expected a number, got string"});
  expect_error([&] { p->get_float("beta"); }, {f + "'rope_parameters.beta': missing"});
  expect_error([&] { p->sub("inner")->get_int("x"); }, {f + "'rope_parameters.inner.x': expected an integer"});
}

TEST(HfConfig, LoadErrorsNameTheFile) {
  test::TempDir dir;
  expect_error([&] { HfConfig::load(dir.str("config.json")); }, {dir.str("config.json"), "cannot open"});
  test::write_file(dir.path / "bad.json", "{\"a\": ");
  expect_error([&] { HfConfig::load(dir.str("bad.json")); }, {dir.str("bad.json"), "invalid JSON"});
  test::write_file(dir.path / "list.json", "[1, 2]");
  expect_error([&] { HfConfig::load(dir.str("list.json")); }, {dir.str("list.json"), "expected a JSON object"});
  test::write_file(dir.path / "ok.json", "{\"model_type\": \"llama\"}");
  HfConfig c = HfConfig::load(dir.str("ok.json"));
  EXPECT_EQ(c.file(), dir.str("ok.json"));
  EXPECT_EQ(c.get_string("model_type"), "llama");
}

TEST(RopeConfig, ErrorsNameNestedFields) {
  const std::string f = std::string(kFile) + ": field ";
  expect_error([] { RopeConfig::from_hf(cfg({{"rope_parameters", {{"rope_type", "linear"}}}}), 8); },
               {f + "'rope_parameters.factor': missing"});
  expect_error([] { RopeConfig::from_hf(cfg({{"rope_scaling", {{"type", "linear"}, {"factor", "2"}}}}), 8); },
               {f + "'rope_scaling.factor': expected a number, got string"});
  expect_error([] { RopeConfig::from_hf(cfg({{"rope_parameters", {{"rope_type", "ntk"}}}}), 8); },
               {f + "'rope_parameters.rope_type': unsupported rope type 'ntk'"});
  expect_error([] { RopeConfig::from_hf(cfg({{"rope_parameters", {{"rope_type", "llama3"}, {"factor", 8}}}}), 8); },
               {f + "'rope_parameters.low_freq_factor': missing"});
  expect_error([] {
    RopeConfig::from_hf(cfg({{"rope_parameters", {{"rope_type", "longrope"}, {"short_factor", {1, 1, 1, 1}},
                                                  {"long_factor", {1, 1}}}}}), 8);
  }, {f + "'rope_parameters.long_factor': expected 4 values, got 2"});
}

void expect_same(const RopeConfig& a, const RopeConfig& b) {
  EXPECT_EQ(a.rope_type, b.rope_type);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.partial_rotary_factor, b.partial_rotary_factor);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.factor, b.factor);
  EXPECT_EQ(a.factor_set, b.factor_set);
  EXPECT_EQ(a.original_max_position_embeddings, b.original_max_position_embeddings);
  EXPECT_EQ(a.low_freq_factor, b.low_freq_factor);
  EXPECT_EQ(a.high_freq_factor, b.high_freq_factor);
  EXPECT_EQ(a.beta_fast, b.beta_fast);
  EXPECT_EQ(a.beta_slow, b.beta_slow);
  EXPECT_EQ(a.mscale, b.mscale);
  EXPECT_EQ(a.mscale_all_dim, b.mscale_all_dim);
  EXPECT_EQ(a.truncate, b.truncate);
  EXPECT_EQ(a.attention_factor, b.attention_factor);
  EXPECT_EQ(a.attention_factor_set, b.attention_factor_set);
  EXPECT_EQ(a.short_factor, b.short_factor);
  EXPECT_EQ(a.long_factor, b.long_factor);
}

// The newer schema puts rope_theta inside rope_parameters with "rope_type"; the older one keeps
// rope_theta at the top level and names the type "type" in rope_scaling.
void expect_both_schemas_agree(json scaling, double theta, json top = json::object()) {
  json newer = top, older = top;
  newer["rope_parameters"] = scaling;
  newer["rope_parameters"]["rope_theta"] = theta;
  const std::string type = scaling["rope_type"];
  scaling.erase("rope_type");
  if (type != "default") {
    older["rope_scaling"] = scaling;
    older["rope_scaling"]["type"] = type;
  }
  older["rope_theta"] = theta;
  RopeConfig a = RopeConfig::from_hf(cfg(newer), 16), b = RopeConfig::from_hf(cfg(older), 16);
  SCOPED_TRACE(type);
  expect_same(a, b);
  EXPECT_EQ(a.rope_type, type);
  EXPECT_EQ(a.rope_theta, theta);
}

TEST(RopeConfig, BothSchemasGiveTheSameConfig) {
  const json top = {{"max_position_embeddings", 4096}};
  expect_both_schemas_agree({{"rope_type", "default"}}, 1e6, top);
  expect_both_schemas_agree({{"rope_type", "linear"}, {"factor", 4.0}}, 5e5, top);
  expect_both_schemas_agree({{"rope_type", "dynamic"}, {"factor", 2.0}}, 1e4, top);
  expect_both_schemas_agree({{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                             {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 1024}}, 5e5, top);
  expect_both_schemas_agree({{"rope_type", "yarn"}, {"factor", 4.0}, {"beta_fast", 16}, {"mscale", 1.0},
                             {"mscale_all_dim", 0.5}, {"truncate", false}, {"original_max_position_embeddings", 1024}},
                            1e4, top);
  expect_both_schemas_agree({{"rope_type", "longrope"}, {"short_factor", {1, 1.5, 2, 3, 4, 5, 6, 7}},
                             {"long_factor", {2, 2, 2, 2, 3, 3, 3, 3}}}, 1e4,
                            {{"max_position_embeddings", 4096}, {"original_max_position_embeddings", 1024}});
}

TEST(RopeConfig, Defaults) {
  // partial_rotary_factor counts only for a type whose rope reads it (RopeDefaults sets its default)
  RopeConfig r = RopeConfig::from_hf(cfg({{"partial_rotary_factor", 0.5}}), 64, {.partial_rotary_factor = 1.0});
  EXPECT_EQ(r.rope_type, "default");
  EXPECT_EQ(r.rope_theta, 10000.0);
  EXPECT_EQ(r.rotary_dim(), 32);
  EXPECT_EQ(r.max_position_embeddings, 2048);
  EXPECT_EQ(RopeConfig::from_hf(cfg({{"partial_rotary_factor", 0.5}}), 64).rotary_dim(), 64);
  // "rope_type" inside rope_scaling (some older configs) is read too.
  RopeConfig y = RopeConfig::from_hf(cfg({{"max_position_embeddings", 4096},
                                          {"rope_scaling", {{"rope_type", "yarn"}, {"factor", 2.0}}}}), 64);
  EXPECT_EQ(y.rope_type, "yarn");
  EXPECT_EQ(y.original_max_position_embeddings, 4096);  // falls back to max_position_embeddings
  EXPECT_EQ(y.beta_fast, 32.0);
  EXPECT_EQ(y.beta_slow, 1.0);
  EXPECT_TRUE(y.truncate);
}

// RopeDefaults: the class' default rope dict when config.json has none, a top-level rope_theta
// under the dict's own, legacy type aliases; a scaled rope with a partial factor the type cannot
// apply is refused.
TEST(RopeConfig, ClassDefaults) {
  const RopeDefaults d{.rope_theta = 150000.0,
                       .rope_parameters = R"({"rope_type": "yarn", "factor": 32.0, "rope_theta": 5.0})",
                       .rope_type_aliases = {{"su", "longrope"}}};
  RopeConfig r = RopeConfig::from_hf(cfg({{"rope_theta", 7.0}}), 64, d);
  EXPECT_EQ(r.rope_type, "yarn");
  EXPECT_EQ(r.factor, 32.0);
  EXPECT_EQ(r.rope_theta, 5.0);
  RopeConfig l = RopeConfig::from_hf(cfg({{"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}}}), 64, d);
  EXPECT_EQ(l.rope_type, "linear");
  EXPECT_EQ(l.rope_theta, 150000.0);
  json su = {{"rope_scaling", {{"type", "su"}, {"short_factor", json::array({1.0})}, {"long_factor", json::array({1.0})}}}};
  EXPECT_EQ(RopeConfig::from_hf(cfg(su), 2, d).rope_type, "longrope");
  expect_error([] {
    RopeConfig::from_hf(cfg({{"partial_rotary_factor", 0.5}, {"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}}}), 8);
  }, {std::string(kFile) + ": field 'partial_rotary_factor': this model type rotates the whole head"});
}

// ---- inverse frequencies against the formulas of modeling_rope_utils.py, in double ----

RopeConfig rope(json scaling, int64_t head_dim, json top = json::object()) {
  top["rope_parameters"] = std::move(scaling);
  return RopeConfig::from_hf(cfg(top), head_dim);
}

// inv_freq = 1 / base ** (arange(0, dim, 2) / dim)
std::vector<double> default_inv_freq(double base, int64_t dim) {
  std::vector<double> out;
  for (int64_t i = 0; i < dim; i += 2) out.push_back(1.0 / std::pow(base, static_cast<double>(i) / dim));
  return out;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-6 * std::fabs(want[i])) << "index " << i;
}

TEST(RopeFrequencies, DefaultAndPartial) {
  RopeFrequencies f = compute_rope_frequencies(rope({{"rope_type", "default"}, {"rope_theta", 1e6}}, 64));
  expect_close(f.inv_freq, default_inv_freq(1e6, 64));
  EXPECT_EQ(f.attention_factor, 1.0f);
  json partial = {{"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1e4}, {"partial_rotary_factor", 0.25}}}};
  RopeFrequencies p = compute_rope_frequencies(RopeConfig::from_hf(cfg(partial), 64, {.partial_rotary_factor = 1.0}));
  expect_close(p.inv_freq, default_inv_freq(1e4, 16));
  // dynamic starts from the default frequencies (the graph recomputes them per sequence).
  RopeFrequencies d = compute_rope_frequencies(rope({{"rope_type", "dynamic"}, {"factor", 2.0}}, 32));
  expect_close(d.inv_freq, default_inv_freq(1e4, 32));
}

TEST(RopeFrequencies, Linear) {
  RopeFrequencies f = compute_rope_frequencies(rope({{"rope_type", "linear"}, {"factor", 3.0}, {"rope_theta", 5e5}}, 64));
  std::vector<double> want = default_inv_freq(5e5, 64);
  for (double& x : want) x /= 3.0;
  expect_close(f.inv_freq, want);
}

TEST(RopeFrequencies, Llama3) {
  const double factor = 8, low = 1, high = 4, theta = 5e5;
  const int64_t old_len = 8192;
  RopeFrequencies f = compute_rope_frequencies(
      rope({{"rope_type", "llama3"}, {"factor", factor}, {"low_freq_factor", low}, {"high_freq_factor", high},
            {"original_max_position_embeddings", old_len}, {"rope_theta", theta}}, 128));
  std::vector<double> want;
  int regions[3] = {0, 0, 0};
  for (double inv : default_inv_freq(theta, 128)) {
    const double wavelen = 2 * std::numbers::pi / inv;
    if (wavelen < old_len / high) {  // high frequency: kept
      want.push_back(inv);
      ++regions[0];
    } else if (wavelen > old_len / low) {  // low frequency: divided by factor
      want.push_back(inv / factor);
      ++regions[1];
    } else {  // smooth interpolation between the two
      const double smooth = (old_len / wavelen - low) / (high - low);
      want.push_back((1 - smooth) * inv / factor + smooth * inv);
      ++regions[2];
    }
  }
  EXPECT_GT(regions[0], 0);
  EXPECT_GT(regions[1], 0);
  EXPECT_GT(regions[2], 0);
  expect_close(f.inv_freq, want);
  EXPECT_EQ(f.attention_factor, 1.0f);
}

// _compute_yarn_parameters in double.
struct Yarn {
  double theta = 1e4, factor = 4, beta_fast = 32, beta_slow = 1, mscale = 0, mscale_all_dim = 0;
  int64_t orig = 2048;
  bool truncate = true;
  int64_t dim = 64;

  static double get_mscale(double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; }
  double attention_factor() const {
    return mscale && mscale_all_dim ? get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
                                    : get_mscale(factor, 1);
  }
  double correction_dim(double rotations) const {
    return dim * std::log(static_cast<double>(orig) / (rotations * 2 * std::numbers::pi)) / (2 * std::log(theta));
  }
  std::vector<double> inv_freq() const {
    double lo = correction_dim(beta_fast), hi = correction_dim(beta_slow);
    if (truncate) lo = std::floor(lo), hi = std::ceil(hi);
    lo = std::max(lo, 0.0), hi = std::min(hi, static_cast<double>(dim - 1));
    if (lo == hi) hi += 0.001;
    std::vector<double> out;
    for (int64_t i = 0; i < dim / 2; ++i) {
      const double pos_freq = std::pow(theta, 2.0 * i / dim);
      const double ramp = std::clamp((i - lo) / (hi - lo), 0.0, 1.0);
      const double extrapolation_factor = 1 - ramp;
      out.push_back(1 / (factor * pos_freq) * (1 - extrapolation_factor) + 1 / pos_freq * extrapolation_factor);
    }
    return out;
  }
};

TEST(RopeFrequencies, Yarn) {
  Yarn plain;
  RopeFrequencies f = compute_rope_frequencies(
      rope({{"rope_type", "yarn"}, {"factor", plain.factor}, {"original_max_position_embeddings", plain.orig}}, 64));
  expect_close(f.inv_freq, plain.inv_freq());
  EXPECT_NEAR(f.attention_factor, plain.attention_factor(), 1e-6);

  Yarn ds{.theta = 5e4, .factor = 40, .beta_fast = 16, .beta_slow = 2, .mscale = 1.0, .mscale_all_dim = 0.5,
          .orig = 4096, .truncate = false};
  RopeFrequencies g = compute_rope_frequencies(
      rope({{"rope_type", "yarn"}, {"rope_theta", ds.theta}, {"factor", ds.factor}, {"beta_fast", ds.beta_fast},
            {"beta_slow", ds.beta_slow}, {"mscale", ds.mscale}, {"mscale_all_dim", ds.mscale_all_dim},
            {"original_max_position_embeddings", ds.orig}, {"truncate", false}}, 64));
  expect_close(g.inv_freq, ds.inv_freq());
  EXPECT_NEAR(g.attention_factor, ds.attention_factor(), 1e-6);
  EXPECT_NE(ds.attention_factor(), Yarn{.factor = 40}.attention_factor());  // mscale matters

  RopeFrequencies h = compute_rope_frequencies(
      rope({{"rope_type", "yarn"}, {"factor", 4.0}, {"attention_factor", 0.75}}, 64, {{"max_position_embeddings", 2048}}));
  EXPECT_EQ(h.attention_factor, 0.75f);
}

TEST(RopeFrequencies, LongRope) {
  const std::vector<double> shorts{1.0, 1.1, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0};
  const std::vector<double> longs{1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0};
  const double theta = 1e4;
  const int64_t max_pos = 16384, orig = 4096;
  // Phi-3 style: no factor; original_max_position_embeddings at the top level.
  RopeFrequencies f = compute_rope_frequencies(
      rope({{"rope_type", "longrope"}, {"rope_theta", theta}, {"short_factor", shorts}, {"long_factor", longs}}, 16,
           {{"max_position_embeddings", max_pos}, {"original_max_position_embeddings", orig}}));
  std::vector<double> want_short, want_long;
  std::vector<double> base = default_inv_freq(theta, 16);
  for (size_t i = 0; i < base.size(); ++i) {
    want_short.push_back(base[i] / shorts[i]);
    want_long.push_back(base[i] / longs[i]);
  }
  expect_close(f.inv_freq, want_short);
  expect_close(f.long_inv_freq, want_long);
  const double factor = static_cast<double>(max_pos) / orig;
  EXPECT_NEAR(f.attention_factor, std::sqrt(1 + std::log(factor) / std::log(static_cast<double>(orig))), 1e-6);
}

}  // namespace
}  // namespace mobius
