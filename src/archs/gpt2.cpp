// GPT-2 (transformers/models/gpt2/modeling_gpt2.py): Conv1D projections (weights [in, out]),
// the fused c_attn [q | k | v], gelu_new, learned positions, tied lm_head. Attention scale
// 1/sqrt(head_dim) when scale_attn_weights, further divided by layer_idx + 1 when
// scale_attn_by_inverse_layer_idx. reorder_and_upcast_attn only changes the precision of
// float16/bfloat16 runs (scores upcast to float32), not the result in float32: it is accepted.
// add_cross_attention (an encoder-decoder use) is rejected.
#include "archs/gpt2.h"

#include <cmath>

#include "archs/archs.h"
#include "blocks/spec_check.h"

namespace mobius {

GptCausalLM::GptCausalLM(const GptSpec& s)
    : DecoderCausalLM(s.decoder), alibi_(s.alibi), fixed_positions_(s.fixed_positions) {
  const DecoderSpec& d = s.decoder;
  const std::string& m = d.names.model;
  if (const auto& p = s.positions) {
    check_position_table("max_position_embeddings", p->num_embeddings);
    embed_positions_ = child<LearnedPositionEmbedding>(m + "." + p->name, p->num_embeddings, d.hidden_size,
                                                       p->offset, d.dtype);
  }
  if (!s.embed_layernorm.empty()) embed_layernorm_ = adopt(m + "." + s.embed_layernorm, make_norm(d.norm()));
  if (const int64_t e = d.embedding_dim; e && e != d.hidden_size) {
    project_in_ = child<Linear>(m + ".project_in", LinearOptions{e, d.hidden_size, false, d.dtype});
    project_out_ = child<Linear>(m + ".project_out", LinearOptions{d.hidden_size, e, false, d.dtype});
  }
}

Value* GptCausalLM::stem(Ops& op, Value* h, const CausalLMInputs& in) const {
  if (project_in_) h = project_in_->forward(op, h);
  if (embed_positions_) h = op.Add(h, embed_positions_->forward(op, in.position_ids));
  if (fixed_positions_) h = op.Add(h, fixed_positions_(op, in.position_ids));
  return embed_layernorm_ ? embed_layernorm_->forward(op, h) : h;
}

Value* GptCausalLM::attention_bias(Ops& op, const CausalLMInputs& in) const {
  return alibi_ ? alibi_bias(op, *alibi_, in.attention_mask, spec().dtype) : nullptr;
}

Value* GptCausalLM::head_input(Ops& op, Value* h) const {
  h = DecoderCausalLM::head_input(op, h);
  return project_out_ ? project_out_->forward(op, h) : h;
}

DecoderSpec gpt_decoder_sizes(const HfConfig& c, DataType dtype, const char* hidden_size,
                              const char* num_hidden_layers) {
  DecoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int(hidden_size);
  s.num_hidden_layers = c.get_int(num_hidden_layers);
  s.norm_kind = NormKind::LayerNorm;
  s.norm_eps = static_cast<float>(c.float_or("layer_norm_epsilon", 1e-5));
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "full_attention");
  return s;
}

GptSpec gpt2_layout_spec(const HfConfig& c, DataType dtype, const Gpt2Fields& f) {
  if (c.bool_or("add_cross_attention", false))
    c.fail("add_cross_attention", "cross-attention is not supported for text generation");
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, f.hidden_size, f.num_layers),
            .positions = PositionEmbeddingSpec{"wpe", c.get_int(f.max_positions)}};
  DecoderSpec& s = g.decoder;
  s.names = {.model = "transformer", .embed_tokens = "wte", .layers = "h", .norm = "ln_f",
             .self_attn = "attn", .input_layernorm = "ln_1", .post_attention_layernorm = "ln_2"};
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype,
      {.num_attention_heads = f.num_heads, .num_key_value_heads = nullptr, .head_dim = nullptr});
  a.qkv_bias = a.o_bias = true;
  a.names.o_proj = "c_proj";
  s.mlp = {s.hidden_size, c.int_or(f.inner_dim, 4 * s.hidden_size),
           read_activation(c, "activation_function", f.default_activation), true, dtype,
           /*gated=*/false, /*fused_gate_up=*/false, "c_fc", "c_proj"};
  return g;
}

std::unique_ptr<Architecture> create_gpt2(const HfConfig& c, DataType dtype) {
  GptSpec g = gpt2_layout_spec(
      c, dtype, {"n_embd", "n_layer", "n_head", "n_positions", "n_inner", "gelu_new"});
  DecoderSpec& s = g.decoder;
  s.attention.fused_qkv = FusedQKV{.name = "c_attn"};
  s.attention.conv1d = s.mlp.conv1d = true;
  if (!c.bool_or("scale_attn_weights", true)) s.attention.scale = 1.0f;
  if (c.bool_or("scale_attn_by_inverse_layer_idx", false)) {
    // GPT2Attention: the scale further divided by layer_idx + 1
    check_attention(s.attention);
    s.make_attention = [a = s.attention](int64_t layer) {
      AttentionOptions o = a;
      const float scale = o.scale ? *o.scale : 1.0f / std::sqrt(static_cast<float>(o.head_dim));
      o.scale = scale / static_cast<float>(layer + 1);
      return std::make_unique<Attention>(o);
    };
  }
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
