#include "blocks/decoder.h"

#include <map>

namespace mobius {

DecoderLayer::DecoderLayer(const DecoderSpec& s) {
  NormOptions norm{.dim = s.hidden_size, .eps = s.rms_norm_eps, .dtype = s.dtype};
  input_layernorm = child<RMSNorm>("input_layernorm", norm);
  self_attn = child<Attention>("self_attn", s.attention);
  post_attention_layernorm = child<RMSNorm>("post_attention_layernorm", norm);
  mlp = child<GatedMLP>("mlp", s.mlp);
}

AttentionResult DecoderLayer::forward(Ops& op, Value* x, const AttentionContext& ctx,
                                      Value* past_key, Value* past_value) const {
  auto s = enter(op);
  AttentionResult a = self_attn->forward(op, input_layernorm->forward(op, x), ctx, past_key, past_value);
  Value* h = op.Add(x, a.hidden);
  a.hidden = op.Add(h, mlp->forward(op, post_attention_layernorm->forward(op, h)));
  return a;
}

TextDecoder::TextDecoder(const DecoderSpec& s) {
  embed_tokens = child<Embedding>("embed_tokens", s.vocab_size, s.hidden_size, s.dtype);
  for (int64_t i = 0; i < s.num_hidden_layers; ++i)
    layers.push_back(child<DecoderLayer>("layers." + std::to_string(i), s));
  norm = child<RMSNorm>("norm", NormOptions{.dim = s.hidden_size, .eps = s.rms_norm_eps, .dtype = s.dtype});
}

DecoderCausalLM::DecoderCausalLM(const DecoderSpec& s) : spec_(s) {
  model = child<TextDecoder>("model", s);
  if (!s.tie_word_embeddings)
    lm_head = child<Linear>("lm_head", LinearOptions{s.hidden_size, s.vocab_size, false, s.dtype});
}

CacheLayout DecoderCausalLM::cache_layout() const {
  return {spec_.num_hidden_layers, spec_.attention.num_key_value_heads, spec_.attention.head_dim};
}

CausalLMOutputs DecoderCausalLM::forward(Ops& op, const CausalLMInputs& in) const {
  CausalLMOutputs out;
  Value* h;
  {
    auto s = op.builder().scope("model");
    h = model->embed_tokens->forward(op, in.input_ids);
    RopeTables rope = rope_tables(op, spec_.rope, in.position_ids, spec_.dtype);
    std::map<std::string, AttentionContext> ctx;  // one mask per layer type in use
    for (const std::string& type : spec_.layer_types) {
      if (ctx.count(type)) continue;
      int64_t window = type == "sliding_attention" ? spec_.sliding_window : 0;
      ctx[type] = {causal_mask(op, in.attention_mask, in.input_ids, spec_.dtype, window), rope};
    }
    for (size_t i = 0; i < model->layers.size(); ++i) {
      AttentionResult r = model->layers[i]->forward(op, h, ctx.at(spec_.layer_types[i]),
                                                    in.past.key[i], in.past.value[i]);
      h = r.hidden;
      out.present.key.push_back(r.present_key);
      out.present.value.push_back(r.present_value);
    }
    h = model->norm->forward(op, h);
  }
  out.logits = lm_head ? lm_head->forward(op, h) : model->embed_tokens->attend(op, h);
  return out;
}

}  // namespace mobius
