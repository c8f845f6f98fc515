// Qwen4-Exp text decoder, model type qwen4_exp_text (transformers/models/qwen4_exp/modeling_qwen4_exp.py
// Qwen4ExpForCausalLM, Qwen4ExpTextModel; configuration_qwen4_exp.py Qwen4ExpTextConfig, built on
// Qwen3_5MoeTextConfig). H = hidden_size, C = hc_count (> 1) residual streams, every norm an RMSNorm
// by (1 + weight) (Qwen4ExpTextRMSNorm; over each stream's H channels where it spans C * H):
//   h = embed_tokens(ids) repeated C times [batch, seq, C * H]
//   layer i (Qwen4ExpTextDecoderLayer):
//     h += ple(h, ids)                 on the layers of ple_layer_ids (one-indexed, linear layers only)
//     x, w = attn_hyper_connection(h); h += (mixer(x) broadcast over the streams * w) flattened
//     x, w = mlp_hyper_connection(h);  h += (mlp(x) ... * w) flattened
//   out = hyper_connection_mixer(h) (its mix, no combine) -> lm_head (no final norm)
// Qwen4ExpTextGatedResidual(h): n = hc_norm(h); m = sigmoid(up(silu(down(n) / C))) (input_mix_weight_down
// C * H -> hc_lowrank, input_mix_weight_up back); x = mean over the streams of m * n [batch, seq, H];
// w = 2 * sigmoid(block_inject_weight(n) / C) [batch, seq, C].
// mixer: the gated DeltaNet (Qwen3.5's, blocks/gated_delta_net.h, separate projections; its output
// gate output_gate_type, default hidden_act: silu, or sigmoid) on "linear_attention" layers, Qwen3.5's
// gated attention under the QSA indexer's mask (blocks/qsa.h) on "indexed_attention" ones (layer_types;
// "full_attention" reads as "indexed_attention"; without it every full_attention_interval-th, default 4).
// mlp: Qwen3-Next's sparse MoE block (archs/qwen3_next.h qwen3_next_moe, norm_topk_prob) on every layer.
// ple (Qwen4ExpTextPLELayer), its hashed n-gram embedding e [batch, seq, ple_embed_dim] (below):
//   k = norm_key(key_proj(e)) per stream, v = value_proj(e) [H], q = norm_query(h) per stream;
//   g = sum(k * q) / sqrt(H) per stream; g = sign(g) sqrt(max(|g|, 1e-6));
//   y = sigmoid(g) * v per stream [batch, seq, C * H] (padding zeroed, as yn = norm_conv(y));
//   out = y + silu(depthwise causal conv1d of yn, kernel ple_conv_kernel_size, dilation ngram_size)
// Qwen4ExpTextNGramEmbedding: n = ngram_size, ids at padding read as eos_token_id (the first of a
// list); over the history of the last n - 1 ids and the step's, token t's shift-s id is the id s
// tokens back, or eos where an eos lies among the s tokens before t; for each order g = 2 .. n,
// mixed = XOR_{s < g} (shift-s id * multiplier_s) and heads_per_ngram heads look up row
// (mixed mod prime_h) + offset_h of ngram_embedding (its split_ngram_parts shards
// ngram_embedding.shard_{k}.weight, torch.chunk's sizes, concatenated); the (n - 1) *
// heads_per_ngram rows of ple_embed_dim / heads each, concatenated. The multipliers (splitmix64 of
// seed + 10007 * the PLE layer's index) and the primes (the first primes from ngram_vocab_size_base,
// numbered across the PLE layers' heads) are computed here as transformers' _build_layer_multipliers
// and _find_nth_prime_after; the table's rows padded to make_ngram_vocab_size_divisible_by.
// States (tasks/layer_state.h): an indexed layer past_key_values.{i}.key|value and indexer_keys
// [batch_size, past_sequence_length, indexer_head_dim]; a linear layer conv_state and
// recurrent_state (the DeltaNet's), a PLE layer also ple_conv_state [batch_size, C * H,
// (ple_conv_kernel_size - 1) * ngram_size] (the conv's last inputs) and ngram_context int64
// [batch_size, ngram_size - 1]: the last n - 1 ids plus one, 0 standing for eos (transformers'
// empty history), so that the zero state every runtime starts from is transformers' first step.
// onnxruntime-genai 0.18 has no qwen4_exp type: the package is built with --runtime none.
#include <cmath>
#include <limits>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/moe_config.h"
#include "archs/qwen3_next.h"
#include "blocks/activation.h"
#include "blocks/decoder.h"
#include "blocks/mamba.h"
#include "blocks/qsa.h"
#include "blocks/spec_check.h"
#include "util/error.h"

