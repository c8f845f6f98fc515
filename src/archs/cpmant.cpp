// CPM-Ant (transformers/models/cpmant/modeling_cpmant.py, configuration_cpmant.py, 5.23):
//   CpmAntModel.forward puts prompt_length prompt tokens (ids vocab_size + 2 * prompt_length ..
//   vocab_size + 3 * prompt_length - 1, rows of cpmant.input_embedding after the vocabulary's)
//   ahead of the text at the first step; every token's embedding gets segment_embedding(segment),
//   segment 0 for the prompt and 2 for the text -> cpmant.encoder.layers.{i}: pre-RMSNorm
//   (CpmAntLayerNorm, eps) self_att.self_attention (project_q / k / v, attention_out, no bias,
//   scores / sqrt(dim_head) + the position bias) and ffn.ffn (w_in.w_0 gate under GELU, w_in.w_1
//   up, w_out) -> encoder.output_layernorm -> lm_head (its own weight: _tied_weights_keys is
//   empty, so tie_word_embeddings ties nothing); the prompt's positions are dropped from the
//   output.
//   Attention: CpmAntModel._prepare_attention_mask ORs in `context`, which forward fills with
//   ones: every query sees every key that is not padding, before and after it (the prompt of the
//   first step is read bidirectionally; a later step's tokens see the cache and each other). The
//   bias (CpmAntSegmentPositionEmbedding) of query position i and key position j: the
//   bidirectional T5 bucket of j - i (position_bias_num_buckets, position_bias_max_distance) when
//   both are in the same segment, else row num_buckets + segment(i) * segment_types + segment(j)
//   of relative_attention_bias [segment_types^2 + num_buckets, heads], shared by every layer.
// Padding: transformers takes id 0 for padding (left, by `length`) and reads no attention_mask;
// this graph reads attention_mask, as every text-generation package does: the two agree when the
// text's own ids are not 0 (CPM-Ant's vocabulary puts a special token there). The KV cache holds
// the prompt's prompt_length positions ahead of the attention_mask's (total = prompt_length +
// attention_mask's length), as transformers' cache does.
#include <cstring>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "blocks/decoder.h"
#include "blocks/relative_position_bias.h"
#include "blocks/spec_check.h"

namespace mobius {

namespace {

struct CpmAntOptions {
  int64_t prompt_length;
  int64_t segment_types;
  int64_t num_buckets;
  int64_t max_distance;
  int64_t num_heads;
};

// The text segment's id (the prompt's is 0): CpmAntModel.forward's torch.where(input_ids != 0, 2, 0).
constexpr int64_t kTextSegment = 2;

// CpmAntSegmentPositionEmbedding: the additive bias of the step's queries over every key.
class CpmAntSegmentPositionBias : public Module {
 public:
  explicit CpmAntSegmentPositionBias(const CpmAntOptions& o, DataType dtype) : o_(o) {
    relative_attention_bias =
        param("relative_attention_bias", {o.segment_types * o.segment_types + o.num_buckets, o.num_heads}, dtype);
  }
  // The segment (0 prompt, 2 text) of int64 positions.
  Value* segment(Ops& op, Value* positions) const {
    return op.Where(op.Less(positions, static_cast<double>(o_.prompt_length)), op.builder().scalar_i64(0),
                    op.builder().scalar_i64(kTextSegment));
  }
  // past, total: int64 scalars (the step's queries sit at positions past .. total - 1, the keys at
  // 0 .. total - 1). Returns [1, num_heads, total - past, total] in the model dtype.
  Value* forward(Ops& op, Value* past, Value* total) const {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    Value* q = op.Unsqueeze(op.Range(past, total, b.scalar_i64(1)), {1});              // [q, 1]
    Value* k = op.Unsqueeze(op.Range(b.scalar_i64(0), total, b.scalar_i64(1)), {0});  // [1, k]
    Value* same = relative_position_bucket(op, op.Sub(k, q), o_.num_buckets, o_.max_distance, true);
    Value* seg_q = segment(op, q), *seg_k = segment(op, k);
    Value* across = op.Add(op.Add(op.Mul(seg_q, static_cast<double>(o_.segment_types)), seg_k),
                           static_cast<double>(o_.num_buckets));
    Value* bucket = op.Where(op.Equal(seg_q, seg_k), same, across);                    // [q, k]
    Value* values = op.Gather(relative_attention_bias->value(op), bucket);             // [q, k, heads]
    return op.Unsqueeze(op.Transpose(values, {.perm = {2, 0, 1}}), {0});
  }
  Parameter* relative_attention_bias;

 private:
  CpmAntOptions o_;
};

class CpmAntCausalLM final : public DecoderCausalLM {
 public:
  CpmAntCausalLM(const DecoderSpec& s, const CpmAntOptions& o, int64_t vocab_size) : DecoderCausalLM(s), o_(o) {
    segment_embedding = child<Embedding>("cpmant.segment_embedding", o.segment_types, s.hidden_size, s.dtype);
    position_bias = child<CpmAntSegmentPositionBias>("cpmant.position_bias", o, s.dtype);
    for (int64_t i = 0; i < o.prompt_length; ++i) prompt_ids_.push_back(vocab_size + 2 * o.prompt_length + i);
  }

