// LongCat-Flash (transformers/models/longcat_flash/modular_longcat_flash.py, 5.23): num_layers
// decoder layers, each with two multi-head latent attentions, two dense MLPs and one
// shortcut-connected MoE (LongcatFlashDecoderLayer), n1/n2 input_layernorm / post_attention_layernorm:
//   h1 = x + self_attn.0(n1.0(x));     m = n2.0(h1);  moe = mlp(m);  h2 = h1 + mlps.0(m)
//   h3 = h2 + self_attn.1(n1.1(h2));   out = h3 + mlps.1(n2.1(h3)) + moe
// Attention: DeepSeek-V3's MLA (blocks/mla.h; LongcatFlashMLA = DeepseekV32Attention without the
// indexer) with a Q-LoRA always, RoPE on interleaved pairs, and LoRA scales: q * sqrt(hidden_size /
// q_lora_rank) (folded into the softmax scale: it multiplies every q.k alike) and the normed kv
// latent * sqrt(hidden_size / kv_lora_rank) (MLAOptions::latent_scale). The RoPE tables cover
// head_dim channels (LongcatFlashRotaryEmbedding), which must be qk_rope_head_dim.
// MoE (LongcatFlashMoE): a router over n_routed_experts + zero_expert_num experts,
// LongcatFlashTopkRouter: p = softmax(classifier(x)) (transformers' logits in float32; here in the
// model dtype, scored in float32: blocks/moe_router.h), top-k of p + e_score_correction_bias picks,
// weights p * routed_scaling_factor, not renormalized (router_bias, read by getattr: a classifier
// bias); experts from n_routed_experts on are zero-computation (identity) experts
// (MoEOptions::identity_experts): their gate / up rows, which LongcatFlashExperts allocates and
// save_pretrained writes (experts.{e}.gate_proj / up_proj), are never read.
// The cache: transformers' DynamicCache has num_hidden_layers = 2 * num_layers layers, attention j
// of layer l at index 2l + j (layer_idx * 2 + i); the graph's past_key_values.{2l + j}.key|value
// follow it, each MLA's expanded keys and values (blocks/mla.h).
#include <cmath>

#include "archs/archs.h"
#include "archs/deepseek.h"
#include "archs/llama.h"
#include "blocks/spec_check.h"
#include "registry/config_defaults.h"

namespace mobius {
namespace {

struct LongcatFlashSpec {
  DecoderSpec base;  // sizes, norms, RoPE, the dense MLPs (ffn_hidden_size); num_hidden_layers 2 * num_layers
  int64_t num_layers;
  MLAOptions mla;
  MoEOptions moe;
};

// One LongcatFlashDecoderLayer (see the top of this file).
class LongcatFlashDecoderLayer : public Module {
 public:
  explicit LongcatFlashDecoderLayer(const LongcatFlashSpec& s) {
    mlp = child<SparseMoE>("mlp", s.moe);
    const NormOptions norm = s.base.norm();
    for (int i = 0; i < 2; ++i) {
      const std::string n = "." + std::to_string(i);
      self_attn[i] = child<MultiHeadLatentAttention>("self_attn" + n, s.mla);
      mlps[i] = adopt("mlps" + n, make_mlp(s.base.mlp));
      input_layernorm[i] = child<RMSNorm>("input_layernorm" + n, norm);
      post_attention_layernorm[i] = child<RMSNorm>("post_attention_layernorm" + n, norm);
    }
  }

  // x: [batch, seq, hidden]; past: the two attentions' key and value. Returns the output and
  // their present key and value, in that order.
  MixerResult forward(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
    auto s = enter(op);
    MixerResult out;
    Value* h = x;
    Value* shortcut = nullptr;
    for (int i = 0; i < 2; ++i) {
      AttentionResult a = self_attn[i]->forward(op, input_layernorm[i]->forward(op, h), ctx, past[2 * i], past[2 * i + 1]);
      h = op.Add(h, a.hidden);
      out.present.push_back(a.present_key);
      out.present.push_back(a.present_value);
      Value* m = post_attention_layernorm[i]->forward(op, h);
      if (i == 0) shortcut = mlp->forward(op, m);
      h = op.Add(h, mlps[i]->forward(op, m));
    }
    out.hidden = op.Add(h, shortcut);
    return out;
  }

  SparseMoE* mlp;
  MultiHeadLatentAttention* self_attn[2];
  FeedForward* mlps[2];
  RMSNorm *input_layernorm[2], *post_attention_layernorm[2];
};

class LongcatFlashModel : public Module {
 public:
  explicit LongcatFlashModel(const LongcatFlashSpec& s) {
    embed_tokens = child<Embedding>("embed_tokens", s.base.vocab_size, s.base.hidden_size, s.base.dtype);
    for (int64_t i = 0; i < s.num_layers; ++i) layers.push_back(child<LongcatFlashDecoderLayer>("layers." + std::to_string(i), s));
    norm = child<RMSNorm>("norm", s.base.norm());
  }
  Embedding* embed_tokens;
  std::vector<LongcatFlashDecoderLayer*> layers;
  RMSNorm* norm;
};

class LongcatFlashCausalLM : public CausalLM {
 public:
  explicit LongcatFlashCausalLM(LongcatFlashSpec s) : s_(std::move(s)) {
    check_spec(s_.base);
    check_moe(s_.moe, s_.base.mlp, true);
    model_ = child<LongcatFlashModel>("model", s_);
    const DecoderSpec& b = s_.base;
    lm_head_ = child<LMHead>("lm_head", LMHeadOptions{b.hidden_size, b.vocab_size, false, b.dtype},
                             b.tie_word_embeddings ? model_->embed_tokens : nullptr);
  }
  DataType dtype() const override { return s_.base.dtype; }
  int64_t vocab_size() const override { return s_.base.vocab_size; }

