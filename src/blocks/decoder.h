// The decoder stack of Llama-like models (transformers/models/llama/modeling_llama.py) and the
// options its relatives need. A layer's residual/norm topology is one LayerTopology (below); an
// empty names.input_layernorm / post_attention_layernorm means no norm before attn / mlp (OLMo 2,
// EXAONE 4: sandwich norms only, named post_attention_layernorm / post_feedforward_layernorm).
// Norms are RMSNorm or LayerNorm (with or without bias, or without any parameter) per norm_kind,
// optionally scaled by (1 + weight) (Gemma RMSNorm, Nemotron LayerNorm1P).
// DecoderCausalLM = model.embed_tokens (* embed_scale) (-> model.norm with embed_norm) ->
// model.layers.* -> model.norm -> lm_head (or the tied embedding, plus lm_head.bias when
// lm_head_bias) -> * logit_scale (-> c * tanh(logits / c), c = final_logit_softcapping), with one
// causal mask per layer type and one RoPE table per distinct RoPE config in use (rope_for); module
// names follow `names` (the HF state-dict keys).
// Mixture-of-experts relatives (archs/mixtral.cpp, deepseek.cpp, gpt_oss.cpp, jetmoe.cpp) swap in
// a SparseMoE feed-forward (blocks/moe.h) per layer, multi-head latent attention (blocks/mla.h) or
// a mixture of attention heads (blocks/moa.h), and GraniteMoE scales:
//   x0 = embed_tokens(ids) * embed_scale;  h = x + attn(n1(x)) * residual_multiplier;  likewise mlp
// GPT-2 / OPT / Bloom / MPT / Falcon (archs/gpt2.h) derive from DecoderCausalLM and override the
// steps around the layers (stem, attention_bias, head_input): learned absolute positions, ALiBi,
// a norm on the embeddings, OPT's project_in / project_out.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "blocks/attention.h"
#include "blocks/block_sparse_attention.h"
#include "blocks/dsa.h"
#include "blocks/mla.h"
#include "blocks/mlp.h"
#include "blocks/moa.h"
#include "blocks/moe.h"
#include "tasks/text_generation.h"

