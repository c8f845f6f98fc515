#include "blocks/parallel_mixers.h"

#include <algorithm>

#include "util/error.h"

namespace mobius {

namespace {

size_t tensor_count(const LayerStates& states) {
  size_t n = 0;
  for (const LayerState& s : states) n += state_tensors(s).size();
  return n;
}

}  // namespace

void ParallelMixers::add(const std::string& name, std::unique_ptr<TokenMixer> mixer, MixerScales scales) {
  parts_.push_back({adopt(name, std::move(mixer)), scales});
  const LayerStates all = states();
  MOBIUS_ASSERT(std::count_if(all.begin(), all.end(), is_self_attention_cache) <= 1,
                "mixers side by side carry at most one self-attention cache");
}

LayerStates ParallelMixers::states() const {
  LayerStates out;
  for (const Part& p : parts_) {
    const LayerStates s = p.mixer->states();
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

MixerResult ParallelMixers::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  auto s = enter(op);
  MOBIUS_ASSERT(past.size() == tensor_count(states()), "mixers side by side take each state tensor once");
  MixerResult out{nullptr, {}};
  size_t offset = 0;
  for (const Part& p : parts_) {
    const size_t n = tensor_count(p.mixer->states());
    Value* in = p.scales.input == 1.0f ? x : op.Mul(x, p.scales.input);
    MixerResult r = p.mixer->mix(op, in, ctx, past.subspan(offset, n));
    offset += n;
    Value* y = p.scales.output == 1.0f ? r.hidden : op.Mul(r.hidden, p.scales.output);
    out.hidden = out.hidden ? op.Add(out.hidden, y) : y;
    out.present.insert(out.present.end(), r.present.begin(), r.present.end());
  }
  return out;
}

}  // namespace mobius
