"""`mobius build --precision int4|int8` defaults per --ep are the ONNX Runtime GenAI model builder's
(issue 13, point 3), derived here from the builder's own code in the onnxruntime_genai wheel:
  accuracy_level   quantization/quant_config.py QuantConfig.from_extra_options({}, precision, ep)
  LM head          quantized when "MatMul" is in its op_types (builders/base.py is_lm_head_quantized)
  embeddings       "Gather" added to op_types by builder.py check_extra_options for a model whose
                   config ties them (shared_embeddings defaults to tie_word_embeddings), and only for
                   4 bits (builders/base.py make_tied_embeddings_init: INT4/UINT4)
checked on each package's nodes; the old defaults stay reachable by flags; --dtype bf16 is refused
for --ep cpu and warned about for --ep default, and onnxruntime's CPU provider indeed cannot load it.
Tiny models: about 10 s in all."""

import json

import onnx
import onnxruntime as ort
import pytest
from onnxruntime_genai.models import builder
from onnxruntime_genai.models.quantization.quant_config import QuantConfig
from transformers import AutoConfig

import harness as H


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    d = tmp_path_factory.mktemp("gemma") / "hf"
    H.write_checkpoint("gemma", H.variant("gemma", "default"), d)
    assert json.loads((d / "config.json").read_text())["tie_word_embeddings"] is True
    return d


@pytest.fixture(scope="module")
def untied(tmp_path_factory):
    d = tmp_path_factory.mktemp("llama") / "hf"
    H.write_checkpoint("llama", {}, d)
    assert json.loads((d / "config.json").read_text()).get("tie_word_embeddings") is False
    return d


def builder_defaults(hf_dir, precision, ep, monkeypatch, tmp_path) -> dict:
    """What the builder's option handling makes of `-p precision -e ep` with no --extra_options."""
    config = AutoConfig.from_pretrained(hf_dir)
    # the builder also loads the tokenizer here, which these tiny checkpoints lack: give it the config only
    monkeypatch.setattr(builder, "get_hf_details", lambda *a: {"hf_config": config, "extra_kwargs": {}, "hf_name": ""})
    extra = {}
    builder.check_extra_options(None, str(hf_dir), str(tmp_path / "builder"), precision, ep, str(tmp_path), extra)
    weights = QuantConfig.from_extra_options(extra, precision, ep).weights
    return {"accuracy_level": weights.accuracy_level, "lm_head": "MatMul" in weights.op_types,
            "embeddings": "Gather" in weights.op_types and precision == "int4"}


def package_facts(path) -> dict:
    model = onnx.load(str(path), load_external_data=False)
    inits = {i.name: i for i in model.graph.initializer}
    nbits = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
    levels = {next((a.i for a in n.attribute if a.name == "accuracy_level"), 0) for n in nbits}
    assert len(levels) == 1, f"MatMulNBits with different accuracy levels: {levels}"
    float_products = [n.name for n in model.graph.node if n.op_type in ("MatMul", "Gemm") and len(n.input) > 1
                      and n.input[1] in inits and len(inits[n.input[1]].dims) == 2]
    transposed = [n for n in model.graph.node if n.op_type == "Transpose" and n.input[0] in inits]
    return {"accuracy_level": levels.pop(),
            "lm_head": not float_products and not transposed,  # the head is the one weight product left in float
            "embeddings": any(n.op_type == "GatherBlockQuantized" for n in model.graph.node)}


@pytest.mark.parametrize("ep", ["cpu", "cuda", "dml", "webgpu"])
@pytest.mark.parametrize("precision", ["int4", "int8"])
@pytest.mark.parametrize("model", ["tied", "untied"])
def test_defaults_are_the_builders(model, precision, ep, request, monkeypatch, tmp_path):
    hf = request.getfixturevalue(model)
    path = H.build(hf, tmp_path / "out", "--runtime", "none", "--precision", precision, "--ep", ep)
    assert package_facts(path) == builder_defaults(hf, precision, ep, monkeypatch, tmp_path)


@pytest.mark.parametrize("ep", ["default", "onnx-standard"])
def test_provider_neutral_graphs(ep, tied, tmp_path):
    """No builder counterpart: the head and the tied embeddings as for every provider, accuracy level
    0 (the attribute left out: the kernel's float activations)."""
    path = H.build(tied, tmp_path / "out", "--runtime", "none", "--precision", "int4", "--ep", ep)
    assert package_facts(path) == {"accuracy_level": 0, "lm_head": True, "embeddings": True}


