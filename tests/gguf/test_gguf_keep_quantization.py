"""`mobius build --gguf --precision keep`: a GGUF's Q4_0 / Q8_0 / Q6_K blocks become MatMulNBits /
GatherBlockQuantized inputs as they are, without a dequantize-requantize round trip.

A tiny llama written as GGUF the way convert_hf_to_gguf.py does (Q/K rows permuted), every matrix
Q4_0, Q8_0 or Q6_K (hidden and intermediate sizes multiples of its 256-element super-blocks), is
built with --precision keep. onnxruntime runs each MatMulNBits of the package alone
on an identity input (y = I @ W^T, exact) and each GatherBlockQuantized on every row index: the
matrices it computes with equal gguf.quants.dequantize of the GGUF tensors (un-permuted for Q/K)
bit for bit. The package's logits equal those of the float --gguf build within 1e-4 (only the
kernels' summation order differs). A Q4_1 GGUF, whose d * q + m is not MatMulNBits' (q - zp) * scale
in general, stays float: its --precision keep package is the float --gguf build, byte for byte.
The build summary says, per GGUF type, how many matrices were kept as blocks and how many written in
float (counted from the GGUF file itself), and a build that keeps none is warned about.
"""

import filecmp

import gguf
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness as H
from gguf_testlib import QT, llama_permute, write_gguf


def matrices_by_type(path) -> dict[str, int]:
    """The GGUF file's 2-D tensors, counted by ggml type name."""
    counts: dict[str, int] = {}
    for t in gguf.GGUFReader(path).tensors:
        if len(t.shape) == 2:
            counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
    return counts


