#include "weights/weight_plan.h"

#include <algorithm>
#include <set>

#include "util/error.h"
#include "weights/convert.h"

namespace mobius {

std::vector<std::string> nearest_names(const std::string& name,
                                       const std::vector<std::string>& candidates, size_t n) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& c : candidates) scored.emplace_back(distance(name, c), c);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < std::min(n, scored.size()); ++i) out.push_back(scored[i].second);
  return out;
}

int64_t WeightBinding::rows() const { return output_rows(source->shape, init->weight->transpose); }

void WeightBinding::produce(int64_t row_begin, int64_t row_end, std::span<uint8_t> out) const {
  checkpoint->produce(*source, init->value->dtype, init->weight->transpose, row_begin, row_end, out);
}

static std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

WeightPlan WeightPlan::bind(const Graph& graph, const Checkpoint& ckpt) {
  WeightPlan plan;
  std::set<std::string> used;
  for (const Initializer& init : graph.initializers) {
    if (!init.weight) continue;
    const std::string& key = init.weight->source_key;
    const TensorInfo* t = ckpt.find(key);
    if (!t) {
      std::string msg = "missing tensor '" + key + "' in the checkpoint";
      auto near = nearest_names(key, ckpt.names());
      if (!near.empty()) {
        msg += " (nearest:";
        for (const auto& n : near) msg += " " + n;
        msg += ")";
      }
      throw Error(msg);
    }
    std::vector<int64_t> want;
    for (const Dim& d : *init.value->shape) want.push_back(d.value);
    if (init.weight->transpose) std::swap(want[want.size() - 2], want[want.size() - 1]);
    if (t->shape != want)
      throw Error(*t->file + ": tensor '" + key + "' has shape " + dims_str(t->shape) +
                  ", expected " + dims_str(want));
    if (t->dtype != init.value->dtype && !(is_float(t->dtype) && is_float(init.value->dtype)))
      throw Error(*t->file + ": tensor '" + key + "' has dtype " + dtype_name(t->dtype) +
                  ", expected a float tensor");
    plan.bindings_.push_back({&init, t, &ckpt});
    used.insert(key);
  }
  for (const auto& name : ckpt.names())
    if (!used.count(name)) plan.unused_.push_back(name);
  return plan;
}

}  // namespace mobius
