#include "blocks/position_embedding.h"

namespace mobius {

LearnedPositionEmbedding::LearnedPositionEmbedding(int64_t num, int64_t dim, int64_t offset,
                                                   DataType dtype)
    : Embedding(num, dim, dtype), offset_(offset) {}

Value* LearnedPositionEmbedding::forward(Ops& op, Value* position_ids) const {
  if (offset_ == 0) return Embedding::forward(op, position_ids);
  Value* ids = op.Add(position_ids, static_cast<double>(offset_));
  return Embedding::forward(op, ids);
}

}  // namespace mobius
