// Learned absolute position embeddings: a table of position vectors added to the token
// embeddings, looked up by position_ids (plus a fixed offset).
//   GPT-2, GPTBigCode, GPT-Neo: wpe(position_ids)            (transformers/models/gpt2, ...)
//   OPT: embed_positions(position_ids + 2), the table 2 rows longer than max_position_embeddings
//        (OPTLearnedPositionalEmbedding, transformers/models/opt/modeling_opt.py; OPTDecoder uses
//        the position_ids it is given, else cumsum(attention_mask) * attention_mask - 1)
#pragma once

#include "blocks/linear.h"

namespace mobius {

class LearnedPositionEmbedding : public Embedding {
 public:
  // num_embeddings rows (max_position_embeddings + offset), embedding_dim wide.
  LearnedPositionEmbedding(int64_t num_embeddings, int64_t embedding_dim, int64_t offset,
                           DataType dtype);
  // position_ids: int64 [batch, seq] -> [batch, seq, embedding_dim].
  Value* forward(Ops& op, Value* position_ids) const;

 private:
  int64_t offset_;
};

}  // namespace mobius
