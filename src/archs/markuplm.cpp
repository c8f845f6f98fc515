// MarkupLM (transformers/models/markuplm/modeling_markuplm.py, configuration_markuplm.py;
// MarkupLMModel): BERT's layers and heads (archs/bert.h bert_spec, base_model_prefix "markuplm")
// over embeddings that also read each token's XPath, the graph inputs xpath_tags_seq and
// xpath_subs_seq (int64 [batch_size, sequence_length, max_depth], as MarkupLMModel.forward names
// them):
//   LayerNorm(word_embeddings(input_ids) + position_embeddings(RoBERTa's positions from the ids,
//             padding_idx pad_token_id) + token_type_embeddings(token_type_ids) + xpath)
//   xpath = inner2emb(relu(xpath_unitseq2_inner(concat_d(xpath_tag_sub_embeddings.d(tags[..., d]))
//                                              + concat_d(xpath_subs_sub_embeddings.d(subs[..., d])))))
//   (XPathEmbeddings; its xpath_unitseq2_embeddings is never called: unread)
// Heads: text-classification (markuplm.pooler + classifier), token-classification,
// question-answering; no fill-mask or multiple-choice class.
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

struct XPathSpec {
  int64_t max_depth, unit_size, tag_vocab, subs_vocab;
};

// XPathEmbeddings: tags, subs int64 [batch, seq, max_depth] -> [batch, seq, hidden].
class XPathEmbeddings : public Module {
 public:
  XPathEmbeddings(const EncoderSpec& s, const XPathSpec& x) : depth_(x.max_depth) {
    for (int64_t d = 0; d < x.max_depth; ++d)
      tags.push_back(child<Embedding>("xpath_tag_sub_embeddings." + std::to_string(d), x.tag_vocab, x.unit_size, s.dtype));
    for (int64_t d = 0; d < x.max_depth; ++d)
      subs.push_back(child<Embedding>("xpath_subs_sub_embeddings." + std::to_string(d), x.subs_vocab, x.unit_size, s.dtype));
    inner = child<Linear>("xpath_unitseq2_inner", LinearOptions{x.unit_size * x.max_depth, 4 * s.hidden_size, true, s.dtype});
    inner2emb = child<Linear>("inner2emb", LinearOptions{4 * s.hidden_size, s.hidden_size, true, s.dtype});
  }
  Value* forward(Ops& op, Value* tag_ids, Value* sub_ids) const {
    auto s = enter(op);
    const std::vector<int64_t> ones(static_cast<size_t>(depth_), 1);
    std::vector<Value*> t = op.Split(tag_ids, ones, {.axis = 2}), u = op.Split(sub_ids, ones, {.axis = 2});
    std::vector<Value*> tag_parts, sub_parts;
    for (int64_t d = 0; d < depth_; ++d) {
      tag_parts.push_back(tags[d]->forward(op, op.Squeeze(t[d], {2})));
      sub_parts.push_back(subs[d]->forward(op, op.Squeeze(u[d], {2})));
    }
    auto concat = [&](const std::vector<Value*>& v) { return v.size() == 1 ? v[0] : op.Concat(v, {.axis = -1}); };
    Value* x = op.Add(concat(tag_parts), concat(sub_parts));
    return inner2emb->forward(op, op.Relu(inner->forward(op, x)));
  }
  std::vector<Embedding*> tags, subs;
  Linear *inner, *inner2emb;

 private:
  int64_t depth_;
};

// MarkupLMEmbeddings (blocks/encoder.h TokenEmbeddings): input_ids, token_type_ids,
// xpath_tags_seq and xpath_subs_seq (EncoderInputs::extra) -> [batch, seq, hidden].
class MarkupLMEmbeddings : public TokenEmbeddings {
 public:
  MarkupLMEmbeddings(const EncoderSpec& s, const XPathSpec& x) : padding_idx_(s.padding_idx) {
    words = child<Embedding>("word_embeddings", s.vocab_size, s.hidden_size, s.dtype);
    position_embeddings = child<Embedding>("position_embeddings", s.max_position_embeddings, s.hidden_size, s.dtype);
    xpath_embeddings = child<XPathEmbeddings>("xpath_embeddings", s, x);
    token_type_embeddings = child<Embedding>("token_type_embeddings", s.type_vocab_size, s.hidden_size, s.dtype);
    layer_norm = child<LayerNorm>("LayerNorm", NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype});
  }
  const Embedding* word_embeddings() const override { return words; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    auto s = enter(op);
    Value* positions = token_positions(op, in.input_ids, PositionIds::kFromInputIds, padding_idx_);
    Value* x = op.Add(words->forward(op, in.input_ids), position_embeddings->forward(op, positions));
    x = op.Add(x, token_type_embeddings->forward(op, in.token_type_ids));
    x = op.Add(x, xpath_embeddings->forward(op, in.extra[0], in.extra[1]));
    return layer_norm->forward(op, x);
  }

  Embedding *words, *position_embeddings, *token_type_embeddings;
  XPathEmbeddings* xpath_embeddings;
  LayerNorm* layer_norm;

 private:
  int64_t padding_idx_;
};

}  // namespace

std::unique_ptr<Architecture> create_markuplm(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_spec(c, dtype, "markuplm", "MarkupLMModel");
  if (s.type_vocab_size <= 0) c.fail("type_vocab_size", "expected at least one token type");
  s.padding_idx = c.int_or("pad_token_id", 0);
  s.heads->missing = {"fill-mask", "multiple-choice"};
  XPathSpec x{.max_depth = c.int_or("max_depth", 50), .unit_size = c.int_or("xpath_unit_hidden_size", 32),
              .tag_vocab = c.int_or("max_xpath_tag_unit_embeddings", 256),
              .subs_vocab = c.int_or("max_xpath_subs_unit_embeddings", 1024)};
  if (x.max_depth < 1 || x.max_depth > kMaxSmallSize) c.fail("max_depth", "expected 1 .. 4096");
  if (x.unit_size < 1 || x.unit_size * x.max_depth > kMaxHiddenSize)
    c.fail("xpath_unit_hidden_size", "expected a positive width (times max_depth at most 131072)");
  if (x.tag_vocab < 1) c.fail("max_xpath_tag_unit_embeddings", "expected a positive table size");
  if (x.subs_vocab < 1) c.fail("max_xpath_subs_unit_embeddings", "expected a positive table size");
  return std::make_unique<PostNormEncoder>(
      s, EncoderParts{.embeddings = std::make_unique<MarkupLMEmbeddings>(s, x),
                      .extra_inputs = {{"xpath_tags_seq", {x.max_depth}}, {"xpath_subs_seq", {x.max_depth}}}});
}

}  // namespace mobius