namespace mobius {
namespace {

// One PLE layer's hashed n-gram table (Qwen4ExpTextNGramEmbedding's buffers).
struct Qwen4NGramTable {
  std::vector<int64_t> multipliers;           // [ngram_size]
  std::vector<int64_t> head_sizes, offsets;   // [(ngram_size - 1) * heads_per_ngram]
  int64_t rows;                               // padded to make_ngram_vocab_size_divisible_by
};

struct Qwen4ExpSpec {
  DecoderSpec base;  // sizes, attention, RoPE, MLP options, dtype
  GatedDeltaNetOptions delta;
  QsaIndexerOptions indexer;
  FeedForwardFactory make_moe;
  int64_t streams, lowrank;           // hc_count, hc_lowrank
  std::vector<int64_t> ple_index;     // per layer: its index among the PLE layers, or -1
  std::vector<Qwen4NGramTable> tables;  // per PLE layer
  int64_t ple_dim = 0, ple_kernel = 0, ngram = 0, heads_per_ngram = 0, shards = 0, eos = 0;
};

uint64_t qwen4_splitmix64(uint64_t v) {
  v += 0x9E3779B97F4A7C15ULL;
  v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ULL;
  v = (v ^ (v >> 27)) * 0x94D049BB133111EBULL;
  return v ^ (v >> 31);
}

bool qwen4_is_prime(int64_t v) {
  if (v < 2) return false;
  if (v % 2 == 0) return v == 2;
  for (int64_t d = 3; d * d <= v; d += 2)
    if (v % d == 0) return false;
  return true;
}

// RMSNorm by (1 + weight [groups * size]) over each group of `size` channels, in float32
// (Qwen4ExpTextRMSNorm with group_size). x: [batch, seq, groups * size].
class Qwen4GroupNorm : public Module {
 public:
  Qwen4GroupNorm(int64_t groups, int64_t size, float eps, DataType dtype) : groups_(groups), size_(size), eps_(eps) {
    weight = param("weight", {groups * size}, dtype);
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    const DataType dtype = x->dtype;
    Value* w = weight->value(op);
    if (dtype != DataType::FLOAT) {
      x = op.Cast(x, {.to = DataType::FLOAT});
      w = op.Cast(w, {.to = DataType::FLOAT});
    }
    Value* ones = op.builder().constant_f32(std::vector<float>(static_cast<size_t>(size_), 1.0f), {size_});
    Value* y = op.RMSNormalization(op.Reshape(x, {0, 0, groups_, size_}), ones, {.axis = -1, .epsilon = eps_});
    y = op.Mul(op.Reshape(y, {0, 0, groups_ * size_}), op.Add(w, 1.0));
    return dtype == DataType::FLOAT ? y : op.Cast(y, {.to = dtype});
  }
  Parameter* weight;

