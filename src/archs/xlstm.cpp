// xLSTM (transformers/models/xlstm/modeling_xlstm.py xLSTMForCausalLM, configuration_xlstm.py; the
// native backend, which transformers runs whatever chunkwise_kernel / sequence_kernel / step_kernel
// name):
//   backbone.embeddings -> backbone.blocks.{i}: h = x + mlstm_layer(norm_mlstm(x));
//     out = h + ffn(norm_ffn(h))  -> backbone.out_norm -> lm_head
//   -> c * tanh(logits / c), c = output_logit_soft_cap
// mlstm_layer: blocks/mlstm.h (q/k widths int(hidden_size * qk_dim_factor), v's int(hidden_size *
// v_dim_factor), num_heads heads, gate_soft_cap, eps). The norms: RMSNorm over hidden_size (epsilon
// norm_eps) with a weight and, with use_bias, a bias (norm_mlstm, norm_ffn; out_norm never has one).
// ffn: silu(proj_up_gate(x)) * proj_up(x) -> proj_down, width hidden_size * ffn_proj_factor rounded
// up to a multiple of ffn_round_up_to_multiple_of; biases with use_bias. lm_head is never tied
// (xLSTMForCausalLM has no tied weights, whatever tie_word_embeddings says).
// weight_mode "fused" (qkv_opreact, ifgate_preact, proj_up_gate_z) is refused: transformers 5.23
// cannot make or load such a model (xLSTMPreTrainedModel._init_weights subtracts a [2 * num_heads]
// bias from a [num_heads] one), so there is no reference to verify it against.
// xLSTMConfig: num_blocks (default num_hidden_layers) blocks; embedding_dim (default hidden_size)
// must equal hidden_size (the embeddings feed the blocks). The states are kept in float32
// (inference_state_dtype "float32"; another is refused). chunk_size, mode and the kernel names
// only choose how transformers evaluates the same recurrence (blocks/mlstm.h); add_out_norm is not
// read by transformers' model (out_norm always applies), nor here.
// States per layer: past_key_values.{i}.C / .n / .m, present.{i}.* likewise (blocks/mlstm.h).
// attention_mask and position_ids are not read, as in transformers.
// onnxruntime-genai 0.18 has no model type that reads these states: build with --runtime none.
#include <cmath>

#include "archs/archs.h"
#include "blocks/linear.h"
#include "blocks/mlstm.h"
#include "tasks/text_generation.h"
#include "util/error.h"

namespace mobius {

namespace {

struct XlstmSizes {
  int64_t vocab_size, hidden_size, num_blocks, ffn_dim;
  bool bias;
  float norm_eps;
  double output_logit_soft_cap;
  MLstmOptions mlstm;
  DataType dtype;
};

// xLSTMRMSNorm: x / sqrt(mean(x^2) + eps) * weight (+ bias with use_bias), in float32.
class XlstmRMSNorm : public Module {
 public:
  XlstmRMSNorm(int64_t dim, float eps, bool bias, DataType dtype) : eps_(eps) {
    weight = param("weight", {dim}, dtype);
    if (bias) this->bias = param("bias", {dim}, dtype);
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    Value* y = op.RMSNormalization(x, weight->value(op), {.axis = -1, .epsilon = eps_});
    return bias ? op.Add(y, bias->value(op)) : y;
  }
  Parameter *weight, *bias = nullptr;