def llama_unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    """The inverse of convert_hf_to_gguf.py LlamaModel.permute (gguf_testlib.llama_permute)."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_matrices(path, config) -> dict[str, np.ndarray]:
    """Every GGUF matrix dequantized by gguf.quants, under its Hugging Face name, Q/K un-permuted."""
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config.num_hidden_layers)
    hf = {}
    for stem in [f"model.layers.{i}.{m}" for i in range(config.num_hidden_layers)
                 for m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                           "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")] + ["model.embed_tokens", "lm_head"]:
        hf[names.get_name(stem) + ".weight"] = stem + ".weight"
    out = {}
    for t in gguf.GGUFReader(path).tensors:
        if t.name not in hf or len(t.shape) != 2:
            continue
        w = gguf.quants.dequantize(t.data, t.tensor_type).reshape([int(d) for d in reversed(t.shape)])
        name = hf[t.name]
        if "q_proj" in name:
            w = llama_unpermute(w, config.num_attention_heads)
        elif "k_proj" in name:
            w = llama_unpermute(w, config.num_key_value_heads)
        out[name] = w.astype(np.float32)
    return out


def run_alone(node: onnx.NodeProto, inits: dict[str, np.ndarray], inputs: dict[str, np.ndarray]) -> np.ndarray:
    """Runs one com.microsoft node of the package in onnxruntime with its initializers."""
    feeds = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
             for k, v in inputs.items()]
    graph = helper.make_graph([node], "alone", feeds, [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(inits[i], i) for i in node.input if i in inits])
    model = helper.make_model(graph, ir_version=10,
                              opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)[0]


def dequantize_by_spec(b: np.ndarray, scales: np.ndarray, bits: int, zero_points=None) -> np.ndarray:
    """MatMulNBits (com.microsoft, onnxruntime docs/ContribOperators.md) B uint8 [N, blocks, blob],
    scales [N, blocks], zero points uint8 [N, blocks] at 8 bits, or none (the default 2^(bits-1)):
    element 2i of a 4-bit block in the low nibble of byte i, 2i+1 in the high one; value
    (q - zero point) * scale in float32."""
    q = np.stack([b & 0x0F, b >> 4], axis=-1).reshape(*b.shape[:2], -1) if bits == 4 else b
    zp = np.float32(2 ** (bits - 1)) if zero_points is None else zero_points.astype(np.float32)[..., None]
    w = (q.astype(np.float32) - zp) * scales.astype(np.float32)[..., None]
    return w.reshape(b.shape[0], -1)


# ggml type -> (MatMulNBits bits, block size, zero points given), the sizes the tiny llama needs
KEPT = {QT.Q4_0: (4, 32, False), QT.Q8_0: (8, 32, False), QT.Q6_K: (8, 16, True)}
SIZES = {QT.Q6_K: {"hidden_size": 256, "intermediate_size": 512, "head_dim": 64}}


@pytest.mark.parametrize("qtype", list(KEPT), ids=["q4_0", "q8_0", "q6_k"])
def test_kept_blocks_dequantize_to_gguf_values_bit_for_bit(tmp_path, qtype):
    model = H.write_checkpoint("llama", {"tie_word_embeddings": True, **SIZES.get(qtype, {})}, tmp_path / "hf")
    path = tmp_path / "model.gguf"
    write_gguf(model, path, qtype)
    r = H.run_mobius("build", "--gguf", path, tmp_path / "keep", "--precision", "keep", "--runtime", "none")
    assert r.returncode == 0, r.stderr
    H.build(path, tmp_path / "float", "--runtime", "none", source="--gguf")
    # the summary: every matrix of the file kept as its blocks, none written in float, no warning
    (count,) = matrices_by_type(path).values()
    assert f"  --precision keep: kept as their stored blocks: {count} {qtype.name}\n" in r.stdout, r.stdout
    assert "written in float" not in r.stdout and "warning" not in r.stderr, r.stdout + r.stderr

    want = gguf_matrices(path, model.config)
    package = onnx.load(str(H.graph_path(tmp_path / "keep", "model")))
    inits = {i.name: numpy_helper.to_array(i) for i in package.graph.initializer}
    for node in package.graph.node:  # a tied embedding reads the head's B through a Reshape
        if node.op_type == "Reshape" and node.input[0] in inits:
            inits[node.output[0]] = inits[node.input[0]].reshape(inits[node.input[1]])
    bits, block, zero_points = KEPT[qtype]
    checked = set()
    for node in package.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "MatMulNBits":
            assert (attrs["bits"], attrs["block_size"], len(node.input)) == (bits, block, 3 + zero_points), node
            k, n = attrs["K"], attrs["N"]
            y = run_alone(node, inits, {node.input[0]: np.eye(k, dtype=np.float32)})
            source = node.input[1].removesuffix(f"_Q{bits}")
            source = "model.embed_tokens.weight" if source.startswith("lm_head") else source  # tied
            # onnxruntime's product: the same floats (a sum with zeros turns -0.0 into 0.0)
            assert y.shape == (k, n) and np.array_equal(y.T, want[source]), source
            # the initializers decoded by the spec: the same bits
            zp = inits[node.input[3]] if zero_points else None
            assert np.array_equal(dequantize_by_spec(inits[node.input[1]], inits[node.input[2]], bits, zp).view(np.uint32),
                                  want[source].view(np.uint32)), source
            checked.add(source)
        elif node.op_type == "GatherBlockQuantized":
            assert (attrs["bits"], attrs["block_size"]) == (bits, block), node
            vocab = model.config.vocab_size
            y = run_alone(node, inits, {node.input[1]: np.arange(vocab, dtype=np.int64)})
            assert np.array_equal(y.view(np.uint32), want["model.embed_tokens.weight"].view(np.uint32))
            assert len(node.input) == 3 + zero_points  # Q4_0 / Q8_0 symmetric: no zero points
            checked.add("gather")
    assert checked == set(want) | {"gather"}, sorted(set(want) ^ checked)

    ids, mask, pos = H.prefill_batch(model.config.vocab_size)
    valid = mask.astype(bool)
    kept, _ = H.OnnxLM(H.graph_path(tmp_path / "keep", "model"), model.config)(ids, mask, pos)
    floats, _ = H.OnnxLM(H.graph_path(tmp_path / "float", "model"), model.config)(ids, mask, pos)
    assert H.max_abs(kept[valid], floats[valid]) <= H.TOL


def test_q4_1_stays_float(tmp_path):
    model = H.write_checkpoint("llama", {}, tmp_path / "hf")
    path = tmp_path / "model.gguf"
    write_gguf(model, path, QT.Q4_1)
    r = H.run_mobius("build", "--gguf", path, tmp_path / "keep", "--precision", "keep")
    assert r.returncode == 0, r.stderr
    H.build(path, tmp_path / "float", source="--gguf")
    # said as it is: nothing kept, every Q4_1 matrix in float (no "blocks of 32 ... accuracy level")
    assert matrices_by_type(path) == {"Q4_1": (count := matrices_by_type(path)["Q4_1"])}
    assert f"  --precision keep: no matrix kept; written in float: {count} Q4_1\n" in r.stdout, r.stdout
    assert "blocks of" not in r.stdout and "accuracy level" not in r.stdout, r.stdout
    assert (f"mobius: warning: --precision keep: weight matrices written in float ({count} Q4_1): MatMulNBits has a "
            "layout for GGUF's Q4_0, Q8_0 and Q6_K blocks only; --precision int4 or int8 quantizes every matrix instead"
            in r.stderr), r.stderr
    package = onnx.load(str(H.graph_path(tmp_path / "keep", "model")), load_external_data=False)
    assert not [n for n in package.graph.node if n.domain == "com.microsoft"]
    assert filecmp.cmp(H.data_path(tmp_path / "keep"), H.data_path(tmp_path / "float"), shallow=False)


@pytest.mark.parametrize("args,message", [
    (["--precision", "keep", "--block-size", "64"], "--block-size and --quant-scheme do not apply to --precision keep"),
    (["--precision", "keep", "--dtype", "bf16"], "bfloat16"),
])
def test_keep_refuses_options_it_cannot_honour(tmp_path, args, message):
    model = H.write_checkpoint("llama", {}, tmp_path / "hf")
    path = tmp_path / "model.gguf"
    write_gguf(model, path, QT.Q8_0)
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out", *args)
    assert r.returncode == 1 and r.stderr.startswith("mobius: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_keep_needs_a_gguf(tmp_path):
    H.write_checkpoint("llama", {}, tmp_path / "hf")
    r = H.run_mobius("build", "--config", tmp_path / "hf", tmp_path / "out", "--precision", "keep")
    assert r.returncode == 1 and "--precision keep keeps the quantization of a GGUF file" in r.stderr, r.stderr