namespace mobius {

// Module names of the decoder, as the checkpoint spells them.
struct DecoderNames {
  std::string model = "model";                // gpt_neox, transformer
  std::string embed_tokens = "embed_tokens";  // embed_in, wte
  std::string layers = "layers";              // h
  std::string norm = "norm";                  // final_layernorm, final_layer_norm, ln_f; empty: none
  std::string lm_head = "lm_head";            // embed_out
  std::string self_attn = "self_attn";        // attention, attn
  std::string mlp = "mlp";
  std::string input_layernorm = "input_layernorm";  // ln_1
  std::string post_attention_layernorm = "post_attention_layernorm";
  std::string attn_output_norm = "post_self_attn_layernorm";  // LayerTopology::sandwich only
  std::string mlp_output_norm = "post_mlp_layernorm";         // LayerTopology::sandwich only
  // LayerTopology::sequential: [hidden] weights scaling the residual, h = w1 * x + attn(n1(x)),
  // out = w2 * h + mlp(n2(h)) (DogeDecoderLayer input_residual, post_attention_residual); empty: none
  std::string input_residual, post_attention_residual;
};

// The residual / norm topology of a decoder layer, n1 = input_layernorm, n2 = post_attention_layernorm:
enum class LayerTopology {
  sequential,            // h = x + attn(n1(x));  out = h + mlp(n2(h))                        (Llama)
  sandwich,              // sequential, attn and mlp outputs normalized (names.attn_output_norm,
                         // mlp_output_norm) before their residual add: GLM4, Gemma 2/3 (named
                         // post_attention_layernorm, pre_/post_feedforward_layernorm), OLMo 2
  parallel,              // out = x + attn(n1(x)) + mlp(n2(x))         (GPT-NeoX use_parallel_residual)
  parallel_shared_norm,  // out = x + attn(n1(x)) + mlp(n1(x)), no n2  (Phi, GPT-J, CodeGen, Cohere)
  norm_after_residual,   // h = n1(x + attn(x));  out = n2(h + mlp(h))  (OPT do_layer_norm_before false)
  residual_from_norm,    // h = n1(x) + attn(n1(x));  out = n2(h) + mlp(n2(h))
                         // (Bloom apply_residual_connection_post_layernorm)
};

// Scalar weights of a layer's two residual adds (MiniMaxDecoderLayer, transformers/models/minimax/
// modeling_minimax.py: full_attn_alpha_factor / beta, linear_attn_alpha_factor / beta per layer
// type, mlp_alpha_factor / beta), r the add's residual term and y its block output:
//   h = attn_residual * r + attn_output * y;  out = mlp_residual * r' + mlp_output * y'
// (with LayerTopology::residual_from_norm: r = n1(x), r' = n2(h)). A weight of 1 adds no node.
struct ResidualScales {
  float attn_residual = 1.0f, attn_output = 1.0f;
  float mlp_residual = 1.0f, mlp_output = 1.0f;
  bool unit() const {  // every weight 1
    return attn_residual == 1.0f && attn_output == 1.0f && mlp_residual == 1.0f && mlp_output == 1.0f;
  }
};

// A layer type's residual / norm topology and module names where they differ from the spec's
// (DecoderSpec::layer_type_layout; OLMo-Hybrid: OLMo 2's sandwich attention layers beside
// Llama-style linear-attention layers; MiniMax: residual weights per layer type).
struct LayerLayout {
  LayerTopology topology;
  DecoderNames names;  // the layer's names (self_attn, mlp, its norms); the model's are the spec's
  ResidualScales scales = {};  // not with LayerTopology::norm_after_residual
};

// The attention and the feed-forward of decoder layer `layer`, injected by the architecture file
// (DecoderSpec::make_attention / make_feed_forward); the factories of the relatives' parts follow
// DecoderSpec.
using AttentionFactory = std::function<std::unique_ptr<SelfAttention>(int64_t layer)>;
using FeedForwardFactory = std::function<std::unique_ptr<FeedForward>(int64_t layer)>;

// A hybrid's token mixer of one layer where it is not self-attention (a state mixer, e.g. Mamba-2's,
// blocks/mamba2.h; mixers side by side, blocks/parallel_mixers.h, under the name "") and its module
// name in the checkpoint (Bamba: "mamba"); a null mixer where the layer is self-attention
// (names.self_attn, make_attention).
struct LayerMixer {
  std::string name;
  std::unique_ptr<TokenMixer> mixer;
};
using LayerMixerFactory = std::function<LayerMixer(int64_t layer)>;

struct DecoderSpec {
  int64_t vocab_size;
  int64_t hidden_size;
  int64_t num_hidden_layers;
  float norm_eps = 1e-6f;
  NormKind norm_kind = NormKind::RMSNorm;
  bool norm_bias = true;                 // LayerNorm only
  bool norm_elementwise_affine = true;   // false: norms without parameters (OLMo, NanoChat)
  bool norm_weight_offset_one = false;   // norms scale by (1 + weight) (Nemotron LayerNorm1P)
  LayerTopology topology = LayerTopology::sequential;
  bool tie_word_embeddings = false;
  bool lm_head_bias = false;
  float logit_scale = 1.0f;
  float final_logit_softcapping = 0.0f;  // 0: none
  bool embed_norm = false;               // model.norm also normalizes the embeddings (NanoChat)
  bool rope_negated_sin = false;         // rotate_half(x) = cat(x2, -x1): rotation by -angle (NanoChat)
  // Ministral 3: q *= 1 + beta * log(1 + floor(position / original_max_position_embeddings)) after
  // RoPE (get_llama_4_attn_scale, transformers/models/ministral3/modeling_ministral3.py); 0: none
  float llama_4_scaling_beta = 0.0f;
  int64_t llama_4_original_max_position_embeddings = 0;
  // Llama 4's attention temperature tuning (Llama4TextAttention attn_temperature_tuning) on the
  // layers without RoPE (layer_uses_rope false): q *= 1 + nope_attn_scale * log(1 + floor((t + 1) /
  // nope_floor_scale)) after the q norm, t the query's cache index (not its position id); 0: none
  float nope_attn_scale = 0.0f;
  int64_t nope_floor_scale = 0;
  // Beam's scalable-softmax query scale on the layers without RoPE (compute_attention_scaling,
  // transformers/models/beam/modular_beam.py): q *= exp(exponent * log(1 + (position + 1) / length))
  // after the q norm, position the position id, in float32; exponent 0: none. Not with nope_attn_scale
  float nope_position_scale_exponent = 0.0f;
  double nope_position_scale_length = 0.0;
  int64_t sliding_window = 0;           // window of "sliding_attention" layers
  int64_t attention_chunk_size = 0;     // chunk of "chunked_attention" layers (causal_mask's chunk_size)
  // per layer: "full_attention" | "sliding_attention" | "chunked_attention"
  std::vector<std::string> layer_types;
  std::vector<bool> layer_uses_rope;     // per layer; empty: every layer (Cohere2: sliding only)
  // per layer: whether it has names.input_layernorm; empty: every layer (ModernBERT decoder: none
  // in layer 0, nn.Identity)
  std::vector<bool> layer_input_norm;
  AttentionOptions attention;
  MLPOptions mlp;
  RopeConfig rope;                       // RoPE of every layer type not in layer_type_rope
  std::map<std::string, RopeConfig> layer_type_rope;  // per layer type (Gemma3, OLMo 3 rope_parameters)
  // per layer type: its topology and names when not `topology` and `names` (OLMo-Hybrid), its
  // residual weights (MiniMax)
  std::map<std::string, LayerLayout> layer_type_layout;
  // per layer: its residual weights where they depend on the layer, not its type (Beam's
  // depth_scaled_residual_add); empty: its layout's
  std::vector<ResidualScales> layer_scales;
  DataType dtype = DataType::FLOAT;
  DecoderNames names;
  float embed_scale = 1.0f;              // GraniteMoE embedding_multiplier; Gemma hidden_size**0.5
  // Mixture-of-experts relatives (see the top of this file).
  float residual_multiplier = 1.0f;
  std::optional<float> layer_norm_eps;  // of the layers' norms when not norm_eps (JetMoE: 1e-6)
  // The parts of each layer (names.self_attn, names.mlp); null: Attention(attention, with the
  // layer's window and scale) and make_mlp(mlp).
  AttentionFactory make_attention;
  FeedForwardFactory make_feed_forward;
  // Hybrids: the token mixer of each layer chosen by the config's layer pattern; null (or a null
  // mixer for a layer): self-attention. A state mixer's layer gets no mask or RoPE table (its
  // layer_types entry names its kind, e.g. "mamba"); it reads AttentionContext::token_mask.
  LayerMixerFactory make_mixer;
  // A layer's norm under `name` (one of its names' norms) when not make_norm of the layers' options;
  // null (or a null result): that (A.X-K2's gated RMSNorms, blocks/norms.h GatedNorm).
  std::function<std::unique_ptr<Norm>(int64_t layer, const std::string& name)> make_layer_norm;
  // The width of embed_tokens and of the LM head's input when not hidden_size (OPT's
  // word_embed_proj_dim); the architecture projects in and out (archs/gpt2.h). 0: hidden_size.
  int64_t embedding_dim = 0;
  // The rows of embed_tokens when not vocab_size (CPM-Ant: its prompt embeddings follow the
  // vocabulary's rows, archs/cpmant.cpp); the LM head keeps vocab_size rows. 0: vocab_size.
  int64_t embedding_rows = 0;

