// Task sentence-embedding: a sentence-transformers model as it is saved (modules.json beside
// config.json), the graph ending where SentenceTransformer.encode does:
//   modules : sentence_transformers Transformer (path "": the encoder of config.json), Pooling
//             (<path>/config.json: pooling_mode, or the pooling_mode_* flags of older saves),
//             Dense (<path>/config.json: in_features, out_features, bias, activation_function;
//             <path>/model.safetensors: linear.weight / linear.bias), Normalize; in that order,
//             Dense and Normalize optional, any other module an error naming it
//   inputs  : the encoder's (tasks/feature_extraction.h)
//   outputs : token_embeddings [batch_size, sequence_length, hidden_size] (last_hidden_state) and
//             sentence_embedding [batch_size, embedding_size] (Optimum's names for the
//             sentence_transformers library)
// Pooling modes (sentence_transformers Pooling._forward_padded), over the attention mask, several
// concatenated in their order: cls (the first token the mask keeps), mean, mean_sqrt_len_tokens,
// max, weightedmean (weights 1, 2, ... counted from the first kept token), lasttoken (the last kept
// token). encode's prompts are text the caller prepends: include_prompt is not read (it excludes a
// prompt's tokens from pooling only when encode is given prompt_length).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tasks/architecture.h"
#include "weights/checkpoint.h"

namespace mobius {

struct SentenceDense {
  std::string path;  // its directory, e.g. 2_Dense: the weights are <path>.linear.weight / .bias
  int64_t in_features, out_features;
  bool bias = true;
  std::string activation;  // activation name (blocks/activation.h), "" for Identity
};

struct SentenceModules {
  std::vector<std::string> pooling;  // modes, in the order their vectors are concatenated
  std::vector<SentenceDense> dense;
  bool normalize = false;
};

// Pooling `mode` (one of the modes above) of x [batch, seq, hidden] over attention_mask int64
// [batch, seq] -> [batch, hidden] (sentence_transformers Pooling._forward_padded); the text heads
// pool with it too (tasks/text_heads.h).
Value* sentence_pool(Ops& op, const std::string& mode, Value* x, Value* attention_mask);

// Whether `dir` holds a sentence-transformers model (modules.json).
bool has_sentence_modules(const std::string& dir);

// Reads modules.json and the modules' config files of `dir`. Throws mobius::Error naming the file
// and field: a module mobius does not build, a Transformer elsewhere than the model's own
// directory, an unknown pooling mode, a Dense activation it has no name for or with use_residual.
SentenceModules read_sentence_modules(const std::string& dir);

// The sentence-embedding model of `encoder` (an Encoder of task feature-extraction, its weights
// read as they are named) and `modules`. Throws mobius::Error when `encoder` is not a text encoder
// or a Dense layer's in_features is not the pooled width.
std::unique_ptr<Architecture> with_sentence_embedding(std::unique_ptr<Architecture> encoder,
                                                      const SentenceModules& modules);

// `checkpoint` plus each Dense layer's own safetensors (<dir>/<path>/), its tensors named
// <path>.<key> (2_Dense.linear.weight).
std::unique_ptr<Checkpoint> with_module_weights(std::unique_ptr<Checkpoint> checkpoint, const std::string& dir,
                                                const SentenceModules& modules);

}  // namespace mobius
