"""--dtype f16 / bf16: the model passes onnx.checker, and every initializer named after a checkpoint
key holds exactly that tensor converted to the dtype (bit for bit; Linear weights may be stored
transposed as [in, out] for MatMul)."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, numpy_helper
from safetensors.torch import load_file

import harness as H

# electra: an encoder whose checkpoint has no pooler (BertModel's pooler weights stay unused);
# deberta, deberta-v2: fused projections with q_bias / v_bias, the relative embeddings; roformer:
# its rotary table (encoder.embed_positions) stored as a weight; modernbert: the fused Wqkv and Wi,
# bias-free norms; gte: a gated MLP with a bias on down_proj only; ultrabert: a Llama stack as an
# encoder; xlm: per-layer lists (attentions.N, ffns.N), word embeddings read twice (token types);
# codegen, cohere, stablelm, phi: fused projections, per-head norm weights, a tied head with its
# own bias; apertus: scalar (0-d) xIELU parameters; olmo: norms without parameters
ROWS = [("llama", "attention-bias"), ("qwen3", "tied"), ("electra", "default"), ("deberta", "default"),
        ("deberta-v2", "default"), ("roformer", "default"), ("modernbert", "default"), ("gte", "default"),
        ("ultrabert", "default"), ("xlm", "default"),
        ("codegen", "default"), ("cohere", "qk-norm"), ("stablelm", "qk-layernorm"), ("phi", "tied"),
        ("gemma2", "full-sliding-untied-bias"), ("gemma3_text", "window-16-softcap"),
        ("apertus", "default"), ("olmo", "default")]
DTYPES = {"f16": (torch.float16, TensorProto.FLOAT16), "bf16": (torch.bfloat16, TensorProto.BFLOAT16)}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("model_type,name", ROWS, ids=[f"{m}-{n}" for m, n in ROWS])
def test_initializers_bit_exact(model_type, name, dtype, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"{model_type}-{name}-{dtype}")
    model = H.write_checkpoint(model_type, H.variant(model_type, name), work / "hf")
    path = H.build(work / "hf", work / "onnx", "--dtype", dtype)
    onnx.checker.check_model(str(path), full_check=True)

    torch_dtype, onnx_dtype = DTYPES[dtype]
    source = {k: v for f in sorted((work / "hf").glob("*.safetensors")) for k, v in load_file(f).items()}
    inits = {t.name: t for t in onnx.load(str(path), load_external_data=False).graph.initializer}
    missing = sorted(set(source) - set(inits))
    assert not missing, f"checkpoint tensors without an initializer: {missing}"
    if model.config.tie_word_embeddings:
        assert "lm_head.weight" not in inits, "tied lm_head must not get its own initializer"

    bad = []
    for key, src in source.items():
        t = inits[key]
        if t.data_type != onnx_dtype:
            bad.append(f"{key}: data_type {TensorProto.DataType.Name(t.data_type)}")
            continue
        want = src.to(torch_dtype).view(torch.int16).numpy().view(np.uint16)
        got = numpy_helper.to_array(t, base_dir=str(path.parent)).view(np.uint16)
        same = got.shape == want.shape and np.array_equal(got, want)
        transposed = want.ndim == 2 and got.shape == want.T.shape and np.array_equal(got, want.T)
        if not (same or transposed):
            bad.append(f"{key}: shape {list(got.shape)} vs source {list(want.shape)}, "
                       f"{int(np.sum(got != want)) if got.shape == want.shape else 'n/a'} bit patterns differ")
    assert not bad, "\n".join(bad)
