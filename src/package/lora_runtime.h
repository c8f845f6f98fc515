// Runtime LoRA adapters (`mobius build --lora-runtime A_DIR [B_DIR ...]`, docs/lora.md): the base
// package takes each adapted Linear's LoRA weights as graph inputs, and each PEFT adapter is
// written next to it as an onnxruntime adapter file that onnxruntime (onnxruntime.LoraAdapter,
// RunOptions.add_active_adapter) and onnxruntime-genai (og.Adapters) feed into those inputs.
//
// The inputs are the ones Olive's ExtractAdapters pass (make_inputs, dynamic_lora_r,
// optional_inputs) makes of the ORT GenAI builder's LoRA model (builders/base.py make_matmul_lora,
// `adapter_path`): its MatMul /model/layers.0/attn/q_proj/lora_A/MatMul becomes the input
//   <module>.lora_A.weight  [in, "lora_r"]   A^T
//   <module>.lora_B.weight  ["lora_r", out]  scale * B^T   (the builder folds the scale into B)
// where <module> is transformers' module path with self_attn written attn, as the builder names
// it (model.layers.0.attn.q_proj, model.layers.0.mlp.down_proj).
// each also an initializer of zero rows or columns (lora_r = 0), its default: without an active
// adapter the package computes the base model. The Linear y = x @ W becomes
//   y = x @ W + (x @ A^T) @ (scale * B^T).
// The adapter file is onnxruntime's adapter format (onnxruntime/lora/adapter_format/
// adapter_schema.fbs: a FlatBuffer with file identifier "TORT", format_version 1) holding those
// two tensors for every module the adapter adapts, in the package's float dtype.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "weights/checkpoint.h"
#include "weights/lora.h"

namespace mobius {

// Adds the inputs above for every module of `adapters` (the union: a module an adapter does not
// adapt keeps its empty default under that adapter) to each node of `graph` that multiplies by the
// module's checkpoint tensor `<module>.weight`: a MatMul by it (float, at any --dtype), or a
// com.microsoft MatMulNBits by its quantized blocks (--precision: the LoRA product stays a float
// MatMul pair beside it, at the activations' dtype). A weight packed from several modules (q/k/v,
// gate/up: --ep) gets the inputs of each of its modules (those of a module no adapter adapts are
// empty by default) and their products side by side (Concat), added to the packed product, so
// that the adapters apply to any lowering and precision. `checkpoint` gives the sizes of the parts
// no adapter adapts. Returns the number of modules given inputs. Throws mobius::Error naming the
// module when one is not read by such a node, or the node's sizes are not the modules'.
int add_lora_inputs(Graph& graph, const std::vector<const LoraAdapter*>& adapters, const Checkpoint& checkpoint);

// Writes `adapter` as an onnxruntime adapter file at `path` (the format above), its tensors
// converted to `dtype` (FLOAT, FLOAT16 or BFLOAT16). Throws mobius::Error naming the path on an
// I/O error.
void write_onnx_adapter(const std::string& path, const LoraAdapter& adapter, DataType dtype);

}  // namespace mobius