 private:
  float eps_;
};

// backbone.blocks.{i}.ffn: xLSTMFeedForward.
class XlstmFeedForward : public Module {
 public:
  explicit XlstmFeedForward(const XlstmSizes& s) {
    const int64_t h = s.hidden_size, f = s.ffn_dim;
    auto up = [&](const char* name, int64_t out) {
      return child<Linear>(name,
                           LinearOptions{.in_features = h, .out_features = out, .bias = s.bias, .dtype = s.dtype});
    };
    proj_up_gate = up("proj_up_gate", f);
    proj_up = up("proj_up", f);
    proj_down = child<Linear>("proj_down",
                              LinearOptions{.in_features = f, .out_features = h, .bias = s.bias, .dtype = s.dtype});
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    Value* gate = proj_up_gate->forward(op, x);
    return proj_down->forward(op, op.Mul(op.Mul(gate, op.Sigmoid(gate)), proj_up->forward(op, x)));
  }
  Linear *proj_up_gate, *proj_up, *proj_down;
};

// backbone.blocks.{i}: xLSTMBlock.
class XlstmBlock : public Module {
 public:
  explicit XlstmBlock(const XlstmSizes& s) {
    norm_mlstm = child<XlstmRMSNorm>("norm_mlstm", s.hidden_size, s.norm_eps, s.bias, s.dtype);
    mlstm_layer = child<MLstmLayer>("mlstm_layer", s.mlstm);
    norm_ffn = child<XlstmRMSNorm>("norm_ffn", s.hidden_size, s.norm_eps, s.bias, s.dtype);
    ffn = child<XlstmFeedForward>("ffn", s);
  }
  XlstmRMSNorm *norm_mlstm, *norm_ffn;
  MLstmLayer* mlstm_layer;
  XlstmFeedForward* ffn;
};

// backbone: xLSTMModel's modules.
class XlstmBackbone : public Module {
 public:
  explicit XlstmBackbone(const XlstmSizes& s) {
    embeddings = child<Embedding>("embeddings", s.vocab_size, s.hidden_size, s.dtype);
    for (int64_t i = 0; i < s.num_blocks; ++i) blocks.push_back(child<XlstmBlock>("blocks." + std::to_string(i), s));
    out_norm = child<XlstmRMSNorm>("out_norm", s.hidden_size, s.norm_eps, false, s.dtype);
  }
  Embedding* embeddings;
  std::vector<XlstmBlock*> blocks;
  XlstmRMSNorm* out_norm;
};

class XlstmCausalLM : public CausalLM {
 public:
  explicit XlstmCausalLM(const XlstmSizes& s) : s_(s) {
    backbone_ = child<XlstmBackbone>("backbone", s);
    lm_head_ = child<LMHead>("lm_head", LMHeadOptions{s.hidden_size, s.vocab_size, false, s.dtype}, nullptr);
  }
  DataType dtype() const override { return s_.dtype; }
  int64_t vocab_size() const override { return s_.vocab_size; }

  std::vector<LayerStates> layer_states() const override {
    return std::vector<LayerStates>(static_cast<size_t>(s_.num_blocks), backbone_->blocks[0]->mlstm_layer->states());
  }

  CausalLMOutputs forward(Ops& op, const CausalLMInputs& in) const override {
    CausalLMOutputs out;
    Value* h;
    {
      auto s = op.builder().scope("backbone");
      h = in.inputs_embeds ? in.inputs_embeds : backbone_->embeddings->forward(op, in.input_ids);
      for (size_t i = 0; i < backbone_->blocks.size(); ++i) {
        const XlstmBlock* b = backbone_->blocks[i];
        auto ls = op.builder().scope("blocks." + std::to_string(i));
        MixerResult r = b->mlstm_layer->mix(op, b->norm_mlstm->forward(op, h), AttentionContext{}, in.past.at(i));
        h = op.Add(h, r.hidden);
        h = op.Add(h, b->ffn->forward(op, b->norm_ffn->forward(op, h)));
        out.present.push_back(std::move(r.present));
      }
      h = backbone_->out_norm->forward(op, h);
    }
    const double cap = s_.output_logit_soft_cap;
    out.logits = op.Mul(op.Tanh(op.Div(lm_head_->forward(op, h), cap)), cap);
    return out;
  }

