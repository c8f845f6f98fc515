#include "weights/gguf_checkpoint.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>

#include "config/hf_config.h"

#include "util/error.h"
#include "util/float16.h"
#include "weights/convert.h"
#include "weights/gguf_quants.h"

namespace mobius {
namespace {

using nlohmann::json;

// Typed access to GGUF metadata; errors name the file and the key.
class Meta {
 public:
  Meta(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}
  const GgufFile& file() const { return f_; }
  std::string key(const std::string& suffix) const { return arch_ + "." + suffix; }

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
    throw Error(f_.path() + ": key '" + key + "': " + msg);
  }
  // An integer in [1, max] (the caps of config/hf_config.h).
  std::optional<int64_t> opt_count(const std::string& key, int64_t max = kMaxPositions) const {
    const GgufValue* v = f_.find_key(key);
    if (!v) return std::nullopt;
    const std::optional<int64_t> n = integer(key);
    if (*n < 1 || *n > max)
      fail(key, "expected an integer from 1 to " + std::to_string(max) + ", got " + std::to_string(*n));
    return n;
  }
  int64_t count(const std::string& key, int64_t max = kMaxPositions) const {
    if (auto v = opt_count(key, max)) return *v;
    fail(key, "missing");
  }
  // Any integer type, as int64 (a uint64 above INT64_MAX is out of range); nullopt when absent.
  std::optional<int64_t> integer(const std::string& key) const {
    const GgufValue* v = f_.find_key(key);
    if (!v) return std::nullopt;
    if (!v->is_integer()) fail(key, "expected an integer, got " + gguf_value_type_name(v->type()));
    if (v->type() == GgufValueType::UINT64 && v->to_json().get<uint64_t>() > INT64_MAX)
      fail(key, "value out of range");
    return v->as_int();
  }
  std::optional<double> opt_real(const std::string& key) const {
    const GgufValue* v = f_.find_key(key);
    if (!v) return std::nullopt;
    if (!v->is_float()) fail(key, "expected a float, got " + gguf_value_type_name(v->type()));
    if (!std::isfinite(v->as_float())) fail(key, "expected a finite number");
    return v->as_float();
  }
  double real(const std::string& key) const {
    if (auto v = opt_real(key)) return *v;
    fail(key, "missing");
  }
  std::optional<std::string> opt_string(const std::string& key) const {
    const GgufValue* v = f_.find_key(key);
    if (!v) return std::nullopt;
    if (v->type() != GgufValueType::STRING) fail(key, "expected a string, got " + gguf_value_type_name(v->type()));
    return std::string(v->as_string());
  }

