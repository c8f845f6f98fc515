// Linear (torch.nn.Linear): y = x @ W^T + b. The checkpoint stores weight [out, in]; mobius
// stores the initializer transposed, [in, out], so the graph is a plain MatMul (+ Add).
// x: [..., in] -> [..., out], in the model dtype.
#pragma once

#include "nn/module.h"

namespace mobius {

struct LinearOptions {
  int64_t in_features;
  int64_t out_features;
  bool bias = false;
  DataType dtype = DataType::FLOAT;
};

class Linear : public Module {
 public:
  explicit Linear(const LinearOptions& o);
  Value* forward(Ops& op, Value* x) const;

  Parameter* weight;
  Parameter* bias = nullptr;
};

// Embedding (torch.nn.Embedding): Gather rows of weight [num_embeddings, embedding_dim].
// ids: int64 [...] -> [..., embedding_dim].
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, DataType dtype);
  Value* forward(Ops& op, Value* ids) const;
  // Logits against the embedding matrix (tied LM head): x [batch, seq, dim] -> [batch, seq, num].
  Value* attend(Ops& op, Value* x) const;

  Parameter* weight;
  int64_t num_embeddings, embedding_dim;
};

}  // namespace mobius