def test_old_defaults_by_flags(tied, tmp_path):
    path = H.build(tied, tmp_path / "out", "--runtime", "none", "--precision", "int4", "--ep", "cpu",
                   "--accuracy-level", "0", "--no-quantize-lm-head", "--no-quantize-embeddings")
    assert package_facts(path) == {"accuracy_level": 0, "lm_head": False, "embeddings": False}
    path = H.build(tied, tmp_path / "out2", "--runtime", "none", "--precision", "int8", "--ep", "cuda",
                   "--accuracy-level", "4", "--quantize-embeddings")
    assert package_facts(path) == {"accuracy_level": 4, "lm_head": True, "embeddings": True}


def test_bf16_cpu_refused_default_warned(untied, tmp_path):
    r = H.run_mobius("build", "--config", untied, tmp_path / "cpu", "--dtype", "bf16", "--ep", "cpu")
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:"), r.stderr
    assert "bf16" in lines[0] and "--ep cpu" in lines[0] and not (tmp_path / "cpu").exists()
    r = H.run_mobius("build", "--config", untied, tmp_path / "default", "--dtype", "bf16", "--runtime", "none")
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("mobius: warning:")]
    assert len(warnings) == 1 and "bf16" in warnings[0] and "CPU" in warnings[0], r.stderr
    # what the warning says: onnxruntime's CPU provider cannot load the package
    with pytest.raises(Exception, match="(?i)bfloat16|NOT_IMPLEMENTED|Could not find an implementation"):
        ort.InferenceSession(str(H.graph_path(tmp_path / "default", "model")), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("args,warned", [((), True), (("--ep", "onnx-standard"), True), (("--ep", "cpu"), False),
                                         (("--accuracy-level", "4"), False), (("--ep", "cuda"), False)])
def test_int8_without_the_cpu_kernel_is_warned(args, warned, untied, tmp_path):
    """--precision int8 where MatMulNBits' accuracy level is 0 on a graph that runs on the CPU
    (issue 25: 0.68 tokens/s against 23.8 with --ep cpu): warned, with the fix."""
    r = H.run_mobius("build", untied, tmp_path / "out", "--precision", "int8", *args)
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("mobius: warning: --precision int8")]
    assert len(warnings) == int(warned), r.stderr
    if warned:
        assert "accuracy level 0" in warnings[0] and "--ep cpu" in warnings[0] and "--accuracy-level 4" in warnings[0]
        assert package_facts(H.graph_path(tmp_path / "out", "model"))["accuracy_level"] == 0  # what it warns about


def test_int8_accuracy_level_0_is_the_slow_kernel():
    """What the warning rests on, measured in the installed onnxruntime: one 8-bit MatMulNBits
    [1, 2048] x [2048, 2048] on the CPU is several times slower at accuracy level 0 than at 4."""
    import time

    import numpy as np
    from onnx import TensorProto, helper

    k = n = 2048
    rng = np.random.default_rng(0)
    seconds = {}
    for level in (0, 4):
        node = helper.make_node("MatMulNBits", ["x", "b", "s"], ["y"], domain="com.microsoft", K=k, N=n, bits=8,
                                block_size=32, accuracy_level=level)
        graph = helper.make_graph(
            [node], "one", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
            [helper.make_tensor("b", TensorProto.UINT8, [n, k // 32, 32], rng.integers(0, 256, n * k).astype(np.uint8).tobytes(), raw=True),
             helper.make_tensor("s", TensorProto.FLOAT, [n, k // 32], (rng.random(n * k // 32, np.float32) / 100).tobytes(), raw=True)])
        model = helper.make_model(graph, ir_version=10,
                                  opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        x = {"x": rng.random((1, k), np.float32)}
        sess.run(None, x)
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(10):
                sess.run(None, x)
            best = min(best, time.perf_counter() - start)
        seconds[level] = best
    print(f"\n8-bit MatMulNBits 2048x2048, 10 runs: accuracy level 0 {seconds[0]:.4f} s, 4 {seconds[4]:.4f} s")
    assert seconds[0] > 3 * seconds[4], seconds