  NormOptions norm() const;  // the options of the decoder's hidden_size norms
  const RopeConfig& rope_for(const std::string& layer_type) const;  // the RoPE of a layer type
  // layer_type_layout of the layer's type, else topology and names; with layer_scales the layer's scales
  LayerLayout layout(int64_t layer) const;
};

// Every layer's attention is DeepSeek's multi-head latent attention (blocks/mla.h).
AttentionFactory latent_attention(const MLAOptions& o);
// Every layer's attention is DeepSeek's sparse attention (blocks/dsa.h): the MLA `m` masked by the
// indexer `i`, or on the layers where shared[i] (empty: none) by the last earlier indexer's
// selection (GLM-MoE-DSA's "shared" layers; layer 0 must have its own).
AttentionFactory sparse_latent_attention(const MLAOptions& m, const IndexerOptions& i, std::vector<bool> shared = {});
// Attention(a) on every layer, masked by a block indexer `i` on the layers where sparse[i]
// (blocks/block_sparse_attention.h: MiniMax-M3's "minimax_m3_sparse" layers).
AttentionFactory block_sparse_attention(const AttentionOptions& a, const BlockIndexerOptions& i, std::vector<bool> sparse);
// Every layer's attention is JetMoE's mixture of attention heads (blocks/moa.h).
AttentionFactory mixture_of_attention_heads(const MoAOptions& o);
// SparseMoE(m) (blocks/moe.h) on the layers where sparse[i] (empty: every layer), make_mlp(dense)
// on the others. Throws mobius::FieldError (spec_check.h check_moe) for sizes out of range.
FeedForwardFactory sparse_moe(const MoEOptions& m, const MLPOptions& dense, std::vector<bool> sparse = {});

class DecoderLayer : public Module {
 public:
  DecoderLayer(const DecoderSpec& s, int64_t layer_index);
  // x: [batch, seq, hidden]; past: the mixer's state tensors (TokenMixer::mix). Returns the
  // layer output and the mixer's present state.
  MixerResult forward(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const;
  Norm *input_layernorm = nullptr, *post_attention_layernorm = nullptr;
  Norm *attn_output_norm = nullptr, *mlp_output_norm = nullptr;
  Parameter *input_residual = nullptr, *post_attention_residual = nullptr;  // DecoderNames
  // The layer's token mixer: its self-attention (names.self_attn) or the state mixer that
  // DecoderSpec::make_mixer gives it (under the name it gives).
  TokenMixer* mixer;
  FeedForward* mlp;

 private:
  LayerTopology topology_;
  float residual_multiplier_;
  ResidualScales scales_;
};

class TextDecoder : public Module {
 public:
  explicit TextDecoder(const DecoderSpec& s);
  Embedding* embed_tokens;
  std::vector<DecoderLayer*> layers;
  Norm* norm = nullptr;  // names.norm; null when empty
};

class DecoderCausalLM : public CausalLM {
 public:
  explicit DecoderCausalLM(const DecoderSpec& s);
  DataType dtype() const override { return spec_.dtype; }
  int64_t vocab_size() const override { return spec_.vocab_size; }
  std::vector<LayerStates> layer_states() const override;  // each layer's token mixer's state
  // Starts from in.inputs_embeds when set, else from embed(in.input_ids); every attention layer's
  // mask is causal_mask with in.attention_overlay (blocks/attention.h); the state mixers read
  // step_token_mask (blocks/mamba.h), built once when a layer has one, and position_ids.
  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override;
  // The token embeddings the layers start from: embed_tokens(input_ids) * embed_scale.
  // input_ids: int64 [batch, seq] -> [batch, seq, embedding dim] in the model dtype.
  Value* embed(Ops& op, Value* input_ids) const;