 private:
  const GgufFile& f_;
  std::string arch_;
};

// Fields shared by the decoder architectures (transformers GGUF_CONFIG_MAPPING, and
// load_gguf_checkpoint for vocab_size, tie_word_embeddings and the special token ids).
void token_config(const Meta& m, json& c);

json common_config(const Meta& m) {
  json c;
  c["hidden_size"] = m.count(m.key("embedding_length"), kMaxHiddenSize);
  c["intermediate_size"] = m.count(m.key("feed_forward_length"), kMaxFfnSize);
  c["num_hidden_layers"] = m.count(m.key("block_count"), kMaxLayers);
  const int64_t heads = m.count(m.key("attention.head_count"), kMaxHeads);
  c["num_attention_heads"] = heads;
  c["num_key_value_heads"] = m.opt_count(m.key("attention.head_count_kv"), kMaxHeads).value_or(heads);
  c["max_position_embeddings"] = m.count(m.key("context_length"));
  // head_dim: attention.key_length, else hidden_size / heads (llama.cpp n_embd_head_k).
  const std::string kl = m.key("attention.key_length");
  int64_t head_dim;
  if (auto k = m.opt_count(kl, kMaxHeadDim)) {
    head_dim = *k;
  } else {
    if (c["hidden_size"].get<int64_t>() % heads != 0)
      m.fail(m.key("attention.head_count"), std::to_string(heads) + " heads do not divide embedding_length " +
                                                c["hidden_size"].dump() + " and attention.key_length is not set");
    head_dim = c["hidden_size"].get<int64_t>() / heads;
  }
  if (auto v = m.opt_count(m.key("attention.value_length")); v && *v != head_dim)
    m.fail(m.key("attention.value_length"), std::to_string(*v) + " differs from the key length " +
                                                std::to_string(head_dim) + " (not supported)");
  c["head_dim"] = head_dim;
  token_config(m, c);
  return c;
}

// vocab_size (<arch>.vocab_size, else the token list's length, else token_embd's rows),
// tie_word_embeddings (no output.weight) and the special token ids: load_gguf_checkpoint.
void token_config(const Meta& m, json& c) {
  if (auto v = m.opt_count(m.key("vocab_size"), kMaxVocabSize)) {
    c["vocab_size"] = *v;
  } else if (const GgufValue* t = m.file().find_key("tokenizer.ggml.tokens");
             t && t->type() == GgufValueType::ARRAY) {
    if (t->size() < 1 || t->size() > static_cast<uint64_t>(kMaxVocabSize))
      m.fail("tokenizer.ggml.tokens", std::to_string(t->size()) + " tokens, expected 1 to " +
                                          std::to_string(kMaxVocabSize));
    c["vocab_size"] = t->size();
  } else if (const GgufTensor* e = m.file().find_tensor("token_embd.weight"); e && e->ne.size() == 2) {
    c["vocab_size"] = e->ne[1];
  } else {
    m.fail(m.key("vocab_size"), "missing, and neither tokenizer.ggml.tokens nor token_embd.weight gives it");
  }
  // Every token id the tokenizer gives must index a row of the embedding.
  if (const GgufValue* t = m.file().find_key("tokenizer.ggml.tokens"); t && t->type() == GgufValueType::ARRAY) {
    const GgufTensor* e = m.file().find_tensor("token_embd.weight");
    const int64_t rows = e && e->ne.size() == 2 ? static_cast<int64_t>(e->ne[1]) : c["vocab_size"].get<int64_t>();
    const int64_t vocab = std::min(rows, c["vocab_size"].get<int64_t>());
    if (t->size() > static_cast<uint64_t>(vocab))
      m.fail("tokenizer.ggml.tokens", std::to_string(t->size()) + " tokens for a vocabulary of " +
                                          std::to_string(vocab) + " (" +
                                          (vocab == rows && e ? "token_embd.weight's rows" : m.key("vocab_size")) +
                                          "): ids from " + std::to_string(vocab) + " up would index no embedding row");
  }
  c["tie_word_embeddings"] = m.file().find_tensor("output.weight") == nullptr;
  for (const char* id : {"bos", "eos", "pad"}) {
    const std::string k = std::string("tokenizer.ggml.") + (std::strcmp(id, "pad") ? id : "padding") + "_token_id";
    if (const GgufValue* v = m.file().find_key(k); v && v->is_integer())
      c[std::string(id) + "_token_id"] = *m.integer(k);
  }
}

// {"rope_type", "rope_theta"[, "factor"]} from rope.freq_base and rope.scaling.* (llama.cpp
// writes rope.scaling.type "linear" with rope.scaling.factor; other types are not supported).
json rope_parameters(const Meta& m, double default_theta) {
  json r = {{"rope_type", "default"},
            {"rope_theta", m.opt_real(m.key("rope.freq_base")).value_or(default_theta)}};
  const std::string tk = m.key("rope.scaling.type");
  const std::string type = m.opt_string(tk).value_or("none");
  if (type == "linear") {
    r["rope_type"] = "linear";
    r["factor"] = m.real(m.key("rope.scaling.factor"));
  } else if (type != "none") {
    m.fail(tk, "rope scaling '" + type + "' is not supported for GGUF input (supported: none, linear)");
  }
  return r;
}

// The rotary channels (rope.dimension_count) must be the whole head, for the types whose config
// has no partial rotary factor.
void require_full_rotary(const Meta& m, const json& c) {
  const int64_t head_dim = c["head_dim"];
  if (auto r = m.opt_count(m.key("rope.dimension_count")); r && *r != head_dim)
    m.fail(m.key("rope.dimension_count"), "partial rotary (" + std::to_string(*r) + " of " +
                                              std::to_string(head_dim) + " channels) is not supported");
}

// rope_parameters' partial_rotary_factor from rope.dimension_count (else the config class'
// default): the fraction of each head's channels that rotate.
void set_partial_rotary(const Meta& m, json& c, double default_factor) {
  const int64_t head_dim = c["head_dim"];
  double factor = default_factor;
  if (auto r = m.opt_count(m.key("rope.dimension_count"), kMaxHeadDim)) {
    if (*r > head_dim || *r % 2 != 0)
      m.fail(m.key("rope.dimension_count"), std::to_string(*r) + " rotary channels for a head of " +
                                                std::to_string(head_dim) + " (expected an even count up to it)");
    factor = static_cast<double>(*r) / static_cast<double>(head_dim);
  }
  c["rope_parameters"]["partial_rotary_factor"] = factor;
}

// The normalization epsilon under the name the config class reads: RMSNorm types store
// attention.layer_norm_rms_epsilon, LayerNorm types attention.layer_norm_epsilon.
void set_eps(const Meta& m, json& c, const char* field, const char* key) { c[field] = m.real(m.key(key)); }

// The RMSNorm decoders with a whole-head rotary: common_config, rms_norm_eps, model_type and
// rope_parameters (rope.freq_base, else 10000: llama.cpp's default and the config classes').
json rms_decoder_config(const Meta& m, const char* model_type) {
  json c = common_config(m);
  require_full_rotary(m, c);
  set_eps(m, c, "rms_norm_eps", "attention.layer_norm_rms_epsilon");
  c["model_type"] = model_type;
  c["rope_parameters"] = rope_parameters(m, 10000.0);
  return c;
}

// Llama, or Mistral when general.name is exactly "mistral" (load_gguf_checkpoint's test: `"mistral"
// in model_name`, a list of the one name; llama.cpp converts Mistral models as llama). A Mistral
// file has no sliding window (GGUF stores none and llama.cpp's llama graph attends to every
// position; transformers keeps MistralConfig's 4096) and no biases (MistralConfig has none).
json llama_config(const Meta& m) {
  const bool mistral = m.opt_string("general.name") == "mistral";
  json c = rms_decoder_config(m, mistral ? "mistral" : "llama");
  c["hidden_act"] = "silu";
  const bool attention_bias = m.file().find_tensor("blk.0.attn_q.bias") != nullptr;
  const bool mlp_bias = m.file().find_tensor("blk.0.ffn_up.bias") != nullptr;
  if (mistral) {
    if (attention_bias || mlp_bias)
      throw Error(m.file().path() + ": tensor '" + (attention_bias ? "blk.0.attn_q.bias" : "blk.0.ffn_up.bias") +
                  "': a Mistral file (general.name \"mistral\") with biases (MistralConfig has none)");
    c["sliding_window"] = nullptr;
    return c;
  }
  c["attention_bias"] = attention_bias;
  c["mlp_bias"] = mlp_bias;
  return c;
}

// Qwen2 (its q/k/v projections always carry a bias: Qwen2Attention) and Qwen3 (q_norm and k_norm,
// head_dim from attention.key_length): the fields of transformers' GGUF_CONFIG_MAPPING, no tensor
// transform (modeling_gguf_pytorch_utils.py TENSOR_PROCESSORS has none for them), rope
// base 10000 when the file names none (the config classes' default_theta).
json qwen2_config(const Meta& m) {
  return rms_decoder_config(m, "qwen2");
}

json qwen3_config(const Meta& m) {
  json c = rms_decoder_config(m, "qwen3");
  c["attention_bias"] = m.file().find_tensor("blk.0.attn_q.bias") != nullptr;
  return c;
}

json gemma3_config(const Meta& m) {
  json c = rms_decoder_config(m, "gemma3_text");
  c["hidden_activation"] = "gelu_pytorch_tanh";
  const int64_t layers = c["num_hidden_layers"];
  // llama.cpp (llama-model.cpp, LLM_ARCH_GEMMA3): sliding layers use rope base 10000 and every
  // 6th layer is global; the attention scale is 1/sqrt(head_dim), 1/sqrt(hidden / heads) for 27B.
  c["query_pre_attn_scalar"] = layers == 62 ? c["hidden_size"].get<int64_t>() / c["num_attention_heads"].get<int64_t>()
                                            : c["head_dim"].get<int64_t>();
  json full = rope_parameters(m, 1000000.0);
  c["rope_parameters"] = {{"full_attention", full},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
  json types = json::array();
  if (auto w = m.opt_count(m.key("attention.sliding_window"))) {
    c["sliding_window"] = *w;
    for (int64_t i = 0; i < layers; ++i) types.push_back((i + 1) % 6 ? "sliding_attention" : "full_attention");
  } else {
    for (int64_t i = 0; i < layers; ++i) types.push_back("full_attention");
  }
  c["layer_types"] = types;
  return c;
}

// Phi-3 (fused qkv_proj and gate_up_proj; Phi3TensorProcessor has no transform). LongRoPE files
// carry rope_factors_long / rope_factors_short tensors, which transformers' GGUF loader drops.
json phi3_config(const Meta& m) {
  json c = rms_decoder_config(m, "phi3");
  for (const char* t : {"rope_factors_long.weight", "rope_factors_short.weight"})
    if (m.file().find_tensor(t))
      throw Error(m.file().path() + ": tensor '" + t + "': LongRoPE scaling factors are not supported for GGUF "
                  "input (build the Hugging Face checkpoint instead)");
  if (auto w = m.opt_count(m.key("attention.sliding_window"))) c["sliding_window"] = *w;
  return c;
}

// StarCoder2: LayerNorm with bias, c_fc / c_proj MLP, biases on every Linear unless use_bias is
// off (no attn_q.bias in the file).
json starcoder2_config(const Meta& m) {
  json c = common_config(m);
  require_full_rotary(m, c);
  set_eps(m, c, "norm_epsilon", "attention.layer_norm_epsilon");
  c["model_type"] = "starcoder2";
  c["rope_parameters"] = rope_parameters(m, 10000.0);
  c["use_bias"] = m.file().find_tensor("blk.0.attn_q.bias") != nullptr;
  return c;
}

// StableLM: LayerNorm, a rotary fraction of each head (rope.dimension_count; the class default
// 0.25), q/k/v bias when the file has it, the parallel residual when the layers have no ffn_norm.
// The per-head q/k LayerNorms of qk_layernorm are stored as one [heads, head_dim] tensor, which
// transformers' loader does not split: refused.
json stablelm_config(const Meta& m) {
  json c = common_config(m);
  set_eps(m, c, "layer_norm_eps", "attention.layer_norm_epsilon");
  c["model_type"] = "stablelm";
  c["rope_parameters"] = rope_parameters(m, 10000.0);
  set_partial_rotary(m, c, 0.25);
  c["use_qkv_bias"] = m.file().find_tensor("blk.0.attn_q.bias") != nullptr;
  c["use_parallel_residual"] = m.file().find_tensor("blk.0.ffn_norm.weight") == nullptr;
  if (m.file().find_tensor("blk.0.attn_q_norm.weight"))
    throw Error(m.file().path() + ": tensor 'blk.0.attn_q_norm.weight': StableLM's per-head q/k LayerNorms "
                                  "(qk_layernorm) are not supported for GGUF input");
  return c;
}

// Nemotron: LayerNorm1P (the converter stores 1 + w: undone by the norm shift), relu2 MLP, a
// rotary fraction of each head (the class default 0.5), biases as the file has them.
json nemotron_config(const Meta& m) {
  json c = common_config(m);
  set_eps(m, c, "norm_eps", "attention.layer_norm_epsilon");
  c["model_type"] = "nemotron";
  c["rope_parameters"] = rope_parameters(m, 10000.0);
  set_partial_rotary(m, c, 0.5);
  c["attention_bias"] = m.file().find_tensor("blk.0.attn_q.bias") != nullptr;
  c["mlp_bias"] = m.file().find_tensor("blk.0.ffn_up.bias") != nullptr;
  return c;
}

// Gemma 2: the converter stores 1 + w for every norm (undone by the norm shift); sliding and
// global layers alternate (layer 0 sliding: Gemma2Config's layer_types); the softcaps as the file
// gives them (llama.cpp writes both), else the class defaults; llama.cpp's attention scale
// (1/sqrt(hidden / heads) for the 46-layer 27B, else 1/sqrt(head_dim)).
json gemma2_config(const Meta& m) {
  json c = rms_decoder_config(m, "gemma2");
  c["hidden_activation"] = "gelu_pytorch_tanh";
  const int64_t layers = c["num_hidden_layers"];
  c["query_pre_attn_scalar"] = layers == 46 ? c["hidden_size"].get<int64_t>() / c["num_attention_heads"].get<int64_t>()
                                            : c["head_dim"].get<int64_t>();
  c["attn_logit_softcapping"] = m.opt_real(m.key("attn_logit_softcapping")).value_or(50.0);
  c["final_logit_softcapping"] = m.opt_real(m.key("final_logit_softcapping")).value_or(30.0);
  c["sliding_window"] = m.opt_count(m.key("attention.sliding_window")).value_or(4096);
  json types = json::array();
  for (int64_t i = 0; i < layers; ++i) types.push_back((i + 1) % 2 ? "sliding_attention" : "full_attention");
  c["layer_types"] = types;
  return c;
}

// Mamba (MambaConfig): ssm.inner_size / embedding_length as `expand` (transformers' loader maps
// inner_size to intermediate_size, which MambaConfig recomputes from its default expand 2),
// ssm.state_size, ssm.conv_kernel, ssm.time_step_rank; use_bias / use_conv_bias from the tensors the
// file holds. Falcon-Mamba files (ssm.dt_b_c_rms) are refused: transformers reads them as plain Mamba.
json mamba_config(const Meta& m) {
  json c;
  c["model_type"] = "mamba";
  const int64_t hidden = m.count(m.key("embedding_length"), kMaxHiddenSize);
  c["hidden_size"] = hidden;
  c["num_hidden_layers"] = m.count(m.key("block_count"), kMaxLayers);
  set_eps(m, c, "layer_norm_epsilon", "attention.layer_norm_rms_epsilon");
  const int64_t inner = m.count(m.key("ssm.inner_size"), kMaxFfnSize);
  if (inner % hidden != 0)
    m.fail(m.key("ssm.inner_size"), std::to_string(inner) + " is not a multiple of embedding_length " +
                                        std::to_string(hidden) + " (MambaConfig's expand is an integer)");
  c["expand"] = inner / hidden;
  c["state_size"] = m.count(m.key("ssm.state_size"), kMaxHeadDim);
  c["conv_kernel"] = m.count(m.key("ssm.conv_kernel"), kMaxHeadDim);
  c["time_step_rank"] = m.count(m.key("ssm.time_step_rank"), kMaxHiddenSize);
  if (auto cl = m.opt_count(m.key("context_length"))) c["max_position_embeddings"] = *cl;
  if (const GgufValue* v = m.file().find_key(m.key("ssm.dt_b_c_rms"));
      v && (v->type() != GgufValueType::BOOL || v->as_bool()))
    m.fail(m.key("ssm.dt_b_c_rms"), "Falcon-Mamba's dt / B / C RMS norms are not supported for GGUF input");
  c["use_bias"] = m.file().find_tensor("blk.0.ssm_in.bias") != nullptr;
  c["use_conv_bias"] = m.file().find_tensor("blk.0.ssm_conv1d.bias") != nullptr;
  token_config(m, c);
  return c;
}

// Qwen2-MoE / Qwen3-MoE: the expert counts and widths (expert_feed_forward_length and, Qwen2-MoE,
// expert_shared_feed_forward_length, which transformers' loader does not map: it keeps the class
// defaults), every layer sparse as llama.cpp builds them; Qwen3-MoE normalizes the top-k weights
// (GGUF_CONFIG_DEFAULTS_MAPPING: llama.cpp does).
json moe_config(const Meta& m, json c) {
  c["num_experts"] = m.count(m.key("expert_count"), kMaxSmallSize);
  c["num_experts_per_tok"] = m.count(m.key("expert_used_count"), c["num_experts"].get<int64_t>());
  c["moe_intermediate_size"] = m.count(m.key("expert_feed_forward_length"), kMaxFfnSize);
  c["decoder_sparse_step"] = 1;
  c["mlp_only_layers"] = json::array();
  return c;
}

json qwen2moe_config(const Meta& m) {
  json c = moe_config(m, qwen2_config(m));
  c["model_type"] = "qwen2_moe";
  c["shared_expert_intermediate_size"] = m.count(m.key("expert_shared_feed_forward_length"), kMaxFfnSize);
  return c;
}

json qwen3moe_config(const Meta& m) {
  json c = moe_config(m, qwen3_config(m));
  c["model_type"] = "qwen3_moe";
  c["norm_topk_prob"] = true;
  return c;
}

// MiniMax-M2 (MiniMaxM2Model.set_gguf_parameters): head_dim from attention.key_length, rotary_dim
// from rope.dimension_count (MiniMaxM2Config's partial rotary), intermediate_size (the experts'
// width) from feed_forward_length, num_local_experts / num_experts_per_tok, rope.freq_base (else
// the class' 5e6), as transformers' loader maps them. Its router is sigmoid scores plus the
// e_score_correction_bias (exp_probs_b), what expert_gating_func 2 names; another gating function
// is refused (transformers' model ignores it, llama.cpp would run it).
json minimax_m2_config(const Meta& m) {
  json c = common_config(m);
  set_eps(m, c, "rms_norm_eps", "attention.layer_norm_rms_epsilon");
  c["model_type"] = "minimax_m2";
  c["rope_parameters"] = rope_parameters(m, 5000000.0);
  if (auto r = m.opt_count(m.key("rope.dimension_count"), kMaxHeadDim)) c["rotary_dim"] = *r;
  c["num_local_experts"] = m.count(m.key("expert_count"), kMaxSmallSize);
  c["num_experts_per_tok"] = m.count(m.key("expert_used_count"), c["num_local_experts"].get<int64_t>());
  if (auto g = m.integer(m.key("expert_gating_func")); g && *g != 2)
    m.fail(m.key("expert_gating_func"), std::to_string(*g) + ": MiniMax-M2's router is sigmoid (2); " +
                                            "other gating functions are not supported");
  return c;
}

// GPT-OSS's rope_parameters: rope.freq_base (else GptOssConfig's default_theta 150000) and, with
// rope.scaling.type "yarn" (TextModel.set_gguf_parameters), factor, original_context_length and
// yarn_beta_fast / yarn_beta_slow (else GptOssConfig's 32 / 1: files converted before the converter
// wrote them). GGUF stores no YaRN truncate: false, as GptOssConfig and every GPT-OSS checkpoint
// have it. The other YaRN keys (ext / attention factors, log multiplier) have llama.cpp's meaning,
// not transformers': refused.
json gpt_oss_rope(const Meta& m) {
  json r = {{"rope_type", "default"}, {"rope_theta", m.opt_real(m.key("rope.freq_base")).value_or(150000.0)}};
  const std::string tk = m.key("rope.scaling.type");
  const std::string type = m.opt_string(tk).value_or("none");
  if (type == "none") return r;
  if (type != "yarn") m.fail(tk, "rope scaling '" + type + "' is not supported for GPT-OSS GGUF input (supported: none, yarn)");
  for (const char* k : {"rope.scaling.yarn_ext_factor", "rope.scaling.yarn_attn_factor", "rope.scaling.attn_factor",
                        "rope.scaling.yarn_log_multiplier"})
    if (m.file().find_key(m.key(k)))
      m.fail(m.key(k), "not supported for GPT-OSS GGUF input (GptOssConfig's YaRN has no such field)");
  r["rope_type"] = "yarn";
  r["factor"] = m.real(m.key("rope.scaling.factor"));
  r["original_max_position_embeddings"] = m.count(m.key("rope.scaling.original_context_length"));
  r["beta_fast"] = m.opt_real(m.key("rope.scaling.yarn_beta_fast")).value_or(32.0);
  r["beta_slow"] = m.opt_real(m.key("rope.scaling.yarn_beta_slow")).value_or(1.0);
  r["truncate"] = false;
  return r;
}

// GPT-OSS (GptOssModel.set_gguf_parameters): the common fields, head_dim from attention.key_length,
// intermediate_size (each expert's width) from expert_feed_forward_length, num_local_experts /
// num_experts_per_tok, sliding_window from attention.sliding_window with llama.cpp's layer pattern
// (set_swa_pattern(2): layer 0 sliding, alternating, GptOssConfig's layer_types), attention_bias
// from the file's attn_q.bias, the rope of gpt_oss_rope. transformers' loader maps no key_length,
// no attention.sliding_window (its "sliding_window" key is not the one llama.cpp writes) and none of
// the expert tensors. GGUF stores no swiglu_alpha / swiglu_limit: llama.cpp's graph uses 1.702 and
// 7.0, GptOssConfig's defaults, which the model keeps (a checkpoint with others is not representable).
json gpt_oss_config(const Meta& m) {
  json c = common_config(m);
  require_full_rotary(m, c);
  set_eps(m, c, "rms_norm_eps", "attention.layer_norm_rms_epsilon");
  c["model_type"] = "gpt_oss";
  c["intermediate_size"] = m.count(m.key("expert_feed_forward_length"), kMaxFfnSize);
  c["num_local_experts"] = m.count(m.key("expert_count"), kMaxSmallSize);
  c["num_experts_per_tok"] = m.count(m.key("expert_used_count"), c["num_local_experts"].get<int64_t>());
  c["sliding_window"] = m.count(m.key("attention.sliding_window"));
  json types = json::array();
  for (int64_t i = 0; i < c["num_hidden_layers"].get<int64_t>(); ++i)
    types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  c["layer_types"] = types;
  c["attention_bias"] = m.file().find_tensor("blk.0.attn_q.bias") != nullptr;
  c["rope_parameters"] = gpt_oss_rope(m);
  return c;
}

// An integer per layer from 1 to max: the key's array (one entry per layer) or its scalar for
// every layer (Gemma 4's attention.head_count_kv and feed_forward_length).
std::vector<int64_t> per_layer_counts(const Meta& m, const std::string& key, int64_t layers, int64_t max) {
  const GgufValue* v = m.file().find_key(key);
  if (!v || v->type() != GgufValueType::ARRAY) return std::vector<int64_t>(static_cast<size_t>(layers), m.count(key, max));
  const std::vector<GgufValue> entries = v->elements();
  if (entries.size() != static_cast<size_t>(layers))
    m.fail(key, std::to_string(entries.size()) + " entries for " + std::to_string(layers) + " layers");
  std::vector<int64_t> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    const GgufValue& e = entries[i];
    const bool in_range = e.is_integer() && (e.type() != GgufValueType::UINT64 || e.to_json().get<uint64_t>() <= INT64_MAX);
    const int64_t n = in_range ? e.as_int() : 0;
    if (n < 1 || n > max)
      m.fail(key, "entry " + std::to_string(i) + ": expected an integer from 1 to " + std::to_string(max));
    out.push_back(n);
  }
  return out;
}

// Gemma 4's proportional rope fraction of the full layers from rope_freqs.weight, the tensor
// Gemma4Model.generate_extra_tensors writes for them: global_head_dim / 2 float32 factors, 1 for
// each rotating frequency, then 1e30 (no rotation) for the rest; partial_rotary_factor = 2 * ones /
// global_head_dim. Without the tensor llama.cpp rotates the whole head: factor 1.
double gemma4_partial_rotary(const Meta& m, int64_t global_head_dim) {
  const GgufTensor* t = m.file().find_tensor("rope_freqs.weight");
  if (!t) return 1.0;
  auto fail = [&](const std::string& msg) { throw Error(m.file().path() + ": tensor 'rope_freqs.weight': " + msg); };
  if (t->type != GgmlType::F32 || t->ne.size() != 1 || t->ne[0] != global_head_dim / 2)
    fail("expected F32 [" + std::to_string(global_head_dim / 2) + "] (half of attention.key_length)");
  int64_t ones = 0;
  for (int64_t i = 0; i < t->ne[0]; ++i) {
    float f;
    std::memcpy(&f, t->data.data() + i * 4, 4);
    if (f == 1.0f && ones == i) ++ones;
    else if (f != 1e30f)
      fail("factor " + std::to_string(i) + " is neither 1 (rotating, before the others) nor 1e30: only Gemma 4's "
           "proportional rope is supported");
  }
  return 2.0 * static_cast<double>(ones) / static_cast<double>(global_head_dim);
}

// Gemma 4 text (Gemma4Model.set_gguf_parameters over Gemma3Model's and TextModel's): layer_types
// from attention.sliding_window_pattern (a bool per layer, or Gemma 3's period), head_dim from
// attention.key_length_swa and the full layers' from attention.key_length (per_layer_config, as
// transformers saves Gemma4TextConfig), num_key_value_heads from attention.head_count_kv (an array:
// the full layers' count as their per_layer_config num_key_value_heads, which Gemma4TextConfig
// holds only with attention_k_eq_v: the full layers without attn_v), num_kv_shared_layers from
// attention.shared_kv_layers, intermediate_size and use_double_wide_mlp from feed_forward_length
// (an array where the KV-shared layers' MLP is twice as wide), hidden_size_per_layer_input from
// embedding_length_per_layer_input and vocab_size_per_layer_input from per_layer_token_embd's rows,
// rope_parameters from rope.freq_base (full), rope.freq_base_swa (else 10000) and rope_freqs.weight
// (gemma4_partial_rotary), final_logit_softcapping when the file has it, attention_bias from the
// file. transformers' GGUF loader maps none of these (it keeps Gemma4TextConfig's defaults). Not
// supported: the MoE block (26B-A4B: ffn_gate_inp), rope scaling, a sliding last layer (the config
// forces it full), a partial rotary on the sliding layers (the converter writes none).
json gemma4_config(const Meta& m) {
  json c;
  c["model_type"] = "gemma4_text";
  c["hidden_activation"] = "gelu_pytorch_tanh";
  c["hidden_size"] = m.count(m.key("embedding_length"), kMaxHiddenSize);
  const int64_t layers = m.count(m.key("block_count"), kMaxLayers);
  c["num_hidden_layers"] = layers;
  const int64_t heads = m.count(m.key("attention.head_count"), kMaxHeads);
  c["num_attention_heads"] = heads;
  c["max_position_embeddings"] = m.count(m.key("context_length"));
  set_eps(m, c, "rms_norm_eps", "attention.layer_norm_rms_epsilon");
  if (m.file().find_tensor("blk.0.ffn_gate_inp.weight") || m.file().find_key(m.key("expert_count")))
    m.fail(m.key("expert_count"), "Gemma 4's MoE block (enable_moe_block) is not supported");
  if (auto t = m.opt_string(m.key("rope.scaling.type")); t && *t != "none")
    m.fail(m.key("rope.scaling.type"), "rope scaling '" + *t + "' is not supported for Gemma 4 GGUF input");
  // layer types
  const std::string pk = m.key("attention.sliding_window_pattern");
  const GgufValue* pattern = m.file().find_key(pk);
  if (!pattern) m.fail(pk, "missing");
  std::vector<bool> sliding;
  if (pattern->type() == GgufValueType::ARRAY) {
    const std::vector<GgufValue> e = pattern->elements();
    if (e.size() != static_cast<size_t>(layers))
      m.fail(pk, std::to_string(e.size()) + " entries for " + std::to_string(layers) + " layers");
    for (const GgufValue& v : e) {
      if (v.type() != GgufValueType::BOOL) m.fail(pk, "expected an array of booleans");
      sliding.push_back(v.as_bool());
    }
  } else {  // llama.cpp set_swa_pattern(n): every n-th layer full
    const int64_t n = m.count(pk, kMaxLayers);
    for (int64_t i = 0; i < layers; ++i) sliding.push_back(i % n < n - 1);
  }
  if (sliding.back())
    m.fail(pk, "the last layer is sliding (Gemma4TextConfig forces the last layer to full attention)");
  json types = json::array();
  for (bool b : sliding) types.push_back(b ? "sliding_attention" : "full_attention");
  c["layer_types"] = types;
  c["sliding_window"] = m.count(m.key("attention.sliding_window"));
  // head sizes
  auto head_size = [&](const char* key, const char* value_key) {
    const int64_t k = m.count(m.key(key), kMaxHeadDim);
    if (auto v = m.opt_count(m.key(value_key), kMaxHeadDim); v && *v != k)
      m.fail(m.key(value_key), std::to_string(*v) + " differs from the key length " + std::to_string(k) +
                                   " (not supported)");
    return k;
  };
  const int64_t global_dim = head_size("attention.key_length", "attention.value_length");
  const int64_t swa_dim = head_size("attention.key_length_swa", "attention.value_length_swa");
  c["head_dim"] = swa_dim;
  if (auto r = m.opt_count(m.key("rope.dimension_count"), kMaxHeadDim); r && *r != global_dim)
    m.fail(m.key("rope.dimension_count"), std::to_string(*r) + " rotary channels for the full layers' head of " +
                                              std::to_string(global_dim) + " (expected the whole head)");
  if (auto r = m.opt_count(m.key("rope.dimension_count_swa"), kMaxHeadDim); r && *r != swa_dim)
    m.fail(m.key("rope.dimension_count_swa"), "partial rotary on the sliding layers (" + std::to_string(*r) +
                                                  " of " + std::to_string(swa_dim) + " channels) is not supported");
  // key/value heads, KV sharing, k_eq_v
  const std::string kvk = m.key("attention.head_count_kv");
  const std::vector<int64_t> kv = per_layer_counts(m, kvk, layers, kMaxHeads);
  int64_t kv_of[2] = {0, 0};  // full, sliding
  for (int64_t i = 0; i < layers; ++i) {
    int64_t& want = kv_of[sliding[static_cast<size_t>(i)]];
    const int64_t n = kv[static_cast<size_t>(i)];
    if (heads % n != 0) m.fail(kvk, "entry " + std::to_string(i) + ": " + std::to_string(n) + " key/value heads do not divide " + std::to_string(heads) + " heads");
    if (want != 0 && want != n) m.fail(kvk, "layers of one type with different key/value head counts are not supported");
    want = n;
  }
  const int64_t shared = m.opt_count(m.key("attention.shared_kv_layers"), layers).value_or(0);
  if (shared >= layers) m.fail(m.key("attention.shared_kv_layers"), "every layer shares another's keys and values");
  c["num_kv_shared_layers"] = shared;
  const int64_t first_shared = layers - shared;
  int64_t first_full = -1;
  for (int64_t i = 0; i < first_shared && first_full < 0; ++i)
    if (!sliding[static_cast<size_t>(i)]) first_full = i;
  const bool k_eq_v = first_full >= 0 && !m.file().find_tensor("blk." + std::to_string(first_full) + ".attn_v.weight");
  c["attention_k_eq_v"] = k_eq_v;
  c["num_key_value_heads"] = kv_of[1] ? kv_of[1] : kv_of[0];
  const bool kv_array = m.file().find_key(kvk)->type() == GgufValueType::ARRAY;
  if (kv_of[0] && kv_of[1] && kv_of[0] != kv_of[1] && !k_eq_v)
    m.fail(kvk, "the full layers' key/value heads differ from the sliding layers' while the full layers have "
                "attn_v (Gemma4TextConfig takes another count only with attention_k_eq_v)");
  json per_layer = json::object();
  for (int64_t i = 0; i < layers; ++i) {
    if (sliding[static_cast<size_t>(i)]) continue;
    json o = {{"head_dim", global_dim}};
    if (k_eq_v && kv_array) o["num_key_value_heads"] = kv_of[0];
    per_layer[std::to_string(i)] = o;
  }
  c["per_layer_config"] = per_layer;
  // MLP width: the KV-shared layers' twice the others' with use_double_wide_mlp
  const std::string fk = m.key("feed_forward_length");
  const std::vector<int64_t> ff = per_layer_counts(m, fk, layers, kMaxFfnSize);
  const bool double_wide = shared > 0 && ff[static_cast<size_t>(first_shared)] == 2 * ff[0];
  for (int64_t i = 0; i < layers; ++i)
    if (ff[static_cast<size_t>(i)] != (i >= first_shared && double_wide ? 2 : 1) * ff[0])
      m.fail(fk, "entry " + std::to_string(i) + ": " + std::to_string(ff[static_cast<size_t>(i)]) +
                     " (expected the first layer's width, or twice it for every KV-shared layer)");
  c["intermediate_size"] = ff[0];
  c["use_double_wide_mlp"] = double_wide;
  // per-layer inputs
  const int64_t pl = m.integer(m.key("embedding_length_per_layer_input")).value_or(0);
  if (pl < 0 || pl > kMaxHiddenSize)
    m.fail(m.key("embedding_length_per_layer_input"), "expected an integer from 0 to " + std::to_string(kMaxHiddenSize));
  c["hidden_size_per_layer_input"] = pl;
  if (pl > 0) {
    const GgufTensor* t = m.file().find_tensor("per_layer_token_embd.weight");
    if (!t || t->ne.size() != 2 || t->ne[0] != layers * pl || t->ne[1] < 1 || t->ne[1] > kMaxVocabSize)
      throw Error(m.file().path() + ": tensor 'per_layer_token_embd.weight': missing or not [rows, " +
                  std::to_string(layers * pl) + "] (block_count * embedding_length_per_layer_input)");
    c["vocab_size_per_layer_input"] = t->ne[1];
  }
  c["rope_parameters"] = {
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", m.opt_real(m.key("rope.freq_base_swa")).value_or(10000.0)}}},
      {"full_attention", {{"rope_type", "proportional"}, {"partial_rotary_factor", gemma4_partial_rotary(m, global_dim)},
                          {"rope_theta", m.opt_real(m.key("rope.freq_base")).value_or(1000000.0)}}}};
  const std::optional<double> softcap = m.opt_real(m.key("final_logit_softcapping"));
  c["final_logit_softcapping"] = softcap ? json(*softcap) : json(nullptr);
  c["attention_bias"] = m.file().find_tensor("blk.0.attn_q.bias") != nullptr;
  token_config(m, c);
  return c;
}

// attention.head_count, which must divide the width (embedding_length) `hidden`.
int64_t head_count_dividing(const Meta& m, int64_t hidden) {
  const int64_t heads = m.count(m.key("attention.head_count"), kMaxHeads);
  if (hidden % heads != 0)
    m.fail(m.key("attention.head_count"), std::to_string(heads) + " heads do not divide embedding_length " +
                                              std::to_string(hidden));
  return heads;
}

// The MLP width as the tensors hold it: blk.0.ffn_up's rows, else feed_forward_length (the GPT-2
// and Falcon converters write 4 * hidden there whatever the model's width is).
int64_t mlp_width(const Meta& m) {
  const GgufTensor* up = m.file().find_tensor("blk.0.ffn_up.weight");
  return up && up->ne.size() == 2 && up->ne[1] >= 1 && up->ne[1] <= kMaxFfnSize
             ? static_cast<int64_t>(up->ne[1])
             : m.count(m.key("feed_forward_length"), kMaxFfnSize);
}

// GPT-2: n_embd, n_layer, n_head, layer_norm_epsilon; n_inner from blk.0.ffn_up's rows (unset when
// it is GPT2Config's 4 * n_embd; transformers' loader maps none), n_positions from
// position_embd's rows (the table the model holds), vocab from the token list.
json gpt2_config(const Meta& m) {
  json c;
  c["model_type"] = "gpt2";
  const int64_t embd = m.count(m.key("embedding_length"), kMaxHiddenSize);
  c["n_embd"] = embd;
  c["n_layer"] = m.count(m.key("block_count"), kMaxLayers);
  c["n_head"] = head_count_dividing(m, embd);
  set_eps(m, c, "layer_norm_epsilon", "attention.layer_norm_epsilon");
  if (const int64_t ff = mlp_width(m); ff != 4 * embd) c["n_inner"] = ff;
  const GgufTensor* pos = m.file().find_tensor("position_embd.weight");
  if (!pos || pos->ne.size() != 2) throw Error(m.file().path() + ": tensor 'position_embd.weight': missing or not 2-D");
  if (pos->ne[1] < 1 || pos->ne[1] > static_cast<uint64_t>(kMaxPositions))
    throw Error(m.file().path() + ": tensor 'position_embd.weight': " + std::to_string(pos->ne[1]) + " positions");
  c["n_positions"] = pos->ne[1];
  token_config(m, c);
  return c;
}

// BLOOM: hidden_size, n_layer, n_head, layer_norm_epsilon (GGUF_CONFIG_MAPPING), vocab from the
// file; ALiBi positions, so no context length is read.
json bloom_config(const Meta& m) {
  json c;
  c["model_type"] = "bloom";
  const int64_t hidden = m.count(m.key("embedding_length"), kMaxHiddenSize);
  c["hidden_size"] = hidden;
  c["n_layer"] = m.count(m.key("block_count"), kMaxLayers);
  c["n_head"] = head_count_dividing(m, hidden);
  set_eps(m, c, "layer_norm_epsilon", "attention.layer_norm_epsilon");
  token_config(m, c);
  return c;
}

// Falcon (FalconModel.set_gguf_parameters writes n_head_kv, 1 for the 7B's multi-query): the
// 7B layout (one input_layernorm, one key/value head: multi_query, the fused qkv as the model holds
// it) or, with a second norm per layer (attn_norm_2, the 40B's ln_attn) or several key/value
// heads, new_decoder_architecture with num_kv_heads groups, num_ln_in_parallel_attn 2 or 1;
// ffn_hidden_size from ffn_up's rows, bias from the file's attn_qkv.bias, RoPE over whole heads
// (rope.freq_base, else 10000). transformers' loader maps neither num_kv_heads nor the layout (it
// builds FalconConfig's 7B defaults) and ties lm_head whatever the file holds; llama.cpp reads
// output.weight when present, as here.
json falcon_config(const Meta& m) {
  json c;
  c["model_type"] = "falcon";
  const int64_t hidden = m.count(m.key("embedding_length"), kMaxHiddenSize);
  c["hidden_size"] = hidden;
  c["num_hidden_layers"] = m.count(m.key("block_count"), kMaxLayers);
  const int64_t heads = head_count_dividing(m, hidden);
  c["num_attention_heads"] = heads;
  const int64_t kv = m.opt_count(m.key("attention.head_count_kv"), kMaxHeads).value_or(1);
  if (heads % kv != 0)
    m.fail(m.key("attention.head_count_kv"), std::to_string(kv) + " key/value heads do not divide " +
                                                 std::to_string(heads) + " heads");
  if (auto r = m.opt_count(m.key("rope.dimension_count"), kMaxHeadDim); r && *r != hidden / heads)
    m.fail(m.key("rope.dimension_count"), "partial rotary (" + std::to_string(*r) + " of " +
                                              std::to_string(hidden / heads) + " channels) is not supported");
  set_eps(m, c, "layer_norm_epsilon", "attention.layer_norm_epsilon");
  c["max_position_embeddings"] = m.count(m.key("context_length"));
  c["rope_parameters"] = rope_parameters(m, 10000.0);
  c["ffn_hidden_size"] = mlp_width(m);
  c["bias"] = m.file().find_tensor("blk.0.attn_qkv.bias") != nullptr;
  const bool two_norms = m.file().find_tensor("blk.0.attn_norm_2.weight") != nullptr;
  c["new_decoder_architecture"] = two_norms || kv > 1;
  c["multi_query"] = !(two_norms || kv > 1);
  if (two_norms || kv > 1) {
    c["num_kv_heads"] = kv;
    c["num_ln_in_parallel_attn"] = two_norms ? 2 : 1;
  }
  token_config(m, c);
  return c;
}

// T5 (t5.* metadata, T5Model.set_gguf_parameters): d_model, d_ff, num_layers,
// num_decoder_layers (decoder_block_count, else num_layers), num_heads, d_kv (key_length),
// layer_norm_epsilon, relative_attention_num_buckets, decoder_start_token_id. UMT5 (a relative
// bias in every block) when general.name says umt5, as transformers' loader decides, or when
// block 1 holds a relative bias (llama.cpp's test). The feed-forward as llama.cpp runs it: gated
// GELU (tanh: gelu_new, "gated-gelu") when the blocks hold ffn_gate (T5 v1.1, flan-t5, mT5,
// UMT5), else ReLU (the original T5). transformers' loader builds every T5 file as gated ReLU
// (is_gated_act with T5Config's default "relu"): it matches neither. tie_word_embeddings (no
// output.weight) decides T5's decoder output scaling; the LM head is `shared`, as transformers 5
// ties it. The relative max distance is not stored: 128 (T5Config's default, llama.cpp's constant).
json t5_config(const Meta& m, bool encoder_only) {
  json c;
  std::string name = m.opt_string("general.name").value_or("");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const bool umt5 = name.find("umt5") != std::string::npos || m.file().find_tensor("enc.blk.1.attn_rel_b.weight");
  c["model_type"] = umt5 ? "umt5" : "t5";
  const int64_t d_model = m.count(m.key("embedding_length"), kMaxHiddenSize);
  c["d_model"] = d_model;
  c["d_ff"] = m.count(m.key("feed_forward_length"), kMaxFfnSize);
  const int64_t layers = m.count(m.key("block_count"), kMaxLayers);
  c["num_layers"] = layers;
  c["num_decoder_layers"] = m.opt_count(m.key("decoder_block_count"), kMaxLayers).value_or(layers);
  const int64_t heads = m.count(m.key("attention.head_count"), kMaxHeads);
  c["num_heads"] = heads;
  int64_t d_kv;
  if (auto k = m.opt_count(m.key("attention.key_length"), kMaxHeadDim)) {
    d_kv = *k;
  } else {
    if (d_model % heads != 0)
      m.fail(m.key("attention.head_count"), std::to_string(heads) + " heads do not divide embedding_length " +
                                                std::to_string(d_model) + " and attention.key_length is not set");
    d_kv = d_model / heads;
  }
  if (auto v = m.opt_count(m.key("attention.value_length"), kMaxHeadDim); v && *v != d_kv)
    m.fail(m.key("attention.value_length"), std::to_string(*v) + " differs from the key length " +
                                                std::to_string(d_kv) + " (not supported)");
  c["d_kv"] = d_kv;
  const std::optional<double> rms_eps = m.opt_real(m.key("attention.layer_norm_rms_epsilon"));
  c["layer_norm_epsilon"] = rms_eps ? *rms_eps : m.real(m.key("attention.layer_norm_epsilon"));
  c["relative_attention_num_buckets"] = m.opt_count(m.key("attention.relative_buckets_count"), kMaxHeadDim).value_or(32);
  c["feed_forward_proj"] = m.file().find_tensor("enc.blk.0.ffn_gate.weight") ? "gated-gelu" : "relu";
  token_config(m, c);
  if (auto s = m.integer(m.key("decoder_start_token_id"))) {
    if (*s < 0 || *s >= c["vocab_size"].get<int64_t>())
      m.fail(m.key("decoder_start_token_id"), std::to_string(*s) + " is outside the vocabulary of " +
                                                  c["vocab_size"].dump() + " tokens");
    c["decoder_start_token_id"] = *s;
  }
  if (encoder_only) c["architectures"] = {umt5 ? "UMT5EncoderModel" : "T5EncoderModel"};
  return c;
}

json t5_seq2seq_config(const Meta& m) { return t5_config(m, false); }
json t5_encoder_config(const Meta& m) { return t5_config(m, true); }

// LFM2 (LFM2Model.set_gguf_parameters): attention.head_count_kv is an array with 0 for the
// short-convolution layers (layer_types "conv") and the key/value heads of the attention ones
// (num_key_value_heads); feed_forward_length is the width after block_auto_adjust_ff_dim (off
// here), shortconv.l_cache the conv kernel; conv_bias from the file's in_proj bias; rope.freq_base,
// else the class' 1000000. transformers' loader reads the same fields.
json lfm2_config(const Meta& m) {
  json c;
  c["model_type"] = "lfm2";
  c["hidden_size"] = m.count(m.key("embedding_length"), kMaxHiddenSize);
  c["intermediate_size"] = m.count(m.key("feed_forward_length"), kMaxFfnSize);
  c["block_auto_adjust_ff_dim"] = false;
  const int64_t layers = m.count(m.key("block_count"), kMaxLayers);
  c["num_hidden_layers"] = layers;
  const int64_t heads = head_count_dividing(m, c["hidden_size"].get<int64_t>());
  c["num_attention_heads"] = heads;
  const std::string kvk = m.key("attention.head_count_kv");
  const GgufValue* kv = m.file().find_key(kvk);
  if (!kv || kv->type() != GgufValueType::ARRAY)
    m.fail(kvk, kv ? "expected an array of per-layer key/value head counts" : "missing");
  const std::vector<GgufValue> counts = kv->elements();
  if (counts.size() != static_cast<size_t>(layers))
    m.fail(kvk, std::to_string(counts.size()) + " entries for " + std::to_string(layers) + " layers");
  json types = json::array();
  int64_t kv_heads = 0, first_conv = -1;
  for (size_t i = 0; i < counts.size(); ++i) {
    const GgufValue& v = counts[i];
    const bool in_range = v.is_integer() && (v.type() != GgufValueType::UINT64 || v.to_json().get<uint64_t>() <= INT64_MAX);
    const int64_t n = in_range ? v.as_int() : -1;
    if (n < 0 || n > heads || (n > 0 && heads % n != 0))
      m.fail(kvk, "entry " + std::to_string(i) + ": expected 0 (a conv layer) or a divisor of " +
                      std::to_string(heads) + " heads");
    if (n > 0 && kv_heads > 0 && n != kv_heads)
      m.fail(kvk, "attention layers with different key/value head counts are not supported");
    if (n > 0) kv_heads = n;
    if (n == 0 && first_conv < 0) first_conv = static_cast<int64_t>(i);
    types.push_back(n > 0 ? "full_attention" : "conv");
  }
  c["num_key_value_heads"] = kv_heads > 0 ? kv_heads : heads;
  c["layer_types"] = types;
  c["conv_L_cache"] = m.count(m.key("shortconv.l_cache"), kMaxHeadDim);
  c["conv_bias"] = first_conv >= 0 && m.file().find_tensor("blk." + std::to_string(first_conv) + ".shortconv.in_proj.bias");
  set_eps(m, c, "norm_eps", "attention.layer_norm_rms_epsilon");
  c["max_position_embeddings"] = m.count(m.key("context_length"));
  c["rope_parameters"] = rope_parameters(m, 1000000.0);
  if (auto r = m.opt_count(m.key("rope.dimension_count"), kMaxHeadDim);
      r && *r != c["hidden_size"].get<int64_t>() / heads)
    m.fail(m.key("rope.dimension_count"), "partial rotary is not supported");
  token_config(m, c);
  return c;
}

const std::map<std::string, std::string> kModelTop = {
    {"token_embd", "model.embed_tokens"}, {"output_norm", "model.norm"}, {"output", "lm_head"}};
const std::map<std::string, std::string> kBackboneTop = {
    {"token_embd", "backbone.embeddings"}, {"output_norm", "backbone.norm_f"}, {"output", "lm_head"}};
const std::map<std::string, std::string> kBloomTop = {
    {"token_embd", "transformer.word_embeddings"}, {"token_embd_norm", "transformer.word_embeddings_layernorm"},
    {"output_norm", "transformer.ln_f"}, {"output", "lm_head"}};
const std::map<std::string, std::string> kGpt2Top = {
    {"token_embd", "transformer.wte"}, {"position_embd", "transformer.wpe"},
    {"output_norm", "transformer.ln_f"}, {"output", "lm_head"}};

const std::map<std::string, std::string> kFalconTop = {
    {"token_embd", "transformer.word_embeddings"}, {"output_norm", "transformer.ln_f"}, {"output", "lm_head"}};
const std::map<std::string, std::string> kGemma4Top = {
    {"token_embd", "model.embed_tokens"},
    {"per_layer_token_embd", "model.embed_tokens_per_layer"},
    {"per_layer_model_proj", "model.per_layer_model_projection"},
    {"per_layer_proj_norm", "model.per_layer_projection_norm"},
    {"output_norm", "model.norm"},
    {"output", "lm_head"}};
const std::map<std::string, std::string> kT5Top = {
    {"token_embd", "shared"}, {"output", "lm_head"},
    {"enc.output_norm", "encoder.final_layer_norm"}, {"dec.output_norm", "decoder.final_layer_norm"}};

// One kind of numbered block: GGUF <prefix>N.<role> -> <layers>.N.<module>, N below the config's
// `count` field.
struct Blocks {
  const char* prefix = "blk.";
  const char* layers = "model.layers";
  const char* count = "num_hidden_layers";
  std::map<std::string, std::string> roles;
};

// A fused qkv the converter regrouped (GgufCheckpoint::Entry::qkv_groups): `groups` groups of
// `queries` query heads with their key and value; groups 0: stored as the model holds it.
struct QkvLayout {
  int64_t groups = 0;
  int64_t queries = 0;
};

struct Arch {
  const char* architecture;  // general.architecture
  json (*config)(const Meta&);
  // The numbered blocks, given the synthesized config (the names of Falcon's norms and T5's
  // feed-forward depend on it).
  std::function<std::vector<Blocks>(const HfConfig&)> blocks;
  bool unpermute_qk = false;  // llama: LlamaModel.permute on q_proj / k_proj
  float norm_shift = 0.0f;    // added to *norm.weight to undo the converter (gemma3: -1)
  // The top-level tensors (token_embd, output_norm, output, ...).
  const std::map<std::string, std::string>* top = &kModelTop;
  // Linear weights stored [out, in] for the model's Conv1D [in, out] (gpt2: transposed back).
  bool conv1d = false;
  // attn_qkv rows stored [all queries; all keys; all values] (bloom, falcon).
  QkvLayout (*qkv_layout)(const HfConfig&) = nullptr;
  // The config field with the expert count of stacked experts (ffn_*_exps).
  const char* experts_key = "num_experts";
  // GPT-OSS's experts, stacked [E, in, out] in the model (GgufCheckpoint::Entry::gate_up).
  bool gpt_oss_experts = false;
  // rope_freqs.weight: read by the config (Gemma 4's proportional rope), not a weight; refused for
  // the other architectures (per-frequency factors, llama3 rope scaling).
  bool reads_rope_freqs = false;
};

// Blocks that do not depend on the config.
std::function<std::vector<Blocks>(const HfConfig&)> fixed(std::map<std::string, std::string> roles,
                                                          const char* layers = "model.layers",
                                                          const char* count = "num_hidden_layers") {
  return [b = Blocks{.layers = layers, .count = count, .roles = std::move(roles)}](const HfConfig&) {
    return std::vector<Blocks>{b};
  };
}

const std::map<std::string, std::string> kAttention = {
    {"attn_q", "self_attn.q_proj"},       {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},       {"attn_output", "self_attn.o_proj"},
    {"attn_norm", "input_layernorm"},     {"ffn_gate", "mlp.gate_proj"},
    {"ffn_up", "mlp.up_proj"},            {"ffn_down", "mlp.down_proj"},
};

// Falcon: attn_norm is the 40B's ln_mlp (llama.cpp feeds the MLP with it), attn_norm_2 its ln_attn;
// the 7B's one norm is input_layernorm.
std::vector<Blocks> falcon_blocks(const HfConfig& c) {
  std::map<std::string, std::string> roles = {
      {"attn_qkv", "self_attention.query_key_value"}, {"attn_output", "self_attention.dense"},
      {"ffn_up", "mlp.dense_h_to_4h"},                {"ffn_down", "mlp.dense_4h_to_h"}};
  if (c.int_or("num_ln_in_parallel_attn", 1) == 2) {
    roles["attn_norm"] = "ln_mlp";
    roles["attn_norm_2"] = "ln_attn";
  } else {
    roles["attn_norm"] = "input_layernorm";
  }
  return {Blocks{.layers = "transformer.h", .roles = roles}};
}

QkvLayout falcon_qkv(const HfConfig& c) {
  if (!c.bool_or("new_decoder_architecture", false)) return {};  // multi-query: [q | k | v] already
  const int64_t kv = c.get_int("num_kv_heads");
  return {.groups = kv, .queries = c.get_int("num_attention_heads") / kv};
}

const std::map<std::string, std::string> kLfm2Blocks = {
    {"attn_q", "self_attn.q_proj"},           {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},           {"attn_output", "self_attn.out_proj"},
    {"attn_q_norm", "self_attn.q_layernorm"}, {"attn_k_norm", "self_attn.k_layernorm"},
    {"shortconv.conv", "conv.conv"},          {"shortconv.in_proj", "conv.in_proj"},
    {"shortconv.out_proj", "conv.out_proj"},  {"ffn_gate", "feed_forward.w1"},
    {"ffn_up", "feed_forward.w3"},            {"ffn_down", "feed_forward.w2"},
    {"attn_norm", "operator_norm"},           {"ffn_norm", "ffn_norm"}};
const std::map<std::string, std::string> kLfm2Top = {
    {"token_embd", "model.embed_tokens"}, {"token_embd_norm", "model.embedding_norm"}, {"output", "lm_head"}};

QkvLayout bloom_qkv(const HfConfig& c) { return {.groups = c.get_int("n_head"), .queries = 1}; }

// T5: the encoder's blocks enc.blk.N (layer.0 self-attention, layer.1 feed-forward), the decoder's
// dec.blk.N (layer.0 self-attention, layer.1 cross-attention, layer.2 feed-forward); ffn_up is
// wi_1 of a gated feed-forward, wi otherwise.
std::vector<Blocks> t5_blocks(const HfConfig& c) {
  const bool gated = c.string_or("feed_forward_proj", "relu").rfind("gated-", 0) == 0;
  auto stack = [&](const std::string& ff) {
    return std::map<std::string, std::string>{
        {"attn_q", "layer.0.SelfAttention.q"},      {"attn_k", "layer.0.SelfAttention.k"},
        {"attn_v", "layer.0.SelfAttention.v"},      {"attn_o", "layer.0.SelfAttention.o"},
        {"attn_rel_b", "layer.0.SelfAttention.relative_attention_bias"},
        {"attn_norm", "layer.0.layer_norm"},        {"ffn_gate", ff + ".DenseReluDense.wi_0"},
        {"ffn_up", ff + (gated ? ".DenseReluDense.wi_1" : ".DenseReluDense.wi")},
        {"ffn_down", ff + ".DenseReluDense.wo"},    {"ffn_norm", ff + ".layer_norm"}};
  };
  std::vector<Blocks> out = {Blocks{.prefix = "enc.blk.", .layers = "encoder.block", .count = "num_layers",
                                    .roles = stack("layer.1")}};
  if (c.has("architectures")) return out;  // T5EncoderModel
  std::map<std::string, std::string> dec = stack("layer.2");
  dec["cross_attn_q"] = "layer.1.EncDecAttention.q";
  dec["cross_attn_k"] = "layer.1.EncDecAttention.k";
  dec["cross_attn_v"] = "layer.1.EncDecAttention.v";
  dec["cross_attn_o"] = "layer.1.EncDecAttention.o";
  dec["cross_attn_norm"] = "layer.1.layer_norm";
  out.push_back(Blocks{.prefix = "dec.blk.", .layers = "decoder.block", .count = "num_decoder_layers", .roles = dec});
  return out;
}

const std::vector<Arch>& archs() {
  static const std::vector<Arch> table = [] {
    std::map<std::string, std::string> llama = kAttention, gemma3 = kAttention;
    llama["ffn_norm"] = "post_attention_layernorm";
    std::map<std::string, std::string> qwen3 = llama;
    qwen3["attn_q_norm"] = "self_attn.q_norm";
    qwen3["attn_k_norm"] = "self_attn.k_norm";
    gemma3["ffn_norm"] = "pre_feedforward_layernorm";
    gemma3["post_attention_norm"] = "post_attention_layernorm";
    gemma3["post_ffw_norm"] = "post_feedforward_layernorm";
    std::map<std::string, std::string> gemma2 = gemma3;
    gemma3["attn_q_norm"] = "self_attn.q_norm";
    gemma3["attn_k_norm"] = "self_attn.k_norm";
    std::map<std::string, std::string> phi3 = {
        {"attn_qkv", "self_attn.qkv_proj"},   {"attn_output", "self_attn.o_proj"},
        {"ffn_up", "mlp.gate_up_proj"},       {"ffn_down", "mlp.down_proj"},
        {"attn_norm", "input_layernorm"},     {"ffn_norm", "post_attention_layernorm"},
    };
    std::map<std::string, std::string> starcoder2 = llama, nemotron = llama;
    starcoder2.erase("ffn_gate");
    starcoder2["ffn_up"] = "mlp.c_fc";
    starcoder2["ffn_down"] = "mlp.c_proj";
    nemotron.erase("ffn_gate");
    const std::map<std::string, std::string> bloom = {
        {"attn_norm", "input_layernorm"},  {"attn_qkv", "self_attention.query_key_value"},
        {"attn_output", "self_attention.dense"}, {"ffn_norm", "post_attention_layernorm"},
        {"ffn_up", "mlp.dense_h_to_4h"},   {"ffn_down", "mlp.dense_4h_to_h"},
    };
    const std::map<std::string, std::string> gpt2 = {
        {"attn_norm", "ln_1"},         {"attn_qkv", "attn.c_attn"}, {"attn_output", "attn.c_proj"},
        {"ffn_norm", "ln_2"},          {"ffn_up", "mlp.c_fc"},      {"ffn_down", "mlp.c_proj"},
    };
    const std::map<std::string, std::string> mamba = {
        {"attn_norm", "norm"},          {"ssm_in", "mixer.in_proj"}, {"ssm_conv1d", "mixer.conv1d"},
        {"ssm_x", "mixer.x_proj"},      {"ssm_dt", "mixer.dt_proj"}, {"ssm_a", "mixer.A_log"},
        {"ssm_d", "mixer.D"},           {"ssm_out", "mixer.out_proj"},
    };
    std::map<std::string, std::string> qwen3moe = qwen3, qwen2moe = llama;
    for (auto* t : {&qwen3moe, &qwen2moe}) {
      for (const char* r : {"ffn_gate", "ffn_up", "ffn_down"}) t->erase(r);
      (*t)["ffn_gate_inp"] = "mlp.gate";
      (*t)["ffn_gate_exps"] = "mlp.experts.*.gate_proj";
      (*t)["ffn_up_exps"] = "mlp.experts.*.up_proj";
      (*t)["ffn_down_exps"] = "mlp.experts.*.down_proj";
    }
    qwen2moe["ffn_gate_shexp"] = "mlp.shared_expert.gate_proj";
    qwen2moe["ffn_up_shexp"] = "mlp.shared_expert.up_proj";
    qwen2moe["ffn_down_shexp"] = "mlp.shared_expert.down_proj";
    qwen2moe["ffn_gate_inp_shexp"] = "mlp.shared_expert_gate";
    // MiniMax-M2: block_sparse_moe with Mixtral's expert names, the router bias a parameter
    std::map<std::string, std::string> minimax_m2 = qwen3;
    for (const char* r : {"ffn_gate", "ffn_up", "ffn_down"}) minimax_m2.erase(r);
    minimax_m2["ffn_gate_inp"] = "block_sparse_moe.gate";
    minimax_m2["ffn_gate_exps"] = "block_sparse_moe.experts.*.w1";
    minimax_m2["ffn_up_exps"] = "block_sparse_moe.experts.*.w3";
    minimax_m2["ffn_down_exps"] = "block_sparse_moe.experts.*.w2";
    minimax_m2["exp_probs_b.bias"] = "block_sparse_moe.e_score_correction_bias";
    // Gemma 4: Gemma 3's sandwich layer (norms stored as they are), the per-layer input gate /
    // projection / norm, layer_scalar (a parameter: the converter named it layer_scalar.weight)
    std::map<std::string, std::string> gemma4 = gemma3;
    gemma4["inp_gate"] = "per_layer_input_gate";
    gemma4["proj"] = "per_layer_projection";
    gemma4["post_norm"] = "post_per_layer_input_norm";
    gemma4["layer_output_scale.weight"] = "layer_scalar";
    // GPT-OSS: attention sinks (a parameter), post_attention_norm, the router, the experts' gate /
    // up (split, or fused by --fuse-gate-up-exps) into gate_up_proj and its bias, down_proj
    std::map<std::string, std::string> gpt_oss = kAttention;
    for (const char* r : {"ffn_gate", "ffn_up", "ffn_down"}) gpt_oss.erase(r);
    gpt_oss["post_attention_norm"] = "post_attention_layernorm";
    gpt_oss["attn_sinks.weight"] = "self_attn.sinks";
    gpt_oss["ffn_gate_inp"] = "mlp.router";
    for (const char* r : {"ffn_gate_exps", "ffn_up_exps", "ffn_gate_up_exps"}) {
      gpt_oss[std::string(r) + ".weight"] = "mlp.experts.gate_up_proj";
      gpt_oss[std::string(r) + ".bias"] = "mlp.experts.gate_up_proj_bias";
    }
    gpt_oss["ffn_down_exps.weight"] = "mlp.experts.down_proj";
    gpt_oss["ffn_down_exps.bias"] = "mlp.experts.down_proj_bias";
    return std::vector<Arch>{
        {.architecture = "bloom", .config = bloom_config, .blocks = fixed(bloom, "transformer.h", "n_layer"),
         .top = &kBloomTop, .qkv_layout = bloom_qkv},
        {.architecture = "falcon", .config = falcon_config, .blocks = falcon_blocks, .top = &kFalconTop,
         .qkv_layout = falcon_qkv},
        {.architecture = "gemma2", .config = gemma2_config, .blocks = fixed(gemma2), .norm_shift = -1.0f},
        {.architecture = "gpt2", .config = gpt2_config, .blocks = fixed(gpt2, "transformer.h", "n_layer"),
         .top = &kGpt2Top, .conv1d = true},
        {.architecture = "mamba", .config = mamba_config, .blocks = fixed(mamba, "backbone.layers"),
         .top = &kBackboneTop},
        {.architecture = "minimax-m2", .config = minimax_m2_config, .blocks = fixed(minimax_m2),
         .experts_key = "num_local_experts"},
        {.architecture = "gpt-oss", .config = gpt_oss_config, .blocks = fixed(gpt_oss), .gpt_oss_experts = true},
        {.architecture = "gemma4", .config = gemma4_config, .blocks = fixed(gemma4), .top = &kGemma4Top,
         .reads_rope_freqs = true},
        {.architecture = "gemma3", .config = gemma3_config, .blocks = fixed(gemma3), .norm_shift = -1.0f},
        {.architecture = "lfm2", .config = lfm2_config, .blocks = fixed(kLfm2Blocks), .top = &kLfm2Top},
        {.architecture = "llama", .config = llama_config, .blocks = fixed(llama), .unpermute_qk = true},
        {.architecture = "nemotron", .config = nemotron_config, .blocks = fixed(nemotron), .norm_shift = -1.0f},
        {.architecture = "phi3", .config = phi3_config, .blocks = fixed(phi3)},
        {.architecture = "qwen2", .config = qwen2_config, .blocks = fixed(llama)},
        {.architecture = "qwen2moe", .config = qwen2moe_config, .blocks = fixed(qwen2moe)},
        {.architecture = "qwen3", .config = qwen3_config, .blocks = fixed(qwen3)},
        {.architecture = "qwen3moe", .config = qwen3moe_config, .blocks = fixed(qwen3moe)},
        {.architecture = "stablelm", .config = stablelm_config, .blocks = fixed(llama)},
        {.architecture = "starcoder2", .config = starcoder2_config, .blocks = fixed(starcoder2)},
        {.architecture = "t5", .config = t5_seq2seq_config, .blocks = t5_blocks, .top = &kT5Top},
        {.architecture = "t5encoder", .config = t5_encoder_config, .blocks = t5_blocks, .top = &kT5Top}};
  }();
  return table;
}

// Hugging Face name of a GGUF tensor name, or "" when it has none.
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A parameter rather than a module's weight: its GGUF name has no ".weight" (mamba's A_log, D).
bool is_parameter(const std::string& hf_module) { return hf_module == "mixer.A_log" || hf_module == "mixer.D"; }

