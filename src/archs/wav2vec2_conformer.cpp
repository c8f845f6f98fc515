// wav2vec2-conformer (transformers/models/wav2vec2_conformer/modular_wav2vec2_conformer.py,
// Wav2Vec2ConformerModel): the wav2vec2 skeleton (archs/wav2vec2.h: conv feature encoder,
// feature projection, lm_head for Wav2Vec2ConformerForCTC) with the conformer encoder
// (blocks/conformer.h) in place of the transformer layers. Fields: position_embeddings_type
// ("relative", "rotary" or null), conv_depthwise_kernel_size (odd). rotary_embedding_base is not
// read: the rotary frequencies are the checkpoint's inv_freq buffer (blocks/conformer.h).
// max_source_positions only sizes transformers' cached sinusoid table, which it extends past
// that length: the graph computes the sinusoids for the frames it gets.
#include "archs/archs.h"
#include "archs/wav2vec2.h"
#include "blocks/conformer.h"

namespace mobius {

std::unique_ptr<Architecture> create_wav2vec2_conformer(const HfConfig& c, DataType dtype) {
  Wav2Vec2Sizes s = wav2vec2_sizes(c, dtype, "wav2vec2_conformer");
  ConformerOptions o;
  o.encoder = s.encoder;
  if (c.json().contains("position_embeddings_type") && c.json()["position_embeddings_type"].is_null()) {
    o.positions = ConformerPositions::none;
  } else {
    const std::string type = c.string_or("position_embeddings_type", "relative");
    if (type == "relative") o.positions = ConformerPositions::relative;
    else if (type == "rotary") o.positions = ConformerPositions::rotary;
    else c.fail("position_embeddings_type", "expected 'relative', 'rotary' or null, got '" + type + "'");
  }
  o.conv_depthwise_kernel_size = c.int_or("conv_depthwise_kernel_size", 31);
  if (o.conv_depthwise_kernel_size < 1 || o.conv_depthwise_kernel_size % 2 == 0 ||
      o.conv_depthwise_kernel_size > kMaxPositions)
    c.fail("conv_depthwise_kernel_size", "expected an odd kernel size (\"same\" padding)");
  return make_wav2vec2_family(s, std::make_unique<ConformerEncoder>(o));
}

}  // namespace mobius
