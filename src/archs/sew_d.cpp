// SEW-D (transformers/models/sew_d/modeling_sew_d.py, configuration_sew_d.py; SEWDModel,
// SEWDForCTC): SEW's conv feature encoder, feature projection and squeezed encoder (archs/sew.h,
// layer_norm eps feature_layer_norm_eps, conv layers SEWDConfig's 13 by default) around
// SEWDTransformerEncoder, a DeBERTa-v2 encoder (blocks/deberta_encoder.h, registered
// "encoder.encoder"): pos_att_type (SEWDConfig's ("p2c", "c2p") when absent), share_att_key,
// position_buckets, max_relative_positions (< 1: max_position_embeddings), relative_attention,
// norm_rel_ebd, conv_kernel_size. The squeezed frame mask is the padding mask of every layer (XSoftmax).
// Fields read as the config class and the modeling code do (getattr defaults): conv_kernel_size 0,
// conv_groups 1, conv_act "tanh", max_relative_positions -1, hidden_act "gelu_python" (exact GELU).
// attention_mask is a graph input for feat_extract_norm "layer", as for wav2vec2 (archs/wav2vec2.h).
#include "archs/archs.h"
#include "archs/sew.h"
#include "blocks/deberta_encoder.h"

namespace mobius {
namespace {

// SEWDTransformerEncoder: the DeBERTa encoder over the squeezed frames.
class SEWDTransformerEncoder : public SpeechEncoderBody {
 public:
  explicit SEWDTransformerEncoder(const DebertaEncoderOptions& o) { encoder = child<DebertaEncoder>("", o); }
  Value* forward(Ops& op, Value* h, Value* valid) const override { return encoder->forward(op, h, valid); }
  DebertaEncoder* encoder;
};

}  // namespace

std::unique_ptr<Architecture> create_sew_d(const HfConfig& c, DataType dtype) {
  Wav2Vec2Sizes s = wav2vec2_sizes(c, dtype, "sew_d", sew_conv_layout());
  s.encoder.placement = NormPlacement::post;
  const AudioEncoderOptions& e = s.encoder;
  DebertaEncoderOptions o{.hidden_size = e.hidden_size, .num_hidden_layers = e.num_hidden_layers,
                          .intermediate_size = e.intermediate_size, .hidden_act = e.hidden_act,
                          .layer_norm_eps = e.layer_norm_eps, .attention = {}, .dtype = dtype};
  DisentangledAttentionOptions& a = o.attention;
  a.hidden_size = e.hidden_size;
  a.num_attention_heads = e.num_attention_heads;
  a.head_dim = e.hidden_size / e.num_attention_heads;
  a.dtype = dtype;
  read_disentangled_attention(c, a, {"p2c", "c2p"});
  read_deberta_v2_encoder(c, o);
  const float feature_eps = static_cast<float>(c.float_or("feature_layer_norm_eps", 1e-5));
  return make_sew_family(s, sew_squeeze_factor(c), feature_eps, "encoder",
                         std::make_unique<SEWDTransformerEncoder>(o));
}

}  // namespace mobius