 private:
  int64_t groups_, size_;
  float eps_;
};

// Qwen4ExpTextGatedResidual: the block input mixed from the streams and, with `combine`, each
// stream's weight for the block's output.
class Qwen4GatedResidual : public Module {
 public:
  Qwen4GatedResidual(const Qwen4ExpSpec& s, bool combine) : streams_(s.streams), hidden_(s.base.hidden_size) {
    const int64_t width = streams_ * hidden_;
    const DataType dtype = s.base.dtype;
    hc_norm = child<Qwen4GroupNorm>("hc_norm", streams_, hidden_, s.base.norm_eps, dtype);
    input_mix_weight_down = child<Linear>("input_mix_weight_down", LinearOptions{width, s.lowrank, false, dtype});
    input_mix_weight_up = child<Linear>("input_mix_weight_up", LinearOptions{s.lowrank, width, false, dtype});
    if (combine) block_inject_weight = child<Linear>("block_inject_weight", LinearOptions{width, streams_, false, dtype});
  }
  struct Mix {
    Value* input;   // [batch, seq, H]
    Value* inject;  // [batch, seq, C]; null without combine
  };
  // h: [batch, seq, C * H].
  Mix forward(Ops& op, Value* h) const {
    auto s = enter(op);
    const double c = static_cast<double>(streams_);
    Value* n = hc_norm->forward(op, h);
    Value* m = activation(op, "silu", op.Div(input_mix_weight_down->forward(op, n), c));
    m = op.Sigmoid(input_mix_weight_up->forward(op, m));
    Value* input = op.ReduceMean(op.Mul(op.Reshape(m, {0, 0, streams_, hidden_}), op.Reshape(n, {0, 0, streams_, hidden_})),
                                 {2}, {.keepdims = 0});
    Value* inject = block_inject_weight
                        ? op.Mul(op.Sigmoid(op.Div(block_inject_weight->forward(op, n), c)), 2.0)
                        : nullptr;
    return {input, inject};
  }
  // h + the block output y [batch, seq, H] weighted per stream by inject [batch, seq, C].
  Value* add(Ops& op, Value* h, Value* y, Value* inject) const {
    Value* per_stream = op.Mul(op.Unsqueeze(y, {2}), op.Unsqueeze(inject, {3}));
    return op.Add(h, op.Reshape(per_stream, {0, 0, streams_ * hidden_}));
  }
  Qwen4GroupNorm* hc_norm;
  Linear *input_mix_weight_down, *input_mix_weight_up, *block_inject_weight = nullptr;

 private:
  int64_t streams_, hidden_;
};

// Qwen4ExpTextNGramEmbedding (see the top of this file).
class Qwen4NGramEmbedding : public Module {
 public:
  Qwen4NGramEmbedding(const Qwen4ExpSpec& s, const Qwen4NGramTable& t) : t_(t), n_(s.ngram), eos_(s.eos) {
    heads_ = (s.ngram - 1) * s.heads_per_ngram;
    heads_per_ngram_ = s.heads_per_ngram;
    dim_ = s.ple_dim / heads_;
    // save_pretrained's torch.chunk(weight, split_ngram_parts): ceil(rows / parts) rows each, the last fewer
    const int64_t chunk = (t.rows + s.shards - 1) / s.shards;
    for (int64_t k = 0, start = 0; start < t.rows; ++k, start += chunk)
      shards.push_back(param("ngram_embedding.shard_" + std::to_string(k) + ".weight",
                             {std::min(chunk, t.rows - start), dim_}, s.base.dtype));
  }
  struct Result {
    Value* embeddings;  // [batch, seq, ple_embed_dim]
    Value* context;     // the next ngram_context [batch, n - 1] (ids + 1)
  };
  // ids: int64 [batch, seq] (eos at padding); context: ngram_context [batch, n - 1].
  Result forward(Ops& op, Value* ids, Value* context) const {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
    Value* eos = b.scalar_i64(eos_);
    Value* previous = op.Where(op.Equal(context, 0.0), eos, op.Sub(context, 1.0));
    Value* history = op.Concat({previous, ids}, {.axis = 1});  // [batch, n - 1 + seq]
    Value* next_context = op.Add(op.Slice(history, {-(n_ - 1)}, {kEnd}, {1}), 1.0);
    // the id `shift` tokens back of each step token; eos where an eos lies among those tokens
    std::vector<Value*> shifted{ids};
    Value* broken = nullptr;
    for (int64_t shift = 1; shift < n_; ++shift) {
      Value* back = op.Slice(history, {n_ - 1 - shift}, {-shift}, {1});
      Value* is_eos = op.Equal(back, static_cast<double>(eos_));
      broken = broken ? op.Or(broken, is_eos) : is_eos;
      shifted.push_back(op.Where(broken, eos, back));
    }
    std::vector<Value*> rows;
    Value* mixed = op.Mul(shifted[0], b.ints({t_.multipliers[0]}));
    for (int64_t order = 2; order <= n_; ++order) {
      mixed = op.BitwiseXor(mixed, op.Mul(shifted[static_cast<size_t>(order - 1)], b.ints({t_.multipliers[static_cast<size_t>(order - 1)]})));
      const auto first = static_cast<size_t>((order - 2) * heads_per_ngram_);
      const std::vector<int64_t> sizes(t_.head_sizes.begin() + first, t_.head_sizes.begin() + first + heads_per_ngram_);
      const std::vector<int64_t> offsets(t_.offsets.begin() + first, t_.offsets.begin() + first + heads_per_ngram_);
      rows.push_back(op.Add(op.Mod(op.Unsqueeze(mixed, {2}), b.ints(sizes)), b.ints(offsets)));
    }
    std::vector<Value*> parts;
    for (const Parameter* p : shards) parts.push_back(p->value(op));
    Value* table = parts.size() == 1 ? parts[0] : op.Concat(parts, {.axis = 0});
    Value* e = op.Gather(table, op.Concat(rows, {.axis = 2}));  // [batch, seq, heads, dim]
    return {op.Reshape(e, {0, 0, heads_ * dim_}), next_context};
  }
  std::vector<Parameter*> shards;