// `counts`: each block group's layer count.
std::string hf_name(const Arch& a, const std::vector<Blocks>& groups, const std::vector<int64_t>& counts,
                    const std::string& gguf, std::string* role) {
  const std::map<std::string, std::string>& top = *a.top;
  std::string stem = gguf, suffix;  // ".weight" / ".bias", or "" for a parameter
  for (const char* s : {".weight", ".bias"})
    if (ends_with(gguf, s)) stem = gguf.substr(0, gguf.size() - std::strlen(s)), suffix = s;
  if (auto it = top.find(stem); it != top.end()) return suffix.empty() ? "" : it->second + suffix;
  for (size_t g = 0; g < groups.size(); ++g) {
    const Blocks& b = groups[g];
    const size_t p = std::strlen(b.prefix);
    if (stem.rfind(b.prefix, 0) != 0) continue;
    auto dot2 = stem.find('.', p);
    if (dot2 == std::string::npos) return "";
    std::string index = stem.substr(p, dot2 - p);
    *role = stem.substr(dot2 + 1);
    if (index.empty() || index.size() > 9 ||
        !std::all_of(index.begin(), index.end(), [](unsigned char ch) { return std::isdigit(ch); }) ||
        (index.size() > 1 && index[0] == '0') || std::stoll(index) >= counts[g])
      return "";
    // a role with its suffix names a parameter (MiniMax-M2's exp_probs_b.bias)
    if (auto p = b.roles.find(*role + suffix); !suffix.empty() && p != b.roles.end())
      return std::string(b.layers) + "." + index + "." + p->second;
    auto it = b.roles.find(*role);
    if (it == b.roles.end() || is_parameter(it->second) != suffix.empty()) return "";
    return std::string(b.layers) + "." + index + "." + it->second + suffix;
  }
  return "";
}

