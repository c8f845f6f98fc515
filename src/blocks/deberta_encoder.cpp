#include "blocks/deberta_encoder.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/conv.h"
#include "blocks/linear.h"

namespace mobius {
namespace {

NormOptions layer_norm(const DebertaEncoderOptions& o) {
  return {.dim = o.hidden_size, .eps = o.layer_norm_eps, .dtype = o.dtype, .kind = NormKind::LayerNorm};
}

// "a|b" -> {"a", "b"}, each stripped of spaces.
std::vector<std::string> split_entries(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, '|');) {
    const size_t first = part.find_first_not_of(' ');
    out.push_back(first == std::string::npos ? "" : part.substr(first, part.find_last_not_of(' ') - first + 1));
  }
  return out;
}

}  // namespace

void read_disentangled_attention(const HfConfig& c, DisentangledAttentionOptions& a,
                                 const std::vector<std::string>& default_pos_att_type) {
  a.relative_attention = c.bool_or("relative_attention", false);
  const bool separate = a.projections == DisentangledProjections::kSeparate;
  a.share_att_key = separate && c.bool_or("share_att_key", false);
  std::vector<std::string> kinds = default_pos_att_type;
  if (c.json().contains("pos_att_type")) {
    const nlohmann::json& v = c.json()["pos_att_type"];
    kinds.clear();
    if (v.is_string()) {
      kinds = split_entries(v.get<std::string>());
    } else if (v.is_array()) {
      for (const auto& e : v) {
        if (!e.is_string()) c.fail("pos_att_type", "expected a list of \"c2p\" / \"p2c\"");
        kinds.push_back(e.get<std::string>());
      }
    } else if (!v.is_null()) {
      c.fail("pos_att_type", "expected a list of \"c2p\" / \"p2c\"");
    }
  }
  a.c2p = a.p2c = false;
  for (const std::string& k : kinds) {
    if (k == "c2p") a.c2p = true;
    else if (k == "p2c") a.p2c = true;
    else c.fail("pos_att_type", "unsupported entry '" + k + "' (expected c2p, p2c)");
  }
  a.position_buckets = separate ? c.int_or("position_buckets", -1) : -1;
  a.max_relative_positions = c.int_or("max_relative_positions", -1);
  if (a.max_relative_positions < 1) a.max_relative_positions = c.int_or("max_position_embeddings", 512);
  if (!a.relative_attention) return;
  if (a.position_buckets > kMaxPositions) c.fail("position_buckets", "expected at most 2^24");
  if (a.max_relative_positions > kMaxPositions) c.fail("max_relative_positions", "expected at most 2^24");
  if (a.span() < 1) c.fail("max_position_embeddings", "must be at least 1 (the relative embedding span)");
  if (a.position_buckets > 0 && a.position_buckets < 4)
    c.fail("position_buckets", "expected at least 4 (or <= 0 for no buckets)");
  if (a.position_buckets > 0 && a.max_relative_positions <= a.position_buckets / 2)
    c.fail("max_relative_positions", "must be above position_buckets / 2 (the log buckets' range)");
}

void read_deberta_v2_encoder(const HfConfig& c, DebertaEncoderOptions& o) {
  o.norm_rel_ebd = false;  // "layer_norm" among the "|"-separated, lowercased, stripped entries
  for (const std::string& part : split_entries(c.string_or("norm_rel_ebd", "none"))) {
    std::string lower = part;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    o.norm_rel_ebd = o.norm_rel_ebd || lower == "layer_norm";
  }
  o.conv_kernel_size = c.int_or("conv_kernel_size", 0);
  if (o.conv_kernel_size <= 0) return;
  if (o.conv_kernel_size % 2 == 0 || o.conv_kernel_size > kMaxHiddenSize)
    c.fail("conv_kernel_size", "expected an odd kernel size (ConvLayer keeps the length)");
  o.conv_groups = c.int_or("conv_groups", 1);
  if (o.conv_groups < 1 || o.hidden_size % o.conv_groups != 0)
    c.fail("conv_groups", std::to_string(o.conv_groups) + " must divide hidden_size " + std::to_string(o.hidden_size));
  o.conv_act = c.string_or("conv_act", "tanh");
  if (!is_known_activation(o.conv_act) || o.conv_act == "xielu")
    c.fail("conv_act", "unsupported activation '" + o.conv_act + "'");
}

