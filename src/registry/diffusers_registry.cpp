#include "registry/diffusers_registry.h"

#include <algorithm>

#include "util/error.h"
#include "util/input_files.h"

namespace mobius {

const std::vector<DiffusersEntry>& diffusers_registry() {
  static const std::vector<DiffusersEntry> entries = {
      {"AutoencoderKL", "autoencoder_kl", "diffusion-vae", create_autoencoder_kl},
      {"AutoencoderKLCogVideoX", "autoencoder_kl_cogvideox", "diffusion-vae", create_autoencoder_kl_cogvideox},
      {"AutoencoderKLWan", "autoencoder_kl_wan", "diffusion-vae", create_autoencoder_kl_wan},
      {"AutoencoderTiny", "autoencoder_tiny", "diffusion-vae", create_autoencoder_tiny},
      {"ControlNetModel", "controlnet", "diffusion-controlnet", create_controlnet},
      {"DiTTransformer2DModel", "dit_transformer", "diffusion-denoiser", create_dit_transformer},
      {"FluxTransformer2DModel", "flux_transformer", "diffusion-denoiser", create_flux_transformer},
      {"PixArtTransformer2DModel", "pixart_transformer", "diffusion-denoiser", create_pixart_transformer},
      {"SanaTransformer2DModel", "sana_transformer", "diffusion-denoiser", create_sana_transformer},
      {"SD3Transformer2DModel", "sd3_transformer", "diffusion-denoiser", create_sd3_transformer},
      {"T2IAdapter", "t2i_adapter", "diffusion-adapter", create_t2i_adapter},
      {"UNet2DConditionModel", "unet_2d_condition", "diffusion-denoiser", create_unet_2d_condition,
       create_unet_2d_condition_conditioned},
      {"WanTransformer3DModel", "wan_transformer", "diffusion-denoiser", create_wan_transformer},
  };
  return entries;
}

ArchFactory pipeline_transformers_factory(const std::string& model_type) {
  return model_type == "clip_text_model" ? create_clip_pipeline_text_encoder : nullptr;
}

bool is_diffusers_config(const HfConfig& cfg) { return !cfg.has("model_type") && cfg.has("_class_name"); }

const DiffusersEntry& find_diffusers_class(const std::string& class_name, const std::string& config_file) {
  const auto& all = diffusers_registry();
  auto it = std::find_if(all.begin(), all.end(), [&](const DiffusersEntry& e) { return class_name == e.class_name; });
  if (it != all.end()) return *it;
  std::string names;
  for (const DiffusersEntry& e : all) names += (names.empty() ? "" : ", ") + std::string(e.class_name);
  throw Error(config_file + ": field '_class_name': diffusers class '" + escaped(class_name) +
              "' is not supported yet (supported: " + names + ")");
}

HfConfig with_diffusers_defaults(const HfConfig& cfg, const std::string& class_name) {
  struct Row {
    const char* class_name;
    const char* defaults;  // a JSON object
  };
  static const Row rows[] = {
#include "registry/diffusers_defaults.inc"
  };
  for (const Row& r : rows) {
    if (class_name != r.class_name) continue;
    nlohmann::json merged = cfg.json();
    const nlohmann::json defaults = nlohmann::json::parse(r.defaults);  // outlives the loop (items() is a view)
    for (const auto& [key, value] : defaults.items())
      if (!merged.contains(key)) merged[key] = value;
    return HfConfig(std::move(merged), cfg.file(), cfg.prefix());
  }
  return cfg;
}

}  // namespace mobius