 private:
  Qwen4NGramTable t_;
  int64_t n_, eos_, heads_ = 0, heads_per_ngram_ = 0, dim_ = 0;
};

// Qwen4ExpTextPLELayer (see the top of this file).
class Qwen4PLE : public Module {
 public:
  Qwen4PLE(const Qwen4ExpSpec& s, const Qwen4NGramTable& t)
      : streams_(s.streams), hidden_(s.base.hidden_size), kernel_(s.ple_kernel), dilation_(s.ngram) {
    const int64_t width = streams_ * hidden_;
    const DataType dtype = s.base.dtype;
    const float eps = s.base.norm_eps;
    ple_embedding = child<Qwen4NGramEmbedding>("ple_embedding", s, t);
    key_proj = child<Linear>("key_proj", LinearOptions{s.ple_dim, width, false, dtype});
    value_proj = child<Linear>("value_proj", LinearOptions{s.ple_dim, hidden_, false, dtype});
    norm_key = child<Qwen4GroupNorm>("norm_key", streams_, hidden_, eps, dtype);
    norm_query = child<Qwen4GroupNorm>("norm_query", streams_, hidden_, eps, dtype);
    norm_conv = child<Qwen4GroupNorm>("norm_conv", streams_, hidden_, eps, dtype);
    conv_weight = param("conv1d.weight", {width, 1, kernel_}, dtype);
    window_ = (kernel_ - 1) * dilation_;
  }
  // {ple_conv_state, ngram_context}, replaced every step.
  LayerState state() const {
    LayerState st{StateKind::recurrent};
    st.tensors = {{.name = "ple_conv_state", .shape = {"batch_size", streams_ * hidden_, window_}},
                  {.name = "ngram_context", .shape = {"batch_size", dilation_ - 1}, .dtype = DataType::INT64}};
    return st;
  }
  // h: [batch, seq, C * H]; ids int64 [batch, seq] (eos at padding); token_mask [batch, seq];
  // past {ple_conv_state, ngram_context}. Returns the PLE output and the two states.
  MixerResult forward(Ops& op, Value* h, Value* ids, Value* token_mask, std::span<Value* const> past) const {
    auto s = enter(op);
    constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
    const int64_t width = streams_ * hidden_;
    Qwen4NGramEmbedding::Result e = ple_embedding->forward(op, ids, past[1]);
    Value* key = op.Reshape(norm_key->forward(op, key_proj->forward(op, e.embeddings)), {0, 0, streams_, hidden_});
    Value* query = op.Reshape(norm_query->forward(op, h), {0, 0, streams_, hidden_});
    Value* value = value_proj->forward(op, e.embeddings);
    Value* gate = op.Div(op.ReduceSum(op.Mul(key, query), {3}), std::sqrt(static_cast<double>(hidden_)));
    gate = op.Mul(op.Sqrt(op.Max(op.Abs(gate), 1e-6)), op.Sign(gate));                // [b, s, C, 1]
    Value* gated = op.Reshape(op.Mul(op.Sigmoid(gate), op.Unsqueeze(value, {2})), {0, 0, width});
    Value* normed = norm_conv->forward(op, gated);
    Value* mask = op.Unsqueeze(token_mask, {2});
    gated = op.Mul(gated, mask);
    normed = op.Mul(normed, mask);
    // the dilated depthwise conv over the last window_ inputs and the step's: tap k reads the
    // input k * dilation after the window's start
    Value* window = op.Concat({past[0], op.Transpose(normed, {.perm = {0, 2, 1}})}, {.axis = 2});  // [b, C H, L + s]
    Value* next_state = op.Slice(window, {-window_}, {kEnd}, {2});
    Value* w = conv_weight->value(op);
    Value* conv = nullptr;
    for (int64_t k = 0; k < kernel_; ++k) {
      const int64_t start = k * dilation_, end = k == kernel_ - 1 ? kEnd : -(window_ - start);
      Value* tap = op.Mul(op.Slice(window, {start}, {end}, {2}), op.Reshape(op.Slice(w, {k}, {k + 1}, {2}), {width, 1}));
      conv = conv ? op.Add(conv, tap) : tap;
    }
    Value* y = op.Transpose(activation(op, "silu", conv), {.perm = {0, 2, 1}});
    return {op.Add(gated, y), {next_state, e.context}};
  }
  Qwen4NGramEmbedding* ple_embedding;
  Linear *key_proj, *value_proj;
  Qwen4GroupNorm *norm_key, *norm_query, *norm_conv;
  Parameter* conv_weight;  // conv1d.weight [C * H, 1, kernel]

