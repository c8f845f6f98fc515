// The packages of diffusers components, laid out as Optimum's ORTDiffusionPipeline reads them:
// one graph (a denoiser, ControlNet, T2I-Adapter) or a VAE's two, each with the attention
// lowering of the --ep.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "package/layout.h"
#include "tasks/architecture.h"

namespace mobius {

// A component built as one graph: its task ("diffusion-denoiser", "diffusion-controlnet",
// "diffusion-adapter") and the graph's place (unet/, transformer/, controlnet/, adapter/model.onnx).
class OneGraphComponent : public Architecture {
 public:
  OneGraphComponent(std::string task, GraphPath path) : task_(std::move(task)), path_(std::move(path)) {}
  std::string task() const final { return task_; }
  std::vector<NamedGraph> build_graphs() const final {
    std::vector<NamedGraph> graphs;
    graphs.emplace_back(path_, build_model(), GraphLowering::attention);
    return graphs;
  }

 protected:
  virtual Model build_model() const = 0;  // the graph (no weight data touched); its I/O are the class's

 private:
  std::string task_;
  GraphPath path_;
};

// A VAE (AutoencoderKL, AutoencoderTiny, AutoencoderKLWan): task "diffusion-vae",
// vae_encoder/model.onnx (sample -> latent_parameters or latent) and vae_decoder/model.onnx
// (latent_sample -> sample).
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
