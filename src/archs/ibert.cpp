// I-BERT (transformers/models/ibert/modeling_ibert.py, quant_modules.py, configuration_ibert.py;
// IBertModel) in float mode (quant_mode false, IBertConfig's default): every QuantEmbedding,
// QuantLinear, QuantAct, IntLayerNorm, IntSoftmax and IntGELU then computes the float function, so
// the model is RoBERTa's encoder (archs/bert.h roberta_spec: positions from the ids, token types,
// the same names) with the exact GELU in the layers whatever hidden_act says (IBertIntermediate:
// IntGELU). The integer buffers the checkpoint holds beside the weights (weight_integer,
// weight_scaling_factor, fc_scaling_factor, bias_integer, x_min, x_max, act_scaling_factor, shift)
// are read only with quant_mode true: not reported as unused. quant_mode true (integer-only
// inference) is refused.
// Heads (base_model_prefix "ibert"): RoBERTa's (lm_head, classifier.{dense, out_proj},
// ibert.pooler + classifier for multiple choice, classifier, qa_outputs).
#include <array>
#include <memory>
#include <string>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

class IBertEncoder : public PostNormEncoder {
 public:
  using PostNormEncoder::PostNormEncoder;
  bool training_only(const std::string& key) const override {
    static constexpr std::array<const char*, 8> kIntegerBuffers = {
        ".weight_integer", ".weight_scaling_factor", ".fc_scaling_factor", ".bias_integer",
        ".x_min", ".x_max", ".act_scaling_factor", ".shift"};
    for (const char* suffix : kIntegerBuffers)
      if (key.ends_with(suffix)) return true;
    return PostNormEncoder::training_only(key);
  }
};

}  // namespace

std::unique_ptr<Architecture> create_ibert(const HfConfig& c, DataType dtype) {
  if (c.bool_or("quant_mode", false))
    c.fail("quant_mode", "integer-only inference is not supported (the float model: quant_mode false)");
  EncoderSpec s = roberta_spec(c, dtype, "ibert", "IBertModel");
  s.hidden_act = "gelu";  // IBertIntermediate's IntGELU: nn.GELU() in float mode
  return std::make_unique<IBertEncoder>(s);
}

}  // namespace mobius