  // input_ids, attention_mask as every text-generation package; the prompt goes ahead of the first
  // step's tokens (the cache is empty: attention_mask is as long as input_ids) and its logits are
  // dropped.
  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    GraphBuilder& b = op.builder();
    const int64_t p = o_.prompt_length;
    Value* batch = op.Shape(in.input_ids, {.start = 0, .end = 1});
    Value* first = op.Equal(op.Shape(in.attention_mask, {.start = 1, .end = 2}),
                            op.Shape(in.input_ids, {.start = 1, .end = 2}));
    Value* n = op.Where(first, b.ints({p}), b.ints({0}));  // [1] prompt tokens this step
    Value* prompt = op.Slice(b.constant_i64(prompt_ids_, {1, p}), b.ints({0}), n, b.ints({1}));
    CausalLMInputs step = in;
    step.input_ids = op.Concat({op.Expand(prompt, op.Concat({batch, n}, {.axis = 0})), in.input_ids}, {.axis = 1});
    Value* ones = op.Expand(b.constant_i64(std::vector<int64_t>(static_cast<size_t>(p), 1), {1, p}),
                            op.Concat({batch, b.ints({p})}, {.axis = 0}));
    step.attention_mask = op.Concat({ones, in.attention_mask}, {.axis = 1});
    // the step's positions past .. total - 1 and their segments' embeddings
    Value* total = op.Squeeze(op.Shape(step.attention_mask, {.start = 1, .end = 2}), {0});
    Value* past = op.Sub(total, op.Squeeze(op.Shape(step.input_ids, {.start = 1, .end = 2}), {0}));
    Value* segments = position_bias->segment(op, op.Range(past, total, b.scalar_i64(1)));
    step.inputs_embeds = op.Add(embed(op, step.input_ids), op.Unsqueeze(segment_embedding->forward(op, segments), {0}));
    const uint8_t all = 1;
    step.attention_overlay = b.constant(DataType::BOOL, {1, 1, 1, 1}, {&all, 1});
    CausalLMOutputs out = DecoderCausalLM::forward(op, step);
    out.logits = op.Slice(out.logits, n, b.ints({INT64_MAX}), b.ints({1}));
    return out;
  }

  // Lowered as the graphs of the other tasks (passes/passes.h GraphLowering::attention):
  // GroupQueryAttention takes its total_sequence_length from attention_mask, which this cache
  // outgrows by the prompt.
  std::vector<NamedGraph> build_graphs() const override {
    return single_graph(build_model(), GraphLowering::attention);
  }

  Embedding* segment_embedding;
  CpmAntSegmentPositionBias* position_bias;

 protected:
  Value* attention_bias(Ops& op, const CausalLMInputs& step) const override {
    Value* total = op.Squeeze(op.Shape(step.attention_mask, {.start = 1, .end = 2}), {0});
    Value* past = op.Sub(total, op.Squeeze(op.Shape(step.inputs_embeds, {.start = 1, .end = 2}), {0}));
    return position_bias->forward(op, past, total);
  }

 private:
  CpmAntOptions o_;
  std::vector<int64_t> prompt_ids_;
};

}  // namespace

std::unique_ptr<Architecture> create_cpmant(const HfConfig& c, DataType dtype) {
  DecoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = c.get_int("num_hidden_layers");
  s.norm_eps = static_cast<float>(c.float_or("eps", 1e-6));
  if (!(s.norm_eps > 0.0f && s.norm_eps <= 1.0f)) c.fail("eps", "expected a value in (0, 1]");
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "full_attention");
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  s.names = {.model = "cpmant", .embed_tokens = "input_embedding", .layers = "encoder.layers",
             .norm = "encoder.output_layernorm", .self_attn = "self_att.self_attention", .mlp = "ffn.ffn",
             .input_layernorm = "self_att.layernorm_before_attention",
             .post_attention_layernorm = "ffn.layernorm_before_ffn"};
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = "dim_head", .default_head_dim = 128});
  a.names = {.q_proj = "project_q", .k_proj = "project_k", .v_proj = "project_v", .o_proj = "attention_out"};
  s.mlp = {.hidden_size = s.hidden_size, .intermediate_size = c.int_or("dim_ff", 10240), .hidden_act = "gelu",
           .dtype = dtype, .gate_name = "w_in.w_0", .gated_up_name = "w_in.w_1", .gated_down_name = "w_out"};
  check_size("dim_ff", s.mlp.intermediate_size, kMaxFfnSize);

  CpmAntOptions o{.prompt_length = c.int_or("prompt_length", 32), .segment_types = c.int_or("segment_types", 32),
                  .num_buckets = c.int_or("position_bias_num_buckets", 512),
                  .max_distance = c.int_or("position_bias_max_distance", 2048), .num_heads = a.num_attention_heads};
  const int64_t prompt_types = c.int_or("prompt_types", 32);
  check_size("prompt_length", o.prompt_length, kMaxPositions);
  // the prompt's ids vocab_size + 2 * prompt_length + i are rows of input_embedding
  check_size("prompt_types", prompt_types, kMaxVocabSize, 3);
  check_size("segment_types", o.segment_types, kMaxSmallSize, kTextSegment + 1);
  check_size("position_bias_num_buckets", o.num_buckets, kMaxPositions, 4);
  if (o.max_distance <= o.num_buckets / 4)
    c.fail("position_bias_max_distance", "must exceed position_bias_num_buckets / 4");
  s.embedding_rows = s.vocab_size + prompt_types * o.prompt_length;
  check_size("vocab_size + prompt_types * prompt_length", s.embedding_rows, kMaxVocabSize);
  return std::make_unique<CpmAntCausalLM>(s, o, s.vocab_size);
}

}  // namespace mobius