DataType plain_dtype(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return DataType::FLOAT;
    case GgmlType::F16: return DataType::FLOAT16;
    case GgmlType::BF16: return DataType::BFLOAT16;
    case GgmlType::F64: return DataType::DOUBLE;
    case GgmlType::I8: return DataType::INT8;
    case GgmlType::I16: return DataType::INT16;
    case GgmlType::I32: return DataType::INT32;
    case GgmlType::I64: return DataType::INT64;
    default: return DataType::UNDEFINED;  // quantized
  }
}

}  // namespace

GgufCheckpoint::GgufCheckpoint(const std::string& path) : file_(path) {
  const GgufValue* av = file_.find_key("general.architecture");
  if (!av || av->type() != GgufValueType::STRING)
    throw Error(path + ": key 'general.architecture': " + (av ? "expected a string" : "missing"));
  const std::string arch_name(av->as_string());
  const Arch* arch = nullptr;
  std::string supported;
  for (const Arch& a : archs()) {
    if (arch_name == a.architecture) arch = &a;
    supported += (supported.empty() ? "" : ", ") + std::string(a.architecture);
  }
  // The other architectures of transformers' GGUF loader (GGUF_CONFIG_MAPPING), with the reason.
  static const std::map<std::string, std::string> kRefused = {
      {"deci", "transformers cannot load it (no deci config class)"}};
  if (auto r = kRefused.find(arch_name); !arch && r != kRefused.end())
    throw Error(path + ": key 'general.architecture': architecture '" + arch_name +
                "' is not supported for GGUF input: " + r->second);
  if (!arch)
    throw Error(path + ": key 'general.architecture': architecture '" + arch_name +
                "' is not supported for GGUF input (supported: " + supported + ")");
  config_.emplace(arch->config(Meta(file_, arch_name)), path);
  if (!arch->reads_rope_freqs && file_.find_tensor("rope_freqs.weight"))
    throw Error(path + ": tensor 'rope_freqs.weight': per-frequency rope factors (llama3 rope scaling) are not "
                       "supported for GGUF input");
  const std::vector<Blocks> groups = arch->blocks(*config_);
  std::vector<int64_t> counts;
  for (const Blocks& b : groups) counts.push_back(config_->get_int(b.count));
  const QkvLayout qkv = arch->qkv_layout ? arch->qkv_layout(*config_) : QkvLayout{};

  for (const GgufTensor& t : file_.tensors()) {
    if (arch->reads_rope_freqs && t.name == "rope_freqs.weight") continue;  // read by the config
    std::string role;
    std::string name = hf_name(*arch, groups, counts, t.name, &role);
    if (name.empty()) {
      unmapped_.push_back(t.name);
      continue;
    }
    auto fail = [&](const std::string& msg) { throw Error(path + ": tensor '" + t.name + "': " + msg); };
    Entry e;
    e.name = name;
    e.shape = t.shape();
    e.file = &file_.path();
    e.source = &t;
    e.data = t.data;
    if (arch->unpermute_qk && (role == "attn_q" || role == "attn_k")) {
      e.unpermute_heads = config_->get_int(role == "attn_q" ? "num_attention_heads" : "num_key_value_heads");
      if (e.shape[0] % (2 * e.unpermute_heads) != 0)
        fail(std::to_string(e.shape[0]) + " rows do not split into " + std::to_string(e.unpermute_heads) +
             " heads of even size");
    }
    if (qkv.groups > 0 && role == "attn_qkv") {  // Bloom / FalconModel.modify_tensors
      e.qkv_groups = qkv.groups;
      e.qkv_queries = qkv.queries;
      if (e.shape[0] % (qkv.groups * (qkv.queries + 2)) != 0)
        fail(std::to_string(e.shape[0]) + " rows do not split into " + std::to_string(qkv.groups) + " groups of " +
             std::to_string(qkv.queries) + " query heads, a key and a value");
    }
    if (ends_with(name, "norm.weight")) e.shift = arch->norm_shift;
    // mamba: the converter stored A = -exp(A_log) (MambaTensorProcessor takes log(-A)), and the
    // depthwise conv1d weight [channels, kernel] without its middle axis of 1
    e.log_of_negated = role == "ssm_a";
    // (LFM2's short convolution too: LFM2Model.modify_tensors squeezes it)
    if ((role == "ssm_conv1d" || role == "shortconv.conv") && ends_with(name, ".weight")) {
      if (e.shape.size() != 2) fail("expected [channels, kernel], got " + std::to_string(e.shape.size()) + " dims");
      e.shape = {e.shape[0], 1, e.shape[1]};
    }
    // GPT-2's Conv1D weights [in, out]: the converter stored them [out, in] (GPT2TensorProcessor
    // transposes back); output.weight is lm_head's Linear, not transposed
    if (arch->conv1d && e.shape.size() == 2 && !role.empty()) {
      e.stored_transposed = true;
      e.shape = {e.shape[1], e.shape[0]};
    }
    // Qwen2-MoE's shared expert gate: [hidden] in the file, a Linear's [1, hidden] in the model
    if (role == "ffn_gate_inp_shexp" && e.shape.size() == 1) e.shape = {1, e.shape[0]};
    // GPT-OSS's experts (GptOssModel.modify_tensors): weights stored [E, out, in], 3-D; biases [E, out]
    if (arch->gpt_oss_experts && ends_with(role, "_exps")) {
      const bool weight = ends_with(t.name, ".weight");
      if (e.shape.size() != (weight ? 3u : 2u) || e.shape[0] != config_->get_int("num_local_experts"))
        fail(std::string("expected ") + (weight ? "[experts, rows, columns]" : "[experts, width]") + " with " +
             std::to_string(config_->get_int("num_local_experts")) + " experts");
      e.experts_transposed = weight;
      if (weight) std::swap(e.shape[1], e.shape[2]);
      if (role == "ffn_gate_up_exps") {
        e.gate_up = Entry::GateUp::halves;
        if (e.shape.back() % 2 != 0) fail("an odd width does not split into gate and up halves");
      } else if (role != "ffn_down_exps") {
        e.gate_up = Entry::GateUp::pair;
        e.shape.back() *= 2;
      }
    }
    const bool transformed = e.unpermute_heads > 0 || e.qkv_groups > 0 || e.shift != 0.0f || e.log_of_negated ||
                             e.stored_transposed || e.rearranged();
    DataType plain = plain_dtype(t.type);
    if (plain == DataType::UNDEFINED && !can_dequantize(t.type))
      fail(std::string("ggml type ") + ggml_type_traits(static_cast<uint32_t>(t.type))->name +
           " cannot be dequantized (supported: " + dequantize_supported_types() + ")");
    if (transformed && plain != DataType::UNDEFINED && !is_float(plain))
      fail("integer tensor where a float tensor is expected");
    e.dtype = transformed || plain == DataType::UNDEFINED ? DataType::FLOAT : plain;
    if (e.gate_up == Entry::GateUp::pair) {  // ffn_gate_exps / ffn_up_exps: one entry, two sources
      const bool up = role == "ffn_up_exps";
      if (auto it = entries_.find(name); it != entries_.end()) {
        Entry& other = it->second;
        if (other.gate_up != Entry::GateUp::pair) fail("a second tensor for " + name);
        const GgufTensor* had = up ? other.odd_source : other.source;
        const GgufTensor& partner = *(up ? other.source : other.odd_source);
        if (had) fail("a second tensor for " + name);
        if (partner.ne != t.ne || partner.type != t.type)
          fail("shape or type differs from '" + partner.name + "', its gate / up partner");
        (up ? other.odd_source : other.source) = &t;
        (up ? other.odd_data : other.data) = t.data;
        continue;
      }
      if (up) {
        e.odd_source = &t, e.odd_data = t.data;
        e.source = nullptr, e.data = {};
      }
    }
    const size_t star = name.find(".*.");
    if (star == std::string::npos) {
      entries_.emplace(name, std::move(e));
      continue;
    }
    // stacked experts [E, rows, cols] (ffn_{gate,up,down}_exps): expert i is the Hugging Face
    // per-expert matrix experts.i.*_proj.weight, rows [i * rows, (i + 1) * rows) of the tensor
    const int64_t experts = config_->get_int(arch->experts_key);
    if (e.shape.size() != 3 || e.shape[0] != experts)
      fail("expected stacked experts [" + std::to_string(experts) + ", rows, columns]");
    const size_t bytes = t.data.size() / static_cast<size_t>(experts);
    for (int64_t i = 0; i < experts; ++i) {
      Entry x = e;
      x.name = name.substr(0, star) + "." + std::to_string(i) + name.substr(star + 2);
      x.shape = {e.shape[1], e.shape[2]};
      x.data = t.data.subspan(static_cast<size_t>(i) * bytes, bytes);
      entries_.emplace(x.name, std::move(x));
    }
  }
  for (const auto& [name, e] : entries_)
    if (e.gate_up == Entry::GateUp::pair && (!e.source || !e.odd_source)) {
      const std::string& have = (e.source ? e.source : e.odd_source)->name;
      throw Error(path + ": tensor '" + have + "': its " + (e.source ? "ffn_up_exps" : "ffn_gate_exps") +
                  " partner is missing (both make " + name + ")");
    }
}