 private:
  XlstmSizes s_;
  XlstmBackbone* backbone_;
  LMHead* lm_head_;
};

// round_up_to_next_multiple_of (configuration_xlstm.py): int(((x + m - 1) // m) * m)
double xlstm_round_up(double x, double multiple) { return std::floor((x + multiple - 1.0) / multiple) * multiple; }

}  // namespace

std::unique_ptr<Architecture> create_xlstm(const HfConfig& c, DataType dtype) {
  auto check = [&](const char* field, int64_t v, int64_t max) {
    if (v < 1 || v > max) c.fail(field, "expected 1 to " + std::to_string(max) + ", got " + std::to_string(v));
  };
  auto positive = [&](const char* field, double v) {
    if (!(v > 0.0)) c.fail(field, "must be positive, got " + std::to_string(v));
  };
  XlstmSizes s{};
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  check("vocab_size", s.vocab_size, kMaxVocabSize);
  // xLSTMConfig.__post_init__: num_blocks defaults to num_hidden_layers, embedding_dim to
  // hidden_size; xLSTMModel builds num_blocks blocks
  s.hidden_size = c.get_int("hidden_size");
  check("hidden_size", s.hidden_size, kMaxHiddenSize);
  s.num_blocks = c.has("num_blocks") ? c.get_int("num_blocks") : c.get_int("num_hidden_layers");
  check(c.has("num_blocks") ? "num_blocks" : "num_hidden_layers", s.num_blocks, kMaxLayers);
  if (c.has("embedding_dim") && c.get_int("embedding_dim") != s.hidden_size)
    c.fail("embedding_dim", "must equal hidden_size " + std::to_string(s.hidden_size) + " (the embeddings feed the "
                            "blocks), got " + std::to_string(c.get_int("embedding_dim")));
  s.bias = c.bool_or("use_bias", false);
  s.norm_eps = static_cast<float>(c.float_or("norm_eps", 1e-6));
  positive("norm_eps", s.norm_eps);
  s.output_logit_soft_cap = c.float_or("output_logit_soft_cap", 30.0);
  positive("output_logit_soft_cap", s.output_logit_soft_cap);
  if (const std::string d = c.string_or("inference_state_dtype", "float32"); d != "float32")
    c.fail("inference_state_dtype", "mobius keeps the mLSTM states in float32, got '" + d + "'");

  const std::string mode = c.string_or("weight_mode", "single");
  if (mode == "fused")
    c.fail("weight_mode", "'fused' is not supported: transformers 5.23 cannot load such a model "
                          "(xLSTMPreTrainedModel._init_weights fails on ifgate_preact.bias), so mobius has no "
                          "reference to verify it against");
  if (mode != "single") c.fail("weight_mode", "expected 'single', got '" + mode + "'");
  MLstmOptions& m = s.mlstm;
  m.hidden_size = s.hidden_size;
  m.num_heads = c.int_or("num_heads", 8);
  check("num_heads", m.num_heads, kMaxHeads);
  // xLSTMLayer: int(hidden_size * factor)
  const double qk_factor = c.float_or("qk_dim_factor", 0.5), v_factor = c.float_or("v_dim_factor", 1.0);
  positive("qk_dim_factor", qk_factor);
  positive("v_dim_factor", v_factor);
  const double qk_dim = std::trunc(static_cast<double>(s.hidden_size) * qk_factor);
  const double v_dim = std::trunc(static_cast<double>(s.hidden_size) * v_factor);
  if (!(qk_dim >= 1 && qk_dim <= kMaxHiddenSize && std::fmod(qk_dim, static_cast<double>(m.num_heads)) == 0))
    c.fail("qk_dim_factor", "int(hidden_size * qk_dim_factor) must be a multiple of num_heads " +
                                std::to_string(m.num_heads) + " up to " + std::to_string(kMaxHiddenSize));
  if (!(v_dim >= 1 && v_dim <= kMaxHiddenSize && std::fmod(v_dim, static_cast<double>(m.num_heads)) == 0))
    c.fail("v_dim_factor", "int(hidden_size * v_dim_factor) must be a multiple of num_heads " +
                               std::to_string(m.num_heads) + " up to " + std::to_string(kMaxHiddenSize));
  m.qk_dim = static_cast<int64_t>(qk_dim);
  m.v_dim = static_cast<int64_t>(v_dim);
  m.bias = s.bias;
  m.gate_soft_cap = c.float_or("gate_soft_cap", 15.0);
  positive("gate_soft_cap", m.gate_soft_cap);
  m.norm_eps = s.norm_eps;
  m.eps = c.has("eps") ? c.get_float("eps") : 1e-6;  // xLSTMConfig's default
  if (!(m.eps >= 0.0)) c.fail("eps", "must not be negative");
  m.dtype = dtype;

  const double ffn_factor = c.float_or("ffn_proj_factor", 2.667);
  positive("ffn_proj_factor", ffn_factor);
  const int64_t multiple = c.int_or("ffn_round_up_to_multiple_of", 64);
  check("ffn_round_up_to_multiple_of", multiple, kMaxFfnSize);
  const double ffn_dim = xlstm_round_up(static_cast<double>(s.hidden_size) * ffn_factor, static_cast<double>(multiple));
  if (!(ffn_dim >= 1 && ffn_dim <= kMaxFfnSize))
    c.fail("ffn_proj_factor", "hidden_size * ffn_proj_factor must be within 1 and " + std::to_string(kMaxFfnSize));
  s.ffn_dim = static_cast<int64_t>(ffn_dim);
  return std::make_unique<XlstmCausalLM>(s);
}

}  // namespace mobius