  // Two caches per layer: attention j of layer l is cache layer 2l + j.
  std::vector<LayerStates> layer_states() const override {
    std::vector<LayerStates> states;
    for (const LongcatFlashDecoderLayer* layer : model_->layers)
      for (const MultiHeadLatentAttention* a : layer->self_attn) states.push_back({a->state()});
    return states;
  }

  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    const DecoderSpec& b = s_.base;
    CausalLMOutputs out;
    Value* h;
    {
      auto scope = op.builder().scope("model");
      h = in.inputs_embeds ? in.inputs_embeds : model_->embed_tokens->forward(op, in.input_ids);
      Value* tokens = in.inputs_embeds ? in.inputs_embeds : in.input_ids;
      const AttentionContext ctx{causal_mask(op, in.attention_mask, tokens, b.dtype, 0, in.attention_overlay),
                                 rope_tables(op, b.rope, in.position_ids, b.dtype)};
      for (size_t l = 0; l < model_->layers.size(); ++l) {
        const std::vector<Value*>& first = in.past.at(2 * l);
        const std::vector<Value*>& second = in.past.at(2 * l + 1);
        const std::vector<Value*> past = {first.at(0), first.at(1), second.at(0), second.at(1)};
        MixerResult r = model_->layers[l]->forward(op, h, ctx, past);
        h = r.hidden;
        out.present.push_back({r.present[0], r.present[1]});
        out.present.push_back({r.present[2], r.present[3]});
      }
      h = model_->norm->forward(op, h);
    }
    out.logits = lm_head_->forward(op, h);
    return out;
  }

 private:
  LongcatFlashSpec s_;
  LongcatFlashModel* model_;
  LMHead* lm_head_;
};

}  // namespace

std::unique_ptr<Architecture> create_longcat_flash(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig mapped = with_attribute_map(config, {{"num_local_experts", "n_routed_experts"},
                                                      {"num_experts_per_tok", "moe_topk"},
                                                      {"intermediate_size", "ffn_hidden_size"},
                                                      {"moe_intermediate_size", "expert_ffn_hidden_size"}});
  // num_hidden_layers is a property, 2 * num_layers; config.json's num_hidden_layers, when set,
  // sets num_layers to half of it (its setter)
  nlohmann::json j = mapped.json();
  int64_t num_layers = mapped.int_or("num_layers", 28);
  if (mapped.has("num_hidden_layers")) num_layers = mapped.get_int("num_hidden_layers") / 2;
  check_size("num_layers", num_layers, kMaxLayers / 2);
  j["num_hidden_layers"] = 2 * num_layers;
  const HfConfig c(std::move(j), config.file(), config.prefix());

  LongcatFlashSpec s{llama_spec(c, dtype, {}, "ffn_hidden_size"), num_layers, {}, {}};
  s.base.mlp.bias = false;  // LongcatFlashMLP: no bias
  MLAOptions& a = s.mla;
  a = read_mla_options(c, s.base);
  if (!a.q_lora_rank) c.fail("q_lora_rank", "must be set: LongcatFlashMLA always projects queries through q_a_proj");
  const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  if (c.has("qk_head_dim") && c.get_int("qk_head_dim") != qk)
    c.fail("qk_head_dim", "must be qk_nope_head_dim + qk_rope_head_dim (" + std::to_string(qk) + ")");
  if (a.qk_rope_head_dim != s.base.attention.head_dim)
    c.fail("head_dim", "must equal qk_rope_head_dim (" + std::to_string(a.qk_rope_head_dim) +
                           "): LongcatFlashRotaryEmbedding's tables rotate those channels");
  a.rope_interleave = true;  // apply_rotary_pos_emb_interleave
  const double hidden = static_cast<double>(a.hidden_size);
  a.scale = static_cast<float>(mla_softmax_scale(a, s.base.rope) * std::sqrt(hidden / static_cast<double>(*a.q_lora_rank)));
  a.latent_scale = static_cast<float>(std::sqrt(hidden / static_cast<double>(a.kv_lora_rank)));

  MoEOptions& m = s.moe;
  m.hidden_size = s.base.hidden_size;
  m.hidden_act = s.base.mlp.hidden_act;
  m.dtype = dtype;
  m.intermediate_size = c.int_or("expert_ffn_hidden_size", 2048);
  check_size("expert_ffn_hidden_size", m.intermediate_size, kMaxFfnSize);
  const int64_t routed = c.int_or("n_routed_experts", 512);
  check_size("n_routed_experts", routed, kMaxFfnSize);
  m.identity_experts = c.int_or("zero_expert_num", 256);  // an int: null refused (config defaults)
  check_size("zero_expert_num", m.identity_experts, kMaxFfnSize, 0);
  RouterOptions& r = m.router;
  r.kind = RouterKind::softmax_correction;
  r.num_experts = routed + m.identity_experts;
  r.top_k = c.int_or("moe_topk", 12);
  if (r.top_k < 1 || r.top_k > r.num_experts)
    c.fail("moe_topk", "must be between 1 and n_routed_experts + zero_expert_num (" + std::to_string(r.num_experts) + ")");
  r.routed_scaling_factor = static_cast<float>(c.float_or("routed_scaling_factor", 6.0));
  r.bias = c.bool_or("router_bias", false);  // getattr(config, "router_bias", False)
  m.router_name = "router.classifier";
  m.score_bias_name = "router.e_score_correction_bias";
  return std::make_unique<LongcatFlashCausalLM>(std::move(s));
}

}  // namespace mobius