const TensorInfo* GgufCheckpoint::find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::string GgufCheckpoint::stored_type(const TensorInfo& t) const {
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(static_cast<const Entry&>(t).source->type));
  return traits ? traits->name : "?";
}

uint64_t GgufCheckpoint::stored_bytes(const TensorInfo& t) const {
  const Entry& e = static_cast<const Entry&>(t);
  return e.data.size() + e.odd_data.size();
}

std::vector<std::string> GgufCheckpoint::names() const {
  std::vector<std::string> out = unmapped_;
  for (const auto& [name, _] : entries_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

bool stored_plainly(const GgufTensor& src, int64_t permuted_heads, float shift, bool log_of_negated) {
  return plain_dtype(src.type) != DataType::UNDEFINED && permuted_heads == 0 && shift == 0.0f && !log_of_negated;
}

}  // namespace

void GgufCheckpoint::Entry::rearrange(float* out) const {
  const int64_t m = gate_up == GateUp::none ? 1 : 2;  // values per position of the last axis
  for (int part = 0; part < (gate_up == GateUp::pair ? 2 : 1); ++part) {
    const GgufTensor& src = part ? *odd_source : *source;
    const std::span<const uint8_t> bytes = part ? odd_data : data;
    const std::vector<int64_t> s = src.shape();
    const int64_t E = s.size() == 3 ? s[0] : 1, R = s[s.size() - 2], K = s.back();
    // the stored axis that becomes the last (r when transposed, else k), and the other one
    const int64_t along = experts_transposed ? R : K, across = experts_transposed ? K : R;
    const int64_t half = gate_up == GateUp::halves ? along / 2 : along, last = m * half;
    const size_t row_bytes = bytes.size() / static_cast<size_t>(E * R);
    std::vector<float> row(static_cast<size_t>(K));
    for (int64_t e = 0; e < E; ++e)
      for (int64_t r = 0; r < R; ++r) {
        dequantize(src.type, bytes.subspan(static_cast<size_t>(e * R + r) * row_bytes, row_bytes), row);
        for (int64_t k = 0; k < K; ++k) {
          const int64_t a = experts_transposed ? r : k, b = experts_transposed ? k : r;
          const int64_t p = gate_up == GateUp::halves ? a / half : part;
          out[(e * across + b) * last + m * (a % half) + p] = row[static_cast<size_t>(k)];
        }
      }
  }
}

void GgufCheckpoint::Entry::undo_value_transform(std::span<float> v) const {
  if (shift != 0.0f)
    for (float& x : v) x = x + shift;
  if (log_of_negated)
    for (float& x : v) x = std::log(-x);
}

int64_t GgufCheckpoint::Entry::gguf_row(int64_t r) const {
  if (qkv_groups > 0) {
    const int64_t q = qkv_queries, group_rows = shape[0] / qkv_groups, d = group_rows / (q + 2);
    const int64_t g = r / group_rows, s = r % group_rows / d, i = r % d;
    return s < q ? (g * q + s) * d + i : (qkv_groups * q + (s - q) * qkv_groups + g) * d + i;
  }
  if (unpermute_heads == 0) return r;
  const int64_t d = shape[0] / unpermute_heads, half = d / 2;
  return r / d * d + 2 * (r % d % half) + r % d / half;
}

bool GgufCheckpoint::streams(const TensorInfo& t) const {
  const Entry& e = static_cast<const Entry&>(t);
  if (e.rearranged()) return false;
  return e.shape.size() == 2 || stored_plainly(*e.source, e.unpermute_heads + e.qkv_groups, e.shift, e.log_of_negated);
}

std::optional<BlockQuantization> GgufCheckpoint::stored_quantization(const TensorInfo& t) const {
  const Entry& e = static_cast<const Entry&>(t);
  if (e.shape.size() != 2 || e.shift != 0.0f || e.log_of_negated || e.stored_transposed || e.qkv_groups > 0 ||
      e.rearranged())
    return std::nullopt;
  switch (e.source->type) {
    case GgmlType::Q4_0: return BlockQuantization{.bits = 4, .block_size = 32, .symmetric = true, .from_checkpoint = true};
    case GgmlType::Q8_0: return BlockQuantization{.bits = 8, .block_size = 32, .symmetric = true, .from_checkpoint = true};
    case GgmlType::Q6_K: return BlockQuantization{.bits = 8, .block_size = 16, .symmetric = false, .from_checkpoint = true};
    default: return std::nullopt;
  }
}

namespace {

void put_scale(float value, DataType dtype, uint8_t* scales, int64_t index) {
  if (dtype == DataType::FLOAT16) {
    const uint16_t h = f32_to_f16(value);
    std::memcpy(scales + index * 2, &h, 2);
  } else {
    std::memcpy(scales + index * 4, &value, 4);
  }
}

// One Q6_K super-block (ql[128] | qh[64] | int8 scales[16] | fp16 d, weights/gguf_quants.cpp) as
// 16 MatMulNBits blocks of 16 elements starting at block `out`: the 6-bit quants one per byte,
// d * scales[b] as the scale, 32 as the zero point.
void q6_k_blocks(const uint8_t* in, int64_t out, DataType scale_dtype, uint8_t* data, uint8_t* scales,
                 uint8_t* zero_points) {
  const uint8_t* ql = in;
  const uint8_t* qh = in + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(in + 192);
  uint16_t dh;
  std::memcpy(&dh, in + 208, 2);
  const float d = f16_to_f32(dh);
  for (int b = 0; b < 16; ++b) {
    if (scales) put_scale(d * static_cast<float>(sc[b]), scale_dtype, scales, out + b);
    if (zero_points) zero_points[out + b] = 32;
  }
  if (!data) return;
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, r = e % 128;
    const int lo = (ql[64 * h + r % 64] >> (4 * (r / 64))) & 0x0F;
    const int hi = (qh[32 * h + r % 32] >> (2 * (r / 32))) & 0x03;
    data[out * 16 + e] = static_cast<uint8_t>(lo | hi << 4);
  }
}

}  // namespace