DebertaLayer::DebertaLayer(const DebertaEncoderOptions& o) : act_(o.hidden_act) {
  self = child<DisentangledSelfAttention>("attention.self", o.attention);
  attention_dense = child<Linear>("attention.output.dense", LinearOptions{o.hidden_size, o.hidden_size, true, o.dtype});
  attention_norm = child<LayerNorm>("attention.output.LayerNorm", layer_norm(o));
  intermediate = child<Linear>("intermediate.dense", LinearOptions{o.hidden_size, o.intermediate_size, true, o.dtype});
  output = child<Linear>("output.dense", LinearOptions{o.intermediate_size, o.hidden_size, true, o.dtype});
  output_norm = child<LayerNorm>("output.LayerNorm", layer_norm(o));
}

Value* DebertaLayer::forward(Ops& op, Value* h, Value* rel, Value* index, Value* mask, Value* query_valid) const {
  auto s = enter(op);
  Value* a = self->forward(op, h, rel, index, mask, query_valid);
  a = attention_norm->forward(op, op.Add(attention_dense->forward(op, a), h));
  Value* i = activation(op, act_, intermediate->forward(op, a));
  return output_norm->forward(op, op.Add(output->forward(op, i), a));
}

DebertaConvLayer::DebertaConvLayer(const DebertaEncoderOptions& o) : act_(o.conv_act) {
  conv = child<Conv1d>("conv", Conv1dOptions{.in_channels = o.hidden_size, .out_channels = o.hidden_size,
                                             .kernel_size = o.conv_kernel_size,
                                             .padding = (o.conv_kernel_size - 1) / 2,
                                             .groups = o.conv_groups, .dtype = o.dtype});
  norm = child<LayerNorm>("LayerNorm", layer_norm(o));
}

Value* DebertaConvLayer::forward(Ops& op, Value* h0, Value* residual, Value* valid) const {
  auto s = enter(op);
  Value* out = op.Transpose(conv->forward(op, op.Transpose(h0, {.perm = {0, 2, 1}})), {.perm = {0, 2, 1}});
  Value* frame = valid ? op.Unsqueeze(valid, {-1}) : nullptr;
  if (frame) out = op.Where(frame, out, 0.0);
  Value* y = norm->forward(op, op.Add(residual, activation(op, act_, out)));
  return frame ? op.Where(frame, y, 0.0) : y;
}

DebertaEncoder::DebertaEncoder(const DebertaEncoderOptions& o) : o_(o) {
  for (int64_t i = 0; i < o.num_hidden_layers; ++i) layers.push_back(child<DebertaLayer>("layer." + std::to_string(i), o));
  if (o.attention.relative_attention) {
    rel_embeddings = child<Embedding>("rel_embeddings", 2 * o.attention.span(), o.hidden_size, o.dtype);
    if (o.norm_rel_ebd) rel_norm = child<LayerNorm>("LayerNorm", layer_norm(o));
  }
  if (o.conv_kernel_size > 0) conv = child<DebertaConvLayer>("conv", o);
}

Value* DebertaEncoder::forward(Ops& op, Value* h, Value* valid) const {
  auto s = enter(op);
  // get_attention_mask: query i may attend key j when both are tokens; a padded query's row is all
  // masked, its probabilities uniform over every key (XSoftmax): the padding mask, and the mean of
  // the values at the padded queries (DisentangledSelfAttention::forward's query_valid)
  Value* mask = valid ? padding_mask(op, op.Cast(valid, {.to = DataType::INT64}), o_.dtype) : nullptr;
  Value* query_valid = valid ? op.Unsqueeze(valid, {1, 3}) : nullptr;  // [batch, 1, seq, 1]
  Value* rel = nullptr;
  Value* index = nullptr;
  if (rel_embeddings) {
    rel = rel_embeddings->weight->value(op);
    if (rel_norm) rel = rel_norm->forward(op, rel);
    index = disentangled_position_index(op, op.Shape(h, {.start = 1, .end = 2}), o_.attention);
  }
  Value* h0 = h;
  for (size_t i = 0; i < layers.size(); ++i) {
    h = layers[i]->forward(op, h, rel, index, mask, query_valid);
    if (i == 0 && conv) h = conv->forward(op, h0, h, valid);
  }
  return h;
}

}  // namespace mobius