 private:
  int64_t streams_, hidden_, kernel_, dilation_, window_ = 0;
};

class Qwen4ExpDecoderLayer : public Module {
 public:
  Qwen4ExpDecoderLayer(const Qwen4ExpSpec& s, int64_t i) {
    const auto layer = static_cast<size_t>(i);
    if (s.base.layer_types.at(layer) == "linear_attention")
      mixer = adopt("linear_attn", std::make_unique<GatedDeltaNetMixer>(s.delta));
    else
      mixer = adopt("self_attn", std::make_unique<QsaAttention>(s.base.attention, s.indexer));
    mlp = adopt("mlp", s.make_moe(i));
    if (const int64_t p = s.ple_index.at(layer); p >= 0) ple = child<Qwen4PLE>("ple", s, s.tables.at(static_cast<size_t>(p)));
    attn_hyper_connection = child<Qwen4GatedResidual>("attn_hyper_connection", s, true);
    mlp_hyper_connection = child<Qwen4GatedResidual>("mlp_hyper_connection", s, true);
    for (const LayerState& st : mixer->states()) mixer_tensors_ += state_tensors(st).size();
  }
  LayerStates states() const {
    LayerStates st = mixer->states();
    if (ple) st.push_back(ple->state());
    return st;
  }
  // h: [batch, seq, C * H]; ids: the PLE's ids; past: the mixer's states, then the PLE's.
  MixerResult forward(Ops& op, Value* h, const AttentionContext& ctx, Value* ids, std::span<Value* const> past) const {
    auto s = enter(op);
    std::vector<Value*> ple_present;
    if (ple) {
      MOBIUS_ASSERT(past.size() == mixer_tensors_ + 2, "a PLE layer takes its n-gram and conv states");
      MixerResult p = ple->forward(op, h, ids, ctx.token_mask, past.subspan(mixer_tensors_));
      h = op.Add(h, p.hidden);
      ple_present = std::move(p.present);
    }
    Qwen4GatedResidual::Mix a = attn_hyper_connection->forward(op, h);
    MixerResult r = mixer->mix(op, a.input, ctx, past.empty() ? past : past.first(mixer_tensors_));
    h = attn_hyper_connection->add(op, h, r.hidden, a.inject);
    Qwen4GatedResidual::Mix m = mlp_hyper_connection->forward(op, h);
    r.hidden = mlp_hyper_connection->add(op, h, mlp->forward(op, m.input), m.inject);
    r.present.insert(r.present.end(), ple_present.begin(), ple_present.end());
    return r;
  }
  TokenMixer* mixer;
  FeedForward* mlp;
  Qwen4PLE* ple = nullptr;
  Qwen4GatedResidual *attn_hyper_connection, *mlp_hyper_connection;

