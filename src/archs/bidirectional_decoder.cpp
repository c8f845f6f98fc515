#include "archs/bidirectional_decoder.h"

#include <map>

#include "blocks/local_attention_mask.h"
#include "blocks/spec_check.h"

namespace mobius {

BidirectionalDecoder::BidirectionalDecoder(const DecoderSpec& s, int64_t window, std::optional<TextHeadLayout> heads)
    : spec_(s), window_(window), heads_(std::move(heads)) {
  check_spec(s);
  model = child<TextDecoder>("", s);
}

Value* BidirectionalDecoder::forward(Ops& op, const EncoderInputs& in) const {
  GraphBuilder& b = op.builder();
  Value* h = model->embed_tokens->forward(op, in.input_ids);
  if (spec_.embed_scale != 1.0f) h = op.Mul(h, spec_.embed_scale);
  Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
  Value* positions = op.Expand(op.Range(b.scalar_i64(0), seq, b.scalar_i64(1)), op.Shape(in.input_ids));
  std::map<std::string, AttentionContext> contexts;
  for (const std::string& type : spec_.layer_types) {
    if (contexts.count(type)) continue;
    Value* mask = type == "sliding_attention" ? local_padding_mask(op, in.attention_mask, window_, spec_.dtype)
                                              : padding_mask(op, in.attention_mask, spec_.dtype);
    contexts.emplace(type, AttentionContext{mask, rope_tables(op, spec_.rope_for(type), positions, spec_.dtype)});
  }
  for (size_t i = 0; i < model->layers.size(); ++i)
    h = model->layers[i]->forward(op, h, contexts.at(spec_.layer_types[i]), {}).hidden;
  return model->norm ? model->norm->forward(op, h) : h;
}

}  // namespace mobius
