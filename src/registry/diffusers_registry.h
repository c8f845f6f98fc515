// The diffusers registry: the one table mapping a diffusers component's config.json `_class_name`
// (a folder as ModelMixin.save_pretrained writes it: config.json, diffusion_pytorch_model.safetensors)
// to its architecture, and each class' config defaults (registry/diffusers_defaults.inc, generated
// from the __init__ signature of the diffusers class by scripts/gen_diffusers_defaults.py).
#pragma once

#include <string>
#include <vector>

#include "archs/archs.h"

namespace mobius {

// archs/clip.cpp: a clip_text_model config (CLIPTextModel or, by its architectures,
// CLIPTextModelWithProjection) as a diffusers pipeline's text encoder: input_ids alone, outputs with
// every hidden state.
std::unique_ptr<Architecture> create_clip_pipeline_text_encoder(const HfConfig&, DataType);
// archs/autoencoder_kl.cpp
std::unique_ptr<Architecture> create_autoencoder_kl(const HfConfig&, DataType);
// archs/autoencoder_kl_cogvideox.cpp
std::unique_ptr<Architecture> create_autoencoder_kl_cogvideox(const HfConfig&, DataType);
// archs/autoencoder_kl_wan.cpp
std::unique_ptr<Architecture> create_autoencoder_kl_wan(const HfConfig&, DataType);
// archs/autoencoder_tiny.cpp
std::unique_ptr<Architecture> create_autoencoder_tiny(const HfConfig&, DataType);
// archs/controlnet.cpp
std::unique_ptr<Architecture> create_controlnet(const HfConfig&, DataType);
// archs/dit_transformer.cpp
std::unique_ptr<Architecture> create_dit_transformer(const HfConfig&, DataType);
// archs/flux_transformer.cpp
std::unique_ptr<Architecture> create_flux_transformer(const HfConfig&, DataType);
// archs/pixart_transformer.cpp
std::unique_ptr<Architecture> create_pixart_transformer(const HfConfig&, DataType);
// archs/sana_transformer.cpp
std::unique_ptr<Architecture> create_sana_transformer(const HfConfig&, DataType);
// archs/sd3_transformer.cpp
std::unique_ptr<Architecture> create_sd3_transformer(const HfConfig&, DataType);
// archs/wan_transformer.cpp
std::unique_ptr<Architecture> create_wan_transformer(const HfConfig&, DataType);
// One feature map of a T2IAdapter (its graph's adapter_state.{k}): its channels and how many 2 x 2
// average-poolings came before it (the adapter's resolution is the image's / downscale_factor / 2^pools).
struct AdapterState {
  int64_t channels, pools;
};

// What a pipeline's other components feed into its denoiser's graph (driver/pipeline.cpp reads it
// from model_index.json): a ControlNetModel's residuals, a T2IAdapter's feature maps.
struct PipelineConditioning {
  bool controlnet = false;           // a ControlNetModel ("controlnet")
  std::vector<AdapterState> adapter;  // a T2IAdapter's states, in order ("adapter"); empty: none
  bool empty() const { return !controlnet && adapter.empty(); }
};

// A class' factory in a pipeline whose other components feed its graph.
using ConditionedFactory = std::unique_ptr<Architecture> (*)(const HfConfig&, DataType, const PipelineConditioning&);

// archs/t2i_adapter.cpp
std::unique_ptr<Architecture> create_t2i_adapter(const HfConfig&, DataType);
// The feature maps the T2IAdapter of config `c` (with its class defaults) outputs, in order; throws
// FieldError as create_t2i_adapter does for a config out of range.
std::vector<AdapterState> t2i_adapter_states(const HfConfig& c);
// archs/unet_2d_condition.cpp; _conditioned: the UNet of a pipeline with a ControlNetModel (its graph
// also takes the ControlNet's residuals: down_block_additional_residuals.{i},
// mid_block_additional_residual) and / or a T2IAdapter (down_intrablock_additional_residuals.{k}).
// Throws FieldError (block_out_channels) when the adapter's maps do not fit the UNet's blocks.
std::unique_ptr<Architecture> create_unet_2d_condition(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_unet_2d_condition_conditioned(const HfConfig&, DataType,
                                                                   const PipelineConditioning&);

struct DiffusersEntry {
  const char* class_name;  // config.json "_class_name", diffusers' model class
  const char* family;      // the architecture file it is built by
  const char* task;        // the Architecture's task(): "diffusion-vae", "diffusion-denoiser",
                           // "diffusion-controlnet", "diffusion-adapter"
  ArchFactory create;
  // The class' factory in a pipeline whose ControlNetModel or T2IAdapter feeds its graph; null
  // where the class takes nothing from other components.
  ConditionedFactory create_conditioned = nullptr;
};

// The factory a diffusers pipeline builds its transformers component of config.json `model_type`
// with, where the pipelines call that model otherwise than its registry row builds it; null: the
// registry's (registry/registry.h). clip_text_model: create_clip_pipeline_text_encoder (input_ids
// alone: diffusers' pipelines pass no attention_mask to a CLIP text encoder and Optimum's
// ORTTextEncoder feeds the graph only what they pass; every hidden state: SDXL and SD3 read the
// penultimate, Flux CLIPTextModel's pooler_output).
ArchFactory pipeline_transformers_factory(const std::string& model_type);

// All entries, sorted by class name.
const std::vector<DiffusersEntry>& diffusers_registry();

// Whether `cfg` is a diffusers component's config: a "_class_name" and no "model_type".
bool is_diffusers_config(const HfConfig& cfg);

// The entry for `class_name`; throws mobius::Error "<config_file>: field '_class_name': diffusers
// class 'X' is not supported yet (supported: ...)" when it is not registered.
const DiffusersEntry& find_diffusers_class(const std::string& class_name, const std::string& config_file);

// `cfg` with every field config.json leaves out (absent; an explicit null stays null) set to the
// default of `class_name`'s __init__ argument of that name; unchanged for a class without a row.
HfConfig with_diffusers_defaults(const HfConfig& cfg, const std::string& class_name);

}  // namespace mobius