 private:
  size_t mixer_tensors_ = 0;
};

class Qwen4ExpTextModel : public Module {
 public:
  explicit Qwen4ExpTextModel(const Qwen4ExpSpec& s) {
    embed_tokens = child<Embedding>("embed_tokens", s.base.vocab_size, s.base.hidden_size, s.base.dtype);
    for (int64_t i = 0; i < s.base.num_hidden_layers; ++i)
      layers.push_back(child<Qwen4ExpDecoderLayer>("layers." + std::to_string(i), s, i));
    hyper_connection_mixer = child<Qwen4GatedResidual>("hyper_connection_mixer", s, false);
  }
  Embedding* embed_tokens;
  std::vector<Qwen4ExpDecoderLayer*> layers;
  Qwen4GatedResidual* hyper_connection_mixer;
};

class Qwen4ExpCausalLM : public CausalLM {
 public:
  explicit Qwen4ExpCausalLM(Qwen4ExpSpec s) : s_(std::move(s)) {
    check_attention(s_.base.attention);
    model_ = child<Qwen4ExpTextModel>("model", s_);
    lm_head_ = child<LMHead>("lm_head", LMHeadOptions{s_.base.hidden_size, s_.base.vocab_size, false, s_.base.dtype},
                             s_.base.tie_word_embeddings ? model_->embed_tokens : nullptr);
  }
  DataType dtype() const override { return s_.base.dtype; }
  int64_t vocab_size() const override { return s_.base.vocab_size; }
  std::vector<LayerStates> layer_states() const override {
    std::vector<LayerStates> states;
    for (const Qwen4ExpDecoderLayer* layer : model_->layers) states.push_back(layer->states());
    return states;
  }

  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    MOBIUS_ASSERT(!in.inputs_embeds, "qwen4_exp_text's n-gram embeddings are looked up from input_ids");
    const DecoderSpec& b = s_.base;
    CausalLMOutputs out;
    Value* h;
    {
      auto scope = op.builder().scope("model");
      Value* e = model_->embed_tokens->forward(op, in.input_ids);
      h = op.Concat(std::vector<Value*>(static_cast<size_t>(s_.streams), e), {.axis = -1});  // [b, s, C * H]
      AttentionContext recurrent{nullptr};
      recurrent.token_mask = step_token_mask(op, in.attention_mask, in.input_ids, b.dtype);
      recurrent.position_ids = in.position_ids;
      Value* ids = nullptr;  // the PLE's: eos at padding (transformers' conv_mask)
      if (!s_.tables.empty())
        ids = op.Where(op.Cast(recurrent.token_mask, {.to = DataType::BOOL}), in.input_ids, op.builder().scalar_i64(s_.eos));
      AttentionContext attention{nullptr};
      for (size_t i = 0; i < model_->layers.size(); ++i) {
        const bool linear = b.layer_types[i] == "linear_attention";
        if (!linear && !attention.mask)
          attention = AttentionContext{causal_mask(op, in.attention_mask, in.input_ids, b.dtype),
                                       rope_tables(op, b.rope, in.position_ids, b.dtype)};
        MixerResult r = model_->layers[i]->forward(op, h, linear ? recurrent : attention, ids, in.past.at(i));
        h = r.hidden;
        out.present.push_back(std::move(r.present));
      }
      h = model_->hyper_connection_mixer->forward(op, h).input;
    }
    out.logits = lm_head_->forward(op, h);
    return out;
  }