void GgufCheckpoint::produce_stored(const TensorInfo& t, int64_t row_begin, int64_t row_end, DataType scale_dtype,
                                    uint8_t* data, uint8_t* scales, uint8_t* zero_points) const {
  const Entry& e = static_cast<const Entry&>(t);
  const std::optional<BlockQuantization> scheme = stored_quantization(t);
  MOBIUS_ASSERT(scheme && (zero_points == nullptr || !scheme->symmetric) &&
                    (scale_dtype == DataType::FLOAT || scale_dtype == DataType::FLOAT16),
                "GgufCheckpoint::produce_stored: '" + t.name + "' is not a Q4_0 / Q8_0 / Q6_K matrix");
  if (row_end <= row_begin) return;  // no rows (a matrix of none: no row size either)
  const GgufTensor& src = *e.source;
  if (src.type == GgmlType::Q6_K) {
    const int64_t rows = e.shape[0], supers = e.shape[1] / 256;
    const size_t row_bytes = e.data.size() / static_cast<size_t>(rows);
    for (int64_t r = row_begin; r < row_end; ++r) {
      const uint8_t* in = e.data.data() + static_cast<size_t>(e.gguf_row(r)) * row_bytes;
      for (int64_t j = 0; j < supers; ++j)
        q6_k_blocks(in + j * 210, ((r - row_begin) * supers + j) * 16, scale_dtype, data, scales, zero_points);
    }
    return;
  }
  const bool q4 = src.type == GgmlType::Q4_0;
  const int64_t rows = e.shape[0], blocks = e.shape[1] / 32, blob = q4 ? 16 : 32;
  const size_t block_bytes = 2 + static_cast<size_t>(blob), row_bytes = e.data.size() / static_cast<size_t>(rows);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* in = e.data.data() + static_cast<size_t>(e.gguf_row(r)) * row_bytes;
    for (int64_t j = 0; j < blocks; ++j, in += block_bytes) {
      const int64_t out = (r - row_begin) * blocks + j;
      uint16_t scale;
      std::memcpy(&scale, in, 2);  // fp16 d, little-endian like the file
      if (scales) put_scale(f16_to_f32(scale), scale_dtype, scales, out);
      if (!data) continue;
      uint8_t* b = data + out * blob;
      const uint8_t* qs = in + 2;
      if (q4) {
        auto nibble = [&](int i) { return i < 16 ? qs[i] & 0x0f : qs[i - 16] >> 4; };
        for (int i = 0; i < 16; ++i) b[i] = static_cast<uint8_t>(nibble(2 * i) | nibble(2 * i + 1) << 4);
      } else {
        for (int i = 0; i < 32; ++i) b[i] = static_cast<uint8_t>(qs[i] ^ 0x80);  // int8 q -> q + 128
      }
    }
  }
}

