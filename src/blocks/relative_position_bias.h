// T5's relative position bias (transformers/models/t5/modeling_t5.py, T5Attention.compute_bias
// and _relative_position_bucket; Mesh TensorFlow's relative attention buckets): the scores of
// query i and key j get a learned per-head bias looked up by the bucket of j - i (i counted from
// the cache's start). Half the buckets (bidirectional: encoders) or all of them (decoders) cover
// distances below num_buckets / 4 (resp. / 2) exactly, the rest logarithmically up to
// max_distance; farther keys share the last bucket. The table is an nn.Embedding
// [num_buckets, num_heads] whose weight is this module's "weight" (the checkpoint's
// `relative_attention_bias.weight`). T5 computes it in the first layer and shares it across
// the stack; UMT5 (transformers/models/umt5/modeling_umt5.py) gives every layer its own.
#pragma once

#include "nn/module.h"

namespace mobius {

struct RelativePositionBiasOptions {
  int64_t num_buckets;   // config relative_attention_num_buckets
  int64_t max_distance;  // config relative_attention_max_distance
  int64_t num_heads;
  bool bidirectional;    // true in the encoder, false in the decoder's self-attention
  DataType dtype = DataType::FLOAT;
};

class RelativePositionBias : public Module {
 public:
  explicit RelativePositionBias(const RelativePositionBiasOptions& o);
  // past, query_length, key_length: int64 [1] (the query at row i sits at position past + i, the
  // keys at 0 .. key_length - 1). Returns the additive bias [1, num_heads, query_length,
  // key_length] in the model dtype.
  Value* forward(Ops& op, Value* past, Value* query_length, Value* key_length) const;
  // The bias of arbitrary distances: relative int64 [batch, q, k] (key - query) -> [batch,
  // num_heads, q, k] (LongT5TransientGlobalAttention.compute_side_bias' lookup).
  Value* lookup(Ops& op, Value* relative) const;

  Parameter* weight;  // [num_buckets, num_heads]

 private:
  RelativePositionBiasOptions o_;
};

// The bucket of each relative position (key - query), int64 of any shape -> int64 buckets in
// [0, num_buckets) (T5Attention._relative_position_bucket; CpmAntSegmentPositionEmbedding.
// _position_bucket, always bidirectional, computes the same): bidirectional, half the buckets for
// keys after the query; distances below half the (remaining) buckets exactly, the rest
// logarithmically up to max_distance in float32, truncated; farther ones the last bucket.
Value* relative_position_bucket(Ops& op, Value* relative, int64_t num_buckets, int64_t max_distance,
                                bool bidirectional);

}  // namespace mobius
