// X-MOD (transformers/models/xmod/modeling_xmod.py, configuration_xmod.py; XmodModel): RoBERTa's
// encoder (archs/bert.h roberta_spec: positions from the ids, token types, the same names) with a
// language adapter in every layer (XmodOutput.lang_adapter), applied to the feed-forward output
// plus its residual, before the post-norm output.LayerNorm (blocks/encoder.h
// EncoderLayer::ffn_residual):
//   y = adapter_layer_norm(x) (adapter_layer_norm true), else output.LayerNorm(x)
//       (adapter_reuse_layer_norm true), else x
//   out = output.adapter_modules.<language>.dense2(act(dense1(y))) + (ln_before_adapter ? y : x)
//   dense1: hidden_size -> hidden_size // adapter_reduction_factor, act: hidden_act
// pre_norm: pre-norm layers (attention.output.LayerNorm before the attention, output.LayerNorm
// before the feed-forward block) and encoder.LayerNorm after the last layer.
// The graph runs the adapter of config.json's default_language (XmodModel.forward without
// lang_ids: every row in that language); the other languages' adapters are declared, not run.
// Heads (base_model_prefix "roberta"): RoBERTa's (lm_head, classifier.{dense, out_proj},
// roberta.pooler + classifier for multiple choice, classifier, qa_outputs).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/encoder.h"

namespace mobius {
namespace {

struct AdapterSpec {
  std::vector<std::string> languages;  // config.json languages, in order (adapter_modules' keys)
  size_t language;                     // the index of default_language in them
  int64_t bottleneck;                  // hidden_size // adapter_reduction_factor
  bool own_norm;                       // adapter_layer_norm
  bool reuse_norm;                     // adapter_reuse_layer_norm
  bool ln_before_adapter;
};

// XmodAdapter: dense2(act(dense1(x))), [batch, seq, hidden] -> [batch, seq, hidden].
class XmodAdapter : public Module {
 public:
  XmodAdapter(const EncoderSpec& s, int64_t bottleneck) : act_(s.hidden_act) {
    dense1 = child<Linear>("dense1", LinearOptions{s.hidden_size, bottleneck, true, s.dtype});
    dense2 = child<Linear>("dense2", LinearOptions{bottleneck, s.hidden_size, true, s.dtype});
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    return dense2->forward(op, activation(op, act_, dense1->forward(op, x)));
  }
  Linear *dense1, *dense2;

 private:
  std::string act_;
};

// XmodLayer: BERT's layer (RoBERTa's names) with XmodOutput.lang_adapter on the feed-forward sum.
class XmodLayer : public EncoderLayer {
 public:
  XmodLayer(const EncoderSpec& s, const AdapterSpec& a) : EncoderLayer(s), a_(a) {
    if (a.own_norm)
      adapter_layer_norm = child<LayerNorm>(
          "output.adapter_layer_norm", NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype});
    for (const std::string& language : a.languages)
      adapters.push_back(child<XmodAdapter>("output.adapter_modules." + language, s, a.bottleneck));
  }
  LayerNorm* adapter_layer_norm = nullptr;
  std::vector<XmodAdapter*> adapters;  // one per language; the default one runs

 protected:
  Value* ffn_residual(Ops& op, Value* x) const override {
    Value* y = adapter_layer_norm ? adapter_layer_norm->forward(op, x)
               : a_.reuse_norm    ? ffn_norm->forward(op, x)
                                  : x;
    return op.Add(adapters[a_.language]->forward(op, y), a_.ln_before_adapter ? y : x);
  }

 private:
  AdapterSpec a_;
};

}  // namespace

std::unique_ptr<Architecture> create_xmod(const HfConfig& c, DataType dtype) {
  EncoderSpec s = roberta_spec(c, dtype, "roberta", "XmodModel");
  if (c.bool_or("pre_norm", false)) {
    s.placement = NormPlacement::pre;
    s.final_norm = "encoder.LayerNorm";
  }
  AdapterSpec a;
  if (!c.has("languages")) {
    a.languages = {"en_XX"};  // XmodConfig.languages default
  } else {
    const nlohmann::json& list = c.json()["languages"];
    if (!list.is_array() || list.empty()) c.fail("languages", "expected a non-empty list of language codes");
    for (const nlohmann::json& l : list) {
      if (!l.is_string() || l.get<std::string>().empty() || l.get<std::string>().find('.') != std::string::npos)
        c.fail("languages", "expected language codes (strings without '.')");
      a.languages.push_back(l.get<std::string>());
    }
  }
  if (!c.has("default_language"))
    c.fail("default_language", "not set: the graph runs one language's adapters (XmodModel without lang_ids "
                               "needs default_language); set it to one of config.json's languages");
  const std::string language = c.get_string("default_language");
  const auto it = std::find(a.languages.begin(), a.languages.end(), language);
  if (it == a.languages.end()) c.fail("default_language", "'" + language + "' is not one of config.json's languages");
  a.language = static_cast<size_t>(it - a.languages.begin());
  const int64_t factor = c.int_or("adapter_reduction_factor", 2);
  if (factor < 1 || factor > s.hidden_size) c.fail("adapter_reduction_factor", "expected 1 .. hidden_size");
  a.bottleneck = s.hidden_size / factor;
  a.own_norm = c.bool_or("adapter_layer_norm", false);
  a.reuse_norm = c.bool_or("adapter_reuse_layer_norm", true);
  a.ln_before_adapter = c.bool_or("ln_before_adapter", true);
  return std::make_unique<PostNormEncoder>(
      s, EncoderParts{.make_layer = [a](const EncoderSpec& spec, int64_t) { return std::make_unique<XmodLayer>(spec, a); }});
}

}  // namespace mobius