  TextDecoder* model;
  LMHead* lm_head;

 protected:
  // The cos/sin tables of `rope` at position_ids (rope_tables, blocks/rope.h); a decoder whose
  // positions are not [batch, seq] overrides it (archs/qwen2_vl.cpp: M-RoPE over [3, batch, seq]).
  virtual RopeTables position_tables(Ops& op, const RopeConfig& rope, Value* position_ids) const;
  // The steps around the layers that the GPT-style relatives replace (archs/gpt2.h):
  // the layers' input from the token embeddings h [batch, seq, embedding dim] (default: h);
  virtual Value* stem(Ops& op, Value* h, const CausalLMInputs& in) const;
  // a bias added to every layer's additive mask, broadcasting to [batch, heads, seq, total_seq]
  // in the model dtype (default: none, null);
  virtual Value* attention_bias(Ops& op, const CausalLMInputs& in) const;
  // the next layer's input from layer i's output h [batch, seq, hidden] (default: h; Qwen3-VL's
  // DeepStack adds vision features after the first layers, archs/qwen2_vl.cpp);
  virtual Value* layer_output(Ops& op, size_t i, Value* h, const CausalLMInputs& in) const;
  // the LM head's input from the last layer's output h [batch, seq, hidden] (default: model.norm).
  virtual Value* head_input(Ops& op, Value* h) const;
  const DecoderSpec& spec() const { return spec_; }

 private:
  DecoderSpec spec_;
};

}  // namespace mobius