void GgufCheckpoint::release(const TensorInfo& t, bool transpose, int64_t row_begin, int64_t row_end) const {
  const Entry& e = static_cast<const Entry&>(t);
  if (e.stored_transposed || e.qkv_groups > 0 || e.rearranged()) {  // rows read from all over the tensor
    file_.release(e.data);
    if (!e.odd_data.empty()) file_.release(e.odd_data);
    return;
  }
  const std::span<const uint8_t> data = e.data;
  if (row_end <= row_begin) return;
  if (transpose || e.shape.size() != 2) {
    file_.release(data);
    return;
  }
  const int64_t rows = e.shape[0], d = e.unpermute_heads > 0 ? rows / e.unpermute_heads : 1;
  const size_t row_bytes = data.size() / static_cast<size_t>(rows);
  const int64_t first = row_begin / d * d, last = (row_end + d - 1) / d * d;
  file_.release(data.subspan(static_cast<size_t>(first) * row_bytes, static_cast<size_t>(last - first) * row_bytes));
}

void GgufCheckpoint::produce_block_rows(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin,
                                        int64_t row_end, std::span<uint8_t> out) const {
  const int64_t rows = t.shape[0], cols = t.shape[1];
  if (transpose) return produce_sub(t, dst, true, 0, rows, row_begin, row_end, out);
  produce_sub(t, dst, false, row_begin, row_end, 0, cols, out);
}

