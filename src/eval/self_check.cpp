#include "eval/self_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <vector>

#include "eval/evaluator.h"
#include "util/error.h"

namespace mobius::eval {

SelfCheckResult compare_logits(std::span<const float> reference, std::span<const float> candidate) {
  MOBIUS_ASSERT(reference.size() == candidate.size(), "compared logits differ in length");
  SelfCheckResult r;
  for (size_t k = 0; k < reference.size(); ++k) {
    const double a = reference[k], b = candidate[k];
    if (!std::isfinite(a) || !std::isfinite(b)) {
      r.finite = false;
      continue;
    }
    r.logit_scale = std::max(r.logit_scale, std::abs(a));
    r.max_abs_delta = std::max(r.max_abs_delta, std::abs(a - b));
  }
  if (!r.finite) r.max_abs_delta = std::numeric_limits<double>::infinity();
  r.tolerance = kRelativeTolerance * std::max(1.0, r.logit_scale);
  return r;
}

std::string describe(const SelfCheckResult& r) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "max|delta| %.2e (tolerance %.2e) over %lld tokens%s", r.max_abs_delta,
                r.tolerance, static_cast<long long>(r.tokens), r.finite ? "" : ", logits not finite");
  return buf;
}

namespace {

using Feeds = std::map<std::string, Tensor>;

// One forward pass at batch 1: `ids` at positions past..past+len-1 after `past` cached tokens.
Feeds step(const Evaluator& ev, const std::vector<int64_t>& ids, int64_t past_len, const Feeds& past,
           const CacheLayout& c) {
  const auto n = static_cast<int64_t>(ids.size());
  Feeds in;
  in["input_ids"] = Tensor::of_ints({1, n}, ids);
  in["attention_mask"] = Tensor::of_ints({1, past_len + n}, std::vector<int64_t>(past_len + n, 1));
  std::vector<int64_t> pos(n);
  for (int64_t k = 0; k < n; ++k) pos[k] = past_len + k;
  in["position_ids"] = Tensor::of_ints({1, n}, pos);
  const int64_t v_dim = c.v_head_dim ? c.v_head_dim : c.head_dim;
  for (int64_t i = 0; i < c.num_layers; ++i)
    for (const char* kv : {"key", "value"}) {
      const std::string name = "past_key_values." + std::to_string(i) + "." + kv;
      if (past_len == 0)
        in[name] = Tensor::zeros(DataType::FLOAT, {1, c.num_key_value_heads, 0, kv[0] == 'k' ? c.head_dim : v_dim});
      else
        in[name] = past.at("present." + std::to_string(i) + "." + kv);
    }
  return ev.run(in);
}

std::span<const float> logits_of(const Feeds& out, int64_t len, int64_t vocab) {
  const Tensor& t = out.at("logits");
  if (t.dtype != DataType::FLOAT || t.shape != std::vector<int64_t>{1, len, vocab})
    throw Error("self-check: logits must be FLOAT [1, " + std::to_string(len) + ", " + std::to_string(vocab) + "]");
  return {t.f.data(), t.f.size()};
}

}  // namespace

SelfCheckResult prefill_decode_check(const std::string& model_path, const CacheLayout& cache,
                                     int64_t vocab_size, int64_t tokens) {
  MOBIUS_ASSERT(tokens >= 2 && vocab_size > 0, "self-check needs two tokens and a vocabulary");
  std::vector<int64_t> ids(tokens);
  for (int64_t k = 0; k < tokens; ++k) ids[k] = (1 + 7919 * k) % vocab_size;  // spread, deterministic
  const Evaluator ev(model_path);
  const Feeds a = step(ev, ids, 0, {}, cache);
  const Feeds b = step(ev, {ids.begin(), ids.end() - 1}, 0, {}, cache);
  const Feeds c = step(ev, {ids.back()}, tokens - 1, b, cache);
  std::vector<float> candidate;
  for (auto part : {logits_of(b, tokens - 1, vocab_size), logits_of(c, 1, vocab_size)})
    candidate.insert(candidate.end(), part.begin(), part.end());
  SelfCheckResult r = compare_logits(logits_of(a, tokens, vocab_size), candidate);
  r.tokens = tokens;
  return r;
}

}  // namespace mobius::eval
