// NanoChat (transformers/models/nanochat/modular_nanochat.py): every norm is a parameter-free
// RMSNorm (NanoChatRMSNorm = Llama4TextL2Norm), model.norm also normalizes the embeddings, per-head
// q/k norms after RoPE, RoPE rotating the other way (rotate_half = cat(x2, -x1)), a non-gated MLP
// fc1 -> hidden_act (relu2) -> fc2 without bias, attention_bias on q/k/v/o, and
// final_logit_softcapping (default 15) from Gemma2ForCausalLM.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_nanochat(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.norm_elementwise_affine = false;
  s.embed_norm = true;
  s.rope_negated_sin = true;
  s.attention.qk_norm = QKNorm{.after_rope = true, .elementwise_affine = false};
  s.mlp.gated = false;
  s.mlp.bias = false;
  s.mlp.up_name = "fc1";
  s.mlp.down_name = "fc2";
  const bool absent = !c.json().contains("final_logit_softcapping");
  s.final_logit_softcapping = static_cast<float>(absent ? 15.0 : c.float_or("final_logit_softcapping", 0.0));
  if (s.final_logit_softcapping < 0.0f) c.fail("final_logit_softcapping", "must be positive or null");
  return make_decoder(s);
}

}  // namespace mobius
