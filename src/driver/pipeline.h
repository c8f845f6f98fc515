// A diffusers pipeline folder built as one package: model_index.json names the components, each in
// its own subfolder with its own config.json and weights (ModelMixin / PreTrainedModel
// save_pretrained: diffusion_pytorch_model.safetensors, model.safetensors), as
// DiffusionPipeline.save_pretrained writes it.
//
// Each component is built from its own folder, by its own registry: a diffusers model by its
// config.json `_class_name` (registry/diffusers_registry.h), a transformers model by its
// `model_type` (registry/registry.h, a single-graph task: an encoder alone), or by the factory
// the pipelines' calls need (registry/diffusers_registry.h pipeline_transformers_factory: a CLIP
// text encoder takes input_ids alone and gives every hidden state).
// The package is laid out as Optimum's ORTDiffusionPipeline and diffusers' ONNX pipelines read it
// (the hf layout; --layout flat is refused):
//   model_index.json                      the pipeline's, copied
//   <component>/model.onnx + .onnx_data   a single-graph component (unet/, transformer/,
//                                         text_encoder/, text_encoder_2/), its config.json beside it
//   vae_encoder/, vae_decoder/            an autoencoder's two graphs (the names its architecture
//                                         gives them), the vae's config.json in each
//   tokenizer/, scheduler/, ...           a folder without config.json: its tokenizer, scheduler and
//                                         processor files (package/copied_files.h) copied
//   mobius_manifest.json                  every entry of model_index.json and what became of it:
//                                         {"built": [graph roles]}, {"copied": [files]},
//                                         {"skipped": reason} or {"absent": true}
// A component whose class no registry holds is skipped with the reason in the manifest (and a
// warning); a component whose config is out of range is refused naming its config.json and field;
// nothing is written on any error.
#pragma once

#include <string>

#include "driver/build.h"

namespace mobius {

// Whether `dir` is a diffusers pipeline folder: a model_index.json and no config.json at its top.
bool is_pipeline_source(const std::string& dir);

// Builds the pipeline in options.config_dir into options.output_dir as above, with the build
// options of every component (--dtype, --ep, --precision, --no-weights, --force, --variant).
// BuildReport::model_type is the pipeline's _class_name, task "diffusion-pipeline"; warnings name
// the skipped components. An entry whose value is neither an array nor null is a setting of the
// pipeline (requires_safety_checker), not a component. Throws mobius::Error naming model_index.json and the entry for an entry
// that is not [library, class] or names no plain subfolder, naming the component's file and field
// for a config out of range, and for --layout flat, --lora, --lora-runtime, --try-generic, --task
// and --precision keep (which a pipeline does not take).
BuildReport build_pipeline(const BuildOptions& options);

}  // namespace mobius
