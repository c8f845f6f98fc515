#include "blocks/encoder.h"

#include "blocks/spec_check.h"

#include "blocks/activation.h"

namespace mobius {

AttentionOptions encoder_attention(const HfConfig& c, int64_t hidden, DataType dtype, AttentionNames names,
                                   const std::string& heads_field, const std::string& hidden_field) {
  const int64_t heads = c.get_int(heads_field);
  if (heads <= 0 || hidden % heads != 0) c.fail(heads_field, "must divide " + hidden_field);
  return AttentionOptions{.hidden_size = hidden, .num_attention_heads = heads, .num_key_value_heads = heads,
                          .head_dim = hidden / heads, .qkv_bias = true, .o_bias = true, .dtype = dtype,
                          .names = std::move(names)};
}

EncoderEmbeddings::EncoderEmbeddings(const EncoderSpec& s)
    : kind_(s.position_ids),
      padding_idx_(s.padding_idx),
      position_offset_(s.position_offset),
      zeroed_word_row_(s.zeroed_word_row) {
  const int64_t dim = s.embedding_size ? s.embedding_size : s.hidden_size;
  word_embeddings = child<Embedding>("word_embeddings", s.vocab_size, dim, s.dtype);
  if (s.rope_table.empty())
    position_embeddings = child<Embedding>("position_embeddings", s.max_position_embeddings, dim, s.dtype);
  if (s.type_vocab_size > 0)
    token_type_embeddings = child<Embedding>("token_type_embeddings", s.type_vocab_size, dim, s.dtype);
  if (!s.embeddings_norm.empty())
    layer_norm = child<LayerNorm>(s.embeddings_norm, NormOptions{.dim = dim, .eps = s.layer_norm_eps, .dtype = s.dtype});
}

Value* token_positions(Ops& op, Value* input_ids, PositionIds kind, int64_t padding_idx) {
  if (kind == PositionIds::kArange) {
    Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
    return op.Range(op.builder().scalar_i64(0), seq, op.builder().scalar_i64(1));
  }
  Value* is_token = op.Cast(op.Not(op.Equal(input_ids, static_cast<double>(padding_idx))),
                            {.to = DataType::INT64});
  Value* count = op.CumSum(is_token, op.builder().scalar_i64(1));
  return op.Add(op.Mul(count, is_token), static_cast<double>(padding_idx));
}

Value* EncoderEmbeddings::forward(Ops& op, Value* input_ids, Value* token_type_ids) const {
  auto s = enter(op);
  Value* x = word_embeddings->forward(op, input_ids);
  if (zeroed_word_row_ >= 0) {
    Value* kept = op.Not(op.Equal(input_ids, static_cast<double>(zeroed_word_row_)));
    x = op.Mul(x, op.Unsqueeze(op.Cast(kept, {.to = x->dtype}), {-1}));
  }
  if (token_type_embeddings) x = op.Add(x, token_type_embeddings->forward(op, token_type_ids));
  if (position_embeddings) {
    Value* positions = token_positions(op, input_ids, kind_, padding_idx_);
    if (position_offset_) positions = op.Add(positions, static_cast<double>(position_offset_));
    x = op.Add(x, position_embeddings->forward(op, positions));
  }
  return layer_norm ? layer_norm->forward(op, x) : x;
}

EncoderLayer::EncoderLayer(const EncoderSpec& s) : EncoderLayer(s, std::make_unique<Attention>(s.attention)) {}

EncoderLayer::EncoderLayer(const EncoderSpec& s, std::unique_ptr<Attention> own_attention)
    : act_(s.hidden_act), placement_(s.placement) {
  const EncoderLayerNames& n = s.names;
  NormOptions norm{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype};
  attention = adopt(n.attention, std::move(own_attention));
  attention_norm = child<LayerNorm>(n.attention_norm, norm);
  ffn_in = child<Linear>(n.ffn_in, LinearOptions{s.hidden_size, s.intermediate_size, true, s.dtype});
  ffn_out = child<Linear>(n.ffn_out, LinearOptions{s.intermediate_size, s.hidden_size, true, s.dtype});
  ffn_norm = child<LayerNorm>(n.ffn_norm, norm);
}

Value* EncoderLayer::forward(Ops& op, Value* x, const AttentionContext& ctx) const {
  auto s = enter(op);
  if (placement_ == NormPlacement::pre) {
    Value* h = op.Add(x, attention->forward(op, attention_norm->forward(op, x), ctx, nullptr, nullptr).hidden);
    Value* f = ffn_out->forward(op, activation(op, act_, ffn_in->forward(op, ffn_norm->forward(op, h))));
    return ffn_residual(op, op.Add(h, f));
  }
  Value* a = attention->forward(op, x, ctx, nullptr, nullptr).hidden;
  Value* h = attention_norm->forward(op, op.Add(a, x));
  Value* f = ffn_out->forward(op, activation(op, act_, ffn_in->forward(op, h)));
  return ffn_norm->forward(op, ffn_residual(op, op.Add(f, h)));
}

PostNormEncoder::PostNormEncoder(const EncoderSpec& s, EncoderParts parts)
    : spec_(s), extra_inputs_(std::move(parts.extra_inputs)) {
  check_spec(s);
  if (parts.embeddings)
    token_embeddings = adopt("embeddings", std::move(parts.embeddings));
  else
    embeddings = child<EncoderEmbeddings>("embeddings", s);
  if (s.embedding_size && s.embedding_size != s.hidden_size)
    embeddings_project = child<Linear>(
        s.embeddings_project, LinearOptions{s.embedding_size, s.hidden_size, true, s.dtype});
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    layers.push_back(adopt(s.layers + "." + std::to_string(i),
                           parts.make_layer ? parts.make_layer(s, i) : std::make_unique<EncoderLayer>(s)));
  if (s.relative_attention_num_buckets > 0)
    relative_attention_bias = child<RelativePositionBias>(
        "encoder.relative_attention_bias",
        RelativePositionBiasOptions{.num_buckets = s.relative_attention_num_buckets, .max_distance = 128,
                                    .num_heads = s.attention.num_attention_heads, .bidirectional = true,
                                    .dtype = s.dtype});
  if (!s.rope_table.empty())
    rope_table = child<Embedding>(s.rope_table, s.max_position_embeddings, s.attention.head_dim, s.dtype);
  if (!s.final_norm.empty())
    final_norm = child<LayerNorm>(s.final_norm, NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype});
}

