// FalconMamba (transformers/models/falcon_mamba/modular_falcon_mamba.py): Mamba (archs/mamba.h)
// whose mixer RMS-normalizes dt, B and C without weight (FalconMambaMixer, mixer_rms_eps,
// default 1e-6) before the discretization.
#include "archs/archs.h"
#include "archs/mamba.h"

namespace mobius {

std::unique_ptr<Architecture> create_falcon_mamba(const HfConfig& c, DataType dtype) {
  MambaOptions m = mamba_options(c, dtype);
  m.dt_b_c_rms_eps = static_cast<float>(c.float_or("mixer_rms_eps", 1e-6));
  MambaSpec s = mamba_backbone_spec(c, dtype);
  s.make_mixer = [m](int64_t) { return std::make_unique<MambaMixer>(m); };
  return std::make_unique<MambaCausalLM>(s);
}

}  // namespace mobius
