// Task feature-extraction: an encoder's per-token hidden states, transformers AutoModel's
// `last_hidden_state` (what sentence-transformers pools into sentence embeddings).
//   inputs : input_ids [batch_size, sequence_length] int64
//            attention_mask [batch_size, sequence_length] int64 (1 = token, 0 = padding)
//            token_type_ids [batch_size, sequence_length] int64 (only models with token type
//            embeddings; segment A = 0, B = 1)
//            the model's further inputs (Encoder::extra_inputs: RoC-BERT's input_shape_ids ...),
//            [batch_size, sequence_length, trailing...], int64 but BROS' bbox (float), named as its
//            transformers forward names them
//   outputs: last_hidden_state [batch_size, sequence_length, hidden_size], the model dtype
//            (FunnelBaseModel's: [batch_size, pooled_length, hidden_size], its last block's pooled
//            states; hidden_size: Encoder::hidden_size(), AltCLIP's project_dim)
//            pooler_output [batch_size, hidden_size] (only the models whose forward_outputs gives
//            one: CANINE's, pooled from its deep encoder's molecules, not from last_hidden_state;
//            the contrastive models' text towers', archs/contrastive_text_towers.cpp)
// Padding may be on either side; the values at padded positions are unspecified (transformers
// computes them too, but no consumer reads them).
#pragma once

#include <string>
#include <vector>

#include "tasks/architecture.h"

namespace mobius {

class Embedding;
struct TextHeadLayout;

// An input a text encoder reads beside input_ids / attention_mask / token_type_ids, named as its
// transformers forward names it, shaped [batch_size, sequence_length] + trailing.
struct ExtraInput {
  std::string name;
  std::vector<int64_t> trailing;  // sizes after sequence_length (LayoutLM's bbox: {4}); empty: none
  DataType dtype = DataType::INT64;  // BROS' bbox: float (normalized coordinates)
};

// An encoder's outputs: last_hidden_state and, where the model has its own (CANINE's from other
// states than last_hidden_state, the contrastive text towers' BertPooler), pooler_output [batch,
// hidden_size] (null: none).
struct EncoderOutputs {
  Value* last_hidden_state;
  Value* pooler_output = nullptr;
};

struct EncoderInputs {
  Value* input_ids;
  Value* attention_mask;
  Value* token_type_ids;      // null when the model has no token type embeddings
  std::vector<Value*> extra;  // Encoder::extra_inputs(), in their order
};

class Encoder : public Architecture {
 public:
  std::string task() const override { return "feature-extraction"; }
  std::vector<NamedGraph> build_graphs() const override {
    return single_graph(build_model(), GraphLowering::attention);
  }
  // The one graph, "model".
  Model build_model() const;
  // The graph inputs of a text encoder: input_ids, attention_mask int64 [batch_size,
  // sequence_length], token_type_ids when the model has token type embeddings, then extra_inputs().
  EncoderInputs token_inputs(GraphBuilder& b) const;
  // The model's further inputs (none by default).
  virtual std::vector<ExtraInput> extra_inputs() const { return {}; }

  virtual DataType dtype() const = 0;
  virtual int64_t hidden_size() const = 0;
  virtual bool has_token_type_ids() const = 0;
  // Returns last_hidden_state [batch, seq, hidden_size].
  virtual Value* forward(Ops& op, const EncoderInputs& in) const = 0;
  // The name of last_hidden_state's second axis in the graph's output: "sequence_length" (one
  // state per token); a model with fewer states names its own (FunnelBaseModel: "pooled_length").
  virtual std::string output_length() const { return "sequence_length"; }
  // forward's last_hidden_state and the pooler_output of a model that has its own (default: none).
  virtual EncoderOutputs forward_outputs(Ops& op, const EncoderInputs& in) const { return {forward(op, in)}; }
  // The family's heads (tasks/text_heads.h), null when it has none; the word embeddings a masked-LM
  // decoder is tied to.
  virtual const TextHeadLayout* head_layout() const { return nullptr; }
  virtual const Embedding* word_embeddings() const { return nullptr; }
};

}  // namespace mobius