Value* PostNormEncoder::forward(Ops& op, const EncoderInputs& in) const {
  Value* h = embeddings ? embeddings->forward(op, in.input_ids, in.token_type_ids) : token_embeddings->forward(op, in);
  if (embeddings_project) h = embeddings_project->forward(op, h);
  Value* mask = padding_mask(op, in.attention_mask, spec_.dtype);
  if (relative_attention_bias) {  // [1, heads, seq, seq]
    Value* seq = op.Shape(in.input_ids, {.start = 1, .end = 2});
    mask = op.Add(mask, relative_attention_bias->forward(op, op.builder().ints({0}), seq, seq));
  }
  AttentionContext ctx{mask};
  if (rope_table) {  // rows 0..seq-1 of the table, split in sin and cos: [batch, seq, head_dim / 2] each
    GraphBuilder& b = op.builder();
    Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
    Value* positions = op.Expand(op.Range(b.scalar_i64(0), seq, b.scalar_i64(1)), op.Shape(in.input_ids));
    Value* rows = rope_table->forward(op, positions);
    const int64_t half = spec_.attention.head_dim / 2;
    std::vector<Value*> sin_cos = op.Split(rows, {half, half}, {.axis = 2});
    ctx.rope = RopeTables{.cos = sin_cos[1], .sin = sin_cos[0], .rotary_dim = 0};
  }
  for (const EncoderLayer* layer : layers) h = layer->forward(op, h, ctx);
  return final_norm ? final_norm->forward(op, h) : h;
}

}  // namespace mobius
