// Linear (torch.nn.Linear): y = x @ W^T + b. The checkpoint stores weight [out, in]; mobius
// stores the initializer transposed, [in, out], so the graph is a plain MatMul (+ Add).
// With conv1d: GPT-2's Conv1D (transformers/pytorch_utils.py), y = x @ W + b, whose checkpoint
// weight already is [in, out] and is stored as it is.
// x: [..., in] -> [..., out], in the model dtype.
#pragma once

#include "nn/module.h"

namespace mobius {

struct LinearOptions {
  int64_t in_features;
  int64_t out_features;
  bool bias = false;
  DataType dtype = DataType::FLOAT;
  bool conv1d = false;  // checkpoint weight [in, out] (Conv1D), not [out, in]
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
  // With `bias` [num] it is added (Gemm input C). The Gemm is tagged NodeTags::lm_head.
  Value* attend(Ops& op, Value* x, Value* bias = nullptr) const;

  Parameter* weight;
  int64_t num_embeddings, embedding_dim;
};

struct LMHeadOptions {
  int64_t hidden_size;
  int64_t vocab_size;
  bool bias = false;
  DataType dtype = DataType::FLOAT;
};

// The projection to vocabulary logits: x [batch, seq, hidden_size] -> [batch, seq, vocab_size].
// A Linear (weight + optional bias), or with `tied` the embedding matrix (Embedding::attend) plus
// this module's own bias if it has one: transformers ties only lm_head.weight, so e.g.
// PhiForCausalLM with tie_word_embeddings keeps lm_head.bias. The product is tagged NodeTags::lm_head.
class LMHead : public Module {
 public:
  LMHead(const LMHeadOptions& o, const Embedding* tied);
  Value* forward(Ops& op, Value* x) const;

  Parameter* weight = nullptr;  // null when tied
  Parameter* bias = nullptr;

 private:
  const Embedding* tied_;
};

}  // namespace mobius