 private:
  Qwen4ExpSpec s_;
  Qwen4ExpTextModel* model_;
  LMHead* lm_head_;
};

// ple_layer_ids and the n-gram tables of Qwen4ExpTextConfig / Qwen4ExpTextNGramEmbedding.
void read_qwen4_ple(const HfConfig& c, Qwen4ExpSpec& s) {
  const int64_t layers = s.base.num_hidden_layers;
  s.ple_index.assign(static_cast<size_t>(layers), -1);
  std::vector<int64_t> ids;  // sorted, unique (__post_init__)
  if (c.has("ple_layer_ids")) {
    const nlohmann::json& v = c.json()["ple_layer_ids"];
    if (!v.is_array()) c.fail("ple_layer_ids", "expected a list of one-indexed layer ids");
    for (const nlohmann::json& id : v) {
      if (!id.is_number_integer()) c.fail("ple_layer_ids", "expected a list of one-indexed layer ids");
      const int64_t layer = id.get<int64_t>();
      if (layer < 1 || layer > layers)
        c.fail("ple_layer_ids", "ids must be in [1, num_hidden_layers] (" + std::to_string(layers) + ")");
      if (s.base.layer_types[static_cast<size_t>(layer - 1)] != "linear_attention")
        c.fail("ple_layer_ids", "PLE is only supported on linear_attention layers (layer " + std::to_string(layer) + ")");
      ids.push_back(layer);
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.empty()) return;
  for (size_t p = 0; p < ids.size(); ++p) s.ple_index[static_cast<size_t>(ids[p] - 1)] = static_cast<int64_t>(p);

  s.ple_dim = c.int_or("ple_embed_dim", s.base.hidden_size);
  check_size("ple_embed_dim", s.ple_dim, kMaxHiddenSize);
  s.ple_kernel = c.int_or("ple_conv_kernel_size", 4);
  if (s.ple_kernel < 2 || s.ple_kernel > kMaxSmallSize) c.fail("ple_conv_kernel_size", "expected 2 to " + std::to_string(kMaxSmallSize));
  s.ngram = c.int_or("ngram_size", 3);
  if (s.ngram < 2 || s.ngram > kMaxSmallSize) c.fail("ngram_size", "expected 2 to " + std::to_string(kMaxSmallSize));
  s.heads_per_ngram = c.int_or("heads_per_ngram", 8);
  check_size("heads_per_ngram", s.heads_per_ngram, kMaxHeads);
  const int64_t heads = (s.ngram - 1) * s.heads_per_ngram;
  if (s.ple_dim % heads != 0)
    c.fail("ple_embed_dim", "must be divisible by (ngram_size - 1) * heads_per_ngram (" + std::to_string(heads) + ")");
  s.shards = c.int_or("split_ngram_parts", 512);
  check_size("split_ngram_parts", s.shards, kMaxPositions);
  const int64_t divisor = c.int_or("make_ngram_vocab_size_divisible_by", 128);
  check_size("make_ngram_vocab_size_divisible_by", divisor, kMaxPositions);
  const int64_t base = c.int_or("ngram_vocab_size_base", 20000000);
  const int64_t seed = c.int_or("seed", 1234);
  if (!c.has("eos_token_id")) c.fail("eos_token_id", "must be set when PLE layers are enabled (ple_layer_ids)");
  const nlohmann::json& eos = c.json()["eos_token_id"];
  const nlohmann::json& first = eos.is_array() ? (eos.empty() ? eos : eos[0]) : eos;
  if (!first.is_number_integer() || first.get<int64_t>() < 0 || first.get<int64_t>() >= s.base.vocab_size)
    c.fail("eos_token_id", "expected a token id (or a list whose first is one) below vocab_size");
  s.eos = first.get<int64_t>();

  // the primes from `base` on, numbered across the PLE layers' heads (_find_nth_prime_after)
  std::vector<int64_t> primes;
  for (int64_t v = base; static_cast<int64_t>(primes.size()) < static_cast<int64_t>(ids.size()) * heads; ++v)
    if (qwen4_is_prime(v)) primes.push_back(v);
  const uint64_t max_long = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const uint64_t half = std::max<uint64_t>(1, max_long / static_cast<uint64_t>(s.base.vocab_size) / 2);
  for (size_t p = 0; p < ids.size(); ++p) {
    Qwen4NGramTable t;
    const uint64_t layer_seed = static_cast<uint64_t>(seed + 10007 * static_cast<int64_t>(p));
    for (int64_t i = 0; i < s.ngram; ++i)
      t.multipliers.push_back(static_cast<int64_t>(
          2 * (qwen4_splitmix64(layer_seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(i + 1)) % half) + 1));
    int64_t total = 0;
    for (int64_t h = 0; h < heads; ++h) {
      t.head_sizes.push_back(primes.at(p * static_cast<size_t>(heads) + static_cast<size_t>(h)));
      t.offsets.push_back(total);
      total += t.head_sizes.back();
    }
    t.rows = (total + divisor - 1) / divisor * divisor;
    s.tables.push_back(std::move(t));
  }
}

Qwen4ExpSpec qwen4_exp_spec(const HfConfig& c, DataType dtype) {
  Qwen4ExpSpec s;
  // RoPE on the whole head by default: Qwen4ExpTextConfig.__post_init__ skips Qwen3_5MoeTextConfig's
  // partial_rotary_factor default 0.25
  s.base = qwen3_next_layers_spec(c, dtype, "moe_intermediate_size", 1.0);
  DecoderSpec& b = s.base;
  // __post_init__: without layer_types every full_attention_interval-th layer indexed, else
  // "full_attention" entries read as "indexed_attention"
  const int64_t interval = c.int_or("full_attention_interval", 4);
  if (interval < 1) c.fail("full_attention_interval", "must be positive");
  std::vector<std::string> fallback;
  for (int64_t i = 0; i < b.num_hidden_layers; ++i)
    fallback.push_back((i + 1) % interval != 0 ? "linear_attention" : "indexed_attention");
  b.layer_types = read_layer_list(c, "layer_types", b.num_hidden_layers,
                                  {"linear_attention", "indexed_attention", "full_attention"}, fallback);
  for (std::string& t : b.layer_types)
    if (t == "full_attention") t = "indexed_attention";

  s.delta = qwen3_next_delta(c, b, GatedDeltaNetProjections::separate);
  const std::string gate = c.string_or("output_gate_type", b.mlp.hidden_act);
  if (gate != "silu" && gate != "sigmoid") c.fail("output_gate_type", "expected \"silu\" or \"sigmoid\" (default hidden_act)");
  s.delta.output_gate = gate == "silu" ? OutputGate::silu : OutputGate::sigmoid;

  MoEOptions m = qwen3_next_moe(c, b);
  m.router.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  s.make_moe = sparse_moe(m, b.mlp);

  s.streams = c.int_or("hc_count", 4);
  if (s.streams < 2 || s.streams > kMaxHeads) c.fail("hc_count", "expected 2 to " + std::to_string(kMaxHeads));
  s.lowrank = c.int_or("hc_lowrank", 320);
  check_size("hc_lowrank", s.lowrank, kMaxHiddenSize);

  // the QSA indexer: every field required (Qwen4ExpTextAttention always builds one)
  for (const char* k : {"indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget", "indexer_compress_ratio"})
    if (!c.has(k)) c.fail(k, "required: every indexed_attention layer has a QSA indexer");
  if (c.get_int("indexer_kv_heads") != 1) c.fail("indexer_kv_heads", "Qwen4-Exp QSA requires 1");
  s.indexer = QsaIndexerOptions{.hidden_size = b.hidden_size,
                                .num_heads = c.get_int("indexer_n_heads"),
                                .head_dim = c.get_int("indexer_head_dim"),
                                .budget = c.get_int("indexer_budget"),
                                .compress_ratio = c.get_int("indexer_compress_ratio"),
                                .norm_eps = b.norm_eps,
                                .rope = b.rope,
                                .dtype = dtype};
  check_size("indexer_n_heads", s.indexer.num_heads, kMaxHeads);
  check_size("indexer_head_dim", s.indexer.head_dim, kMaxHeadDim);
  check_size("indexer_compress_ratio", s.indexer.compress_ratio, kMaxPositions);
  check_size("indexer_budget", s.indexer.budget, kMaxPositions);
  if (s.indexer.budget % s.indexer.compress_ratio != 0)
    c.fail("indexer_budget", "must be divisible by indexer_compress_ratio");
  if (b.rope.rotary_dim() > s.indexer.head_dim)
    c.fail("indexer_head_dim", "must hold the attention's rotary channels (" + std::to_string(b.rope.rotary_dim()) + ")");
  read_qwen4_ple(c, s);
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_qwen4_exp_text(const HfConfig& c, DataType dtype) {
  return std::make_unique<Qwen4ExpCausalLM>(qwen4_exp_spec(c, dtype));
}

}  // namespace mobius
