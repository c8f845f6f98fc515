#include "archs/mrope_decoder.h"

#include <utility>

namespace mobius {

MRopeDecoder::MRopeDecoder(const DecoderSpec& s, std::vector<int64_t> section, bool interleaved)
    : DecoderCausalLM(s), section_(std::move(section)), interleaved_(interleaved) {}

RopeTables MRopeDecoder::position_tables(Ops& op, const RopeConfig& rope, Value* position_ids) const {
  std::vector<RopeTables> rows;
  for (int64_t k = 0; k < 3; ++k)
    rows.push_back(DecoderCausalLM::position_tables(op, rope, op.Gather(position_ids, op.builder().scalar_i64(k))));
  const int64_t half = section_[0] + section_[1] + section_[2];
  std::vector<std::vector<float>> select(3, std::vector<float>(static_cast<size_t>(half), 0.0f));
  for (int64_t j = 0, start = 0, k = 0; j < half; ++j) {
    int64_t row = 0;
    if (interleaved_) {
      row = j % 3 != 0 && j < 3 * section_[static_cast<size_t>(j % 3)] ? j % 3 : 0;
    } else {
      while (j >= start + section_[static_cast<size_t>(k)]) start += section_[static_cast<size_t>(k++)];
      row = k;
    }
    select[static_cast<size_t>(row)][static_cast<size_t>(j)] = 1.0f;
  }
  // sum over the rows of table * 0/1 channel mask: exactly the selected row's value
  auto pick = [&](Value* RopeTables::*table) {
    Value* out = nullptr;
    for (size_t k = 0; k < 3; ++k) {
      Value* mask = op.builder().constant_float(select[k], {half}, (rows[k].*table)->dtype);
      Value* term = op.Mul(rows[k].*table, mask);
      out = out ? op.Add(out, term) : term;
    }
    return out;
  };
  return {pick(&RopeTables::cos), pick(&RopeTables::sin), rows[0].rotary_dim};
}

}  // namespace mobius