bool GgufCheckpoint::tiles(const TensorInfo& t) const {
  const Entry& e = static_cast<const Entry&>(t);
  return e.shape.size() == 2 && !e.stored_transposed && !e.rearranged();
}

void GgufCheckpoint::produce_tile(const TensorInfo& t, DataType dst, int64_t row_begin, int64_t row_end,
                                  int64_t col_begin, int64_t col_end, std::span<uint8_t> out) const {
  MOBIUS_ASSERT(tiles(t) && 0 <= col_begin && col_begin <= col_end && col_end <= t.shape[0],
                "GgufCheckpoint::produce_tile: column range");
  produce_sub(t, dst, true, col_begin, col_end, row_begin, row_end, out);
}

void GgufCheckpoint::produce_sub(const TensorInfo& t, DataType dst, bool transpose, int64_t r0, int64_t r1,
                                 int64_t c0, int64_t c1, std::span<uint8_t> out) const {
  if (r1 <= r0 || c1 <= c0) return;  // nothing to write (a matrix of no rows: no row size either)
  const Entry& e = static_cast<const Entry&>(t);
  const GgufTensor& src = *e.source;
  const int64_t rows = e.shape[0];
  const GgmlTypeTraits& traits = *ggml_type_traits(static_cast<uint32_t>(src.type));
  const int64_t bs = traits.block_size, b0 = c0 / bs, b1 = (c1 + bs - 1) / bs;
  const size_t row_bytes = e.data.size() / static_cast<size_t>(rows);
  // HF row h*D + p*D/2 + j is GGUF row h*D + 2j + p (D = head size): LlamaModel.permute.
  const int64_t width = c1 - c0;
  std::vector<float> blocks(static_cast<size_t>((b1 - b0) * bs)), sub(static_cast<size_t>((r1 - r0) * width));
  for (int64_t r = r0; r < r1; ++r) {
    dequantize(src.type,
               e.data.subspan(static_cast<size_t>(e.gguf_row(r)) * row_bytes + static_cast<size_t>(b0 * traits.type_size),
                                static_cast<size_t>((b1 - b0) * traits.type_size)),
               blocks);
    float* row = sub.data() + (r - r0) * width;
    std::copy_n(blocks.data() + (c0 - b0 * bs), width, row);
    e.undo_value_transform({row, static_cast<size_t>(width)});
  }
  TensorView view{{e.name, DataType::FLOAT, {r1 - r0, width}, e.file},
                  {reinterpret_cast<const uint8_t*>(sub.data()), sub.size() * sizeof(float)}};
  convert_tensor(view, dst, transpose, out);
}

void GgufCheckpoint::produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin,
                             int64_t row_end, std::span<uint8_t> out) const {
  const Entry& e = static_cast<const Entry&>(t);
  if (e.stored_transposed) {  // the tensor as stored ([out, in]), produced the other way round
    Entry stored = e;
    stored.stored_transposed = false;
    stored.shape = {e.shape[1], e.shape[0]};
    produce_block_rows(stored, dst, !transpose, row_begin, row_end, out);
    return;
  }
  if (e.rearranged()) {
    MOBIUS_ASSERT(row_begin == 0 && row_end == output_rows(e.shape, transpose),
                  "GgufCheckpoint::produce: rearranged experts are produced whole");
    int64_t n = 1;
    for (int64_t d : e.shape) n *= d;
    if (dst == DataType::FLOAT && !transpose) {
      e.rearrange(reinterpret_cast<float*>(out.data()));
      return;
    }
    std::vector<float> f(static_cast<size_t>(n));
    e.rearrange(f.data());
    TensorView view{{e.name, DataType::FLOAT, e.shape, e.file},
                    {reinterpret_cast<const uint8_t*>(f.data()), f.size() * sizeof(float)}};
    convert_tensor(view, dst, transpose, out);
    return;
  }
  const GgufTensor& src = *e.source;
  if (stored_plainly(src, e.unpermute_heads + e.qkv_groups, e.shift, e.log_of_negated)) {
    convert_rows(TensorView{e, e.data}, dst, transpose, row_begin, row_end, out);
    return;
  }
  if (e.shape.size() == 2) {
    produce_block_rows(t, dst, transpose, row_begin, row_end, out);
    return;
  }
  MOBIUS_ASSERT(row_begin == 0 && row_end == output_rows(e.shape, transpose),
                "GgufCheckpoint::produce: a dequantized 1-D tensor is produced whole");
  int64_t n = 1;
  for (int64_t d : e.shape) n *= d;
  std::vector<float> scratch;
  float* f;
  if (dst == DataType::FLOAT && !transpose) {
    f = reinterpret_cast<float*>(out.data());
  } else {
    scratch.resize(static_cast<size_t>(n));
    f = scratch.data();
  }
  if (e.unpermute_heads == 0 && e.qkv_groups == 0) {
    dequantize(src.type, e.data, {f, static_cast<size_t>(n)});
  } else {
    const int64_t rows = e.shape[0], cols = n / rows;
    const int64_t block = ggml_type_traits(static_cast<uint32_t>(src.type))->block_size;
    if (cols % block == 0) {
      const size_t row_bytes = e.data.size() / static_cast<size_t>(rows);
      for (int64_t r = 0; r < rows; ++r)
        dequantize(src.type, e.data.subspan(static_cast<size_t>(e.gguf_row(r)) * row_bytes, row_bytes),
                   {f + r * cols, static_cast<size_t>(cols)});
    } else {  // a quantized 1-D tensor (bias): rows are not block-aligned
      std::vector<float> all(static_cast<size_t>(n));
      dequantize(src.type, e.data, all);
      for (int64_t r = 0; r < rows; ++r) std::copy_n(&all[e.gguf_row(r) * cols], cols, f + r * cols);
    }
  }
  e.undo_value_transform({f, static_cast<size_t>(n)});
  if (f != reinterpret_cast<float*>(out.data())) {
    TensorView view{{e.name, DataType::FLOAT, e.shape, e.file},
                    {reinterpret_cast<const uint8_t*>(f), static_cast<size_t>(n) * 4}};
    convert_tensor(view, dst, transpose, out);
  }
}

}  // namespace mobius
