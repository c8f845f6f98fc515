// FNet (transformers/models/fnet/modeling_fnet.py, configuration_fnet.py; FNetModel): BERT's
// embeddings (blocks/encoder.h EncoderEmbeddings: word + token type + positions 0..seq-1, LayerNorm)
// then embeddings.projection (Linear hidden -> hidden), and layers (encoder.layer.{i}) that mix the
// tokens by a Fourier transform instead of attention:
//   h   = fourier.output.LayerNorm(x + real(fft2(x)))     fft2 over the sequence and hidden axes
//   out = output.LayerNorm(output.dense(act(intermediate.dense(h))) + h)
// real(fft2(x)) = C_s x C_h - S_s x S_h with C_n[j, k] = cos(2 pi (j k mod n) / n), S_n the sines
// (the DFT matrix F_n = C_n - i S_n; symmetric), made in the graph for the sequence length and the
// hidden size, as four MatMuls. use_tpu_fourier_optimizations with max_position_embeddings <= 4096
// (FNetBasicFourierTransform with SciPy: two_dim_matmul over complex64 DFT-matrix buffers saved
// with the weights, the sequence one of tpu_short_seq_length) is refused; above 4096 it is fftn, as
// here.
// No attention: the sizes are the fields hf_config.h range-checks by name (no check_spec).
// FNetModel reads no attention_mask: every token, padding included, is mixed into every other. The
// graph keeps the attention_mask input of every text encoder (tasks/feature_extraction.h) for the
// consumers that pool or flatten by it, and reads it nowhere in the encoder.
// Heads (base_model_prefix "fnet"), BERT's: cls.predictions.{transform.dense, hidden_act,
// transform.LayerNorm, decoder, bias}; classification and multiple choice over fnet.pooler.dense +
// tanh + classifier; token classification classifier; question answering qa_outputs.
#include <cstdint>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

// cos and sin of 2 pi (j k mod n) / n for j, k in 0..n-1: [n, n] each, in `dtype`. n: int64 scalar.
std::pair<Value*, Value*> dft_matrices(Ops& op, Value* n, DataType dtype) {
  GraphBuilder& b = op.builder();
  Value* j = op.Range(b.scalar_i64(0), n, b.scalar_i64(1));
  Value* jk = op.Mul(op.Unsqueeze(j, {1}), op.Unsqueeze(j, {0}));
  Value* r = b.add_node("Mod", {jk, n}, {}, {DataType::INT64})[0];
  Value* angle = op.Div(op.Mul(op.Cast(r, {.to = DataType::FLOAT}), 2.0 * std::numbers::pi),
                        op.Cast(n, {.to = DataType::FLOAT}));
  auto in_dtype = [&](Value* v) { return dtype == DataType::FLOAT ? v : op.Cast(v, {.to = dtype}); };
  return {in_dtype(op.Cos(angle)), in_dtype(op.Sin(angle))};
}

// FNetLayer: x [batch, seq, hidden] -> [batch, seq, hidden].
class FNetLayer : public Module {
 public:
  explicit FNetLayer(const EncoderSpec& s) : act_(s.hidden_act), dtype_(s.dtype) {
    const NormOptions norm{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype};
    fourier_norm = child<LayerNorm>("fourier.output.LayerNorm", norm);
    intermediate = child<Linear>("intermediate.dense", LinearOptions{s.hidden_size, s.intermediate_size, true, s.dtype});
    output = child<Linear>("output.dense", LinearOptions{s.intermediate_size, s.hidden_size, true, s.dtype});
    output_norm = child<LayerNorm>("output.LayerNorm", norm);
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    Value* h = fourier_norm->forward(op, op.Add(x, fourier(op, x)));
    return output_norm->forward(op, op.Add(output->forward(op, activation(op, act_, intermediate->forward(op, h))), h));
  }
  LayerNorm *fourier_norm, *output_norm;
  Linear *intermediate, *output;

 private:
  // real(fftn(x, dim=(1, 2))) (FNetBasicFourierTransform)
  Value* fourier(Ops& op, Value* x) const {
    auto s = op.builder().scope("fourier");
    auto [cs, ss] = dft_matrices(op, op.Squeeze(op.Shape(x, {.start = 1, .end = 2}), {0}), dtype_);
    auto [ch, sh] = dft_matrices(op, op.Squeeze(op.Shape(x, {.start = 2, .end = 3}), {0}), dtype_);
    return op.Sub(op.MatMul(cs, op.MatMul(x, ch)), op.MatMul(ss, op.MatMul(x, sh)));
  }
  std::string act_;
  DataType dtype_;
};

class FNetModel : public Encoder {
 public:
  explicit FNetModel(const EncoderSpec& s) : spec_(s) {
    embeddings = child<EncoderEmbeddings>("embeddings", s);
    projection = child<Linear>("embeddings.projection", LinearOptions{s.hidden_size, s.hidden_size, true, s.dtype});
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      layers.push_back(child<FNetLayer>("encoder.layer." + std::to_string(i), s));
  }
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return true; }
  const TextHeadLayout* head_layout() const override { return &*spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = projection->forward(op, embeddings->forward(op, in.input_ids, in.token_type_ids));
    for (const FNetLayer* layer : layers) h = layer->forward(op, h);
    return h;
  }

  EncoderEmbeddings* embeddings;
  Linear* projection;
  std::vector<FNetLayer*> layers;

 private:
  EncoderSpec spec_;
};

}  // namespace

std::unique_ptr<Architecture> create_fnet(const HfConfig& c, DataType dtype) {
  EncoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = c.get_int("num_hidden_layers");
  s.max_position_embeddings = c.int_or("max_position_embeddings", 512);
  s.intermediate_size = c.get_int("intermediate_size");
  s.type_vocab_size = c.int_or("type_vocab_size", 4);
  if (s.type_vocab_size < 1) c.fail("type_vocab_size", "must be at least 1 (FNetEmbeddings' table)");
  s.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  s.hidden_act = c.string_or("hidden_act", "gelu_new");
  if (!is_known_activation(s.hidden_act)) c.fail("hidden_act", "unsupported activation '" + s.hidden_act + "'");
  if (c.bool_or("use_tpu_fourier_optimizations", false) && s.max_position_embeddings <= 4096)
    c.fail("use_tpu_fourier_optimizations",
           "the DFT-matrix path (two_dim_matmul over the complex64 buffers dft_mat_seq / dft_mat_hidden) is not "
           "supported (the fftn transform only)");
  const FirstTokenHead pooled{"fnet.pooler.dense", "tanh", "classifier"};  // FNetPooler + classifier
  s.heads = TextHeadLayout{"fnet", "FNetModel",
                           {"cls.predictions.transform.dense", s.hidden_act, "cls.predictions.transform.LayerNorm",
                            "cls.predictions.decoder", "cls.predictions.bias", s.layer_norm_eps},
                           pooled, pooled};
  return std::make_unique<FNetModel>(s);
}

}  // namespace mobius
