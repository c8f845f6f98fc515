// The package of a diffusers VAE (AutoencoderKL, AutoencoderTiny, AutoencoderKLWan): task
// "diffusion-vae", two graphs laid out as Optimum's ORTDiffusionPipeline reads them,
// vae_encoder/model.onnx (sample -> latent_parameters or latent) and vae_decoder/model.onnx
// (latent_sample -> sample), each with the attention lowering of the --ep.
#pragma once

#include <string>
#include <vector>

#include "package/layout.h"
#include "tasks/architecture.h"

namespace mobius {

class VaeArchitecture : public Architecture {
 public:
  std::string task() const final { return "diffusion-vae"; }
  std::vector<NamedGraph> build_graphs() const final {
    std::vector<NamedGraph> graphs;
    graphs.emplace_back(GraphPath{"vae_encoder", hf_graph::vae_encoder}, encoder_graph(), GraphLowering::attention);
    graphs.emplace_back(GraphPath{"vae_decoder", hf_graph::vae_decoder}, decoder_graph(), GraphLowering::attention);
    return graphs;
  }

 protected:
  // The encoder's and the decoder's graph (no weight data touched); their I/O are the class's.
  virtual Model encoder_graph() const = 0;
  virtual Model decoder_graph() const = 0;
};

}  // namespace mobius
