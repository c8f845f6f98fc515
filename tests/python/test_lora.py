"""LoRA merged while the weights stream (src/weights/lora.h, `mobius build --lora`,
mobius_cpp.build(lora=...)): tiny models with a random PEFT adapter (every lora_A / lora_B
re-randomized, B not zero) give the logits of transformers + peft's merged model
(PeftModel.merge_and_unload) within 1e-4; bad adapters get one-line errors. Runtime adapters
(src/package/lora_runtime.h, `--lora-runtime`): the base package with an adapter file active in
onnxruntime gives the merged package's logits, and onnxruntime-genai switching adapters between
generations gives each merged package's tokens. Tiny models."""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import onnxruntime_genai as og
import pytest
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from safetensors.numpy import load_file, save_file

import gguf_testlib as G
import harness as H
import mobius_cpp


@torch.no_grad()
def write_adapter(hf_dir: Path, out: Path, seed: int = 1, **lora) -> None:
    """A PEFT LoRA adapter of the checkpoint in `hf_dir`, every A and B re-randomized (`seed`),
    saved with save_pretrained."""
    torch.manual_seed(seed)
    model = get_peft_model(H.load_reference(hf_dir), LoraConfig(**lora))
    for name, p in model.named_parameters():
        if "lora_" in name:  # B scaled so that the delta moves the logits well past the tolerance
            p.copy_(torch.randn_like(p) * (0.3 if "lora_B" in name else p.shape[1] ** -0.5))
    model.save_pretrained(out)


def merged_reference(hf_dir: Path, adapter: Path):
    """transformers + peft: the base from disk, the adapter from disk, merged."""
    return PeftModel.from_pretrained(H.load_reference(hf_dir), adapter).merge_and_unload().eval()


def logits(model_path: Path, reference) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mobius' logits, the reference's, the valid positions) on the harness' padded batch."""
    lm = H.OnnxLM(model_path, reference.config)
    assert lm.io_problems() == []
    ids, mask, pos = H.prefill_batch(reference.config.vocab_size)
    got, _ = lm(ids, mask, pos)
    want, _ = H.hf_forward(H.float64(reference), ids, mask, pos)
    return got, want, mask.astype(bool)


CASES = {
    # every Linear, with per-module ranks and alphas (peft's rank_pattern / alpha_pattern)
    "llama": dict(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                                      "up_proj", "down_proj"],
                  rank_pattern={"down_proj": 2, r"layers\.1\.self_attn\.k_proj": 3}, alpha_pattern={"v_proj": 5}),
    # fused qkv_proj / gate_up_proj, rsLoRA (alpha / sqrt(r))
    "phi3": dict(r=4, lora_alpha=6, target_modules=["qkv_proj", "o_proj", "gate_up_proj", "down_proj"], use_rslora=True),
    # Conv1D weights stored [in, out]: fan_in_fan_out
    "gpt2": dict(r=2, lora_alpha=4, target_modules=["c_attn", "c_proj", "c_fc"], fan_in_fan_out=True),
}


@pytest.mark.parametrize("model_type", CASES)
def test_merged_adapter_equals_peft(tmp_path, model_type):
    H.write_checkpoint(model_type, {}, tmp_path / "hf")
    write_adapter(tmp_path / "hf", tmp_path / "adapter", **CASES[model_type])
    pkg = mobius_cpp.build(tmp_path / "hf", tmp_path / "out", runtime="none", lora=tmp_path / "adapter")
    got, want, valid = logits(H.graph_path(pkg.path, "model"), merged_reference(tmp_path / "hf", tmp_path / "adapter"))
    assert H.max_abs(got[valid], want[valid]) <= H.TOL
    _, base, _ = logits(H.graph_path(pkg.path, "model"), H.load_reference(tmp_path / "hf"))
    assert H.max_abs(got[valid], base[valid]) > 100 * H.TOL  # the adapter changed the model


def test_lora_on_a_gguf(tmp_path):
    """--gguf with --lora: the adapter's transformers names are the GGUF checkpoint view's (its Q/K
    row permutation undone before the merge)."""
    model = H.write_checkpoint("llama", {}, tmp_path / "hf")
    G.write_gguf(model, tmp_path / "tiny.gguf")
    write_adapter(tmp_path / "hf", tmp_path / "adapter", **CASES["llama"])
    r = H.run_mobius("build", "--gguf", tmp_path / "tiny.gguf", tmp_path / "out", "--runtime", "none",
                     "--lora", tmp_path / "adapter")
    assert r.returncode == 0, r.stderr
    got, want, valid = logits(H.graph_path(tmp_path / "out", "model"), merged_reference(tmp_path / "hf", tmp_path / "adapter"))
    assert H.max_abs(got[valid], want[valid]) <= H.TOL


def test_cli_lora_quantized_and_f16(tmp_path):
    """--lora on the CLI, with --precision int8 (MatMulNBits keeps the weight as [out, in]: the
    untransposed merge) and --dtype f16, against the same build of peft's merged checkpoint: int8
    logits within 1e-4; f16 weights equal but where the float32 merges (peft's (B @ A) * scale,
    mobius' sum of scale * a * b) round to neighbouring float16 values (13 of 107k measured)."""
    hf, adapter = tmp_path / "hf", tmp_path / "adapter"
    H.write_checkpoint("llama", {}, hf)
    write_adapter(hf, adapter, **CASES["llama"])
    merged_reference(hf, adapter).save_pretrained(tmp_path / "merged")
    for args in (["--precision", "int8"], ["--dtype", "f16"]):
        tag = args[-1]
        r = H.run_mobius("build", "--config", hf, tmp_path / f"lora_{tag}", "--runtime", "none", "--lora", adapter, *args)
        assert r.returncode == 0, r.stderr
        H.build(tmp_path / "merged", tmp_path / f"merged_{tag}", "--runtime", "none", *args)
    ref = H.load_reference(hf)
    ids, mask, pos = H.prefill_batch(ref.config.vocab_size)
    got, _ = H.OnnxLM(H.graph_path(tmp_path / "lora_int8", "model"), ref.config)(ids, mask, pos)
    want, _ = H.OnnxLM(H.graph_path(tmp_path / "merged_int8", "model"), ref.config)(ids, mask, pos)
    valid = mask.astype(bool)
    assert H.max_abs(got[valid], want[valid]) <= H.TOL
    got = np.fromfile(H.data_path(tmp_path / "lora_f16"), np.float16)
    want = np.fromfile(H.data_path(tmp_path / "merged_f16"), np.float16)
    differ = got != want
    assert differ.sum() <= 1e-3 * got.size
    assert np.all(np.abs(got[differ].astype(np.float32) - want[differ]) <= np.spacing(np.abs(want[differ])))


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("lora_errors")
    H.write_checkpoint("llama", {}, root / "hf")
    write_adapter(root / "hf", root / "adapter", r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"])
    return root / "hf", root / "adapter"


def edited(adapter: Path, out: Path, config=None, tensors=None) -> Path:
    """A copy of `adapter` with adapter_config.json fields replaced and tensors edited."""
    shutil.copytree(adapter, out)
    if config is not None:
        c = json.loads((out / "adapter_config.json").read_text()) | config
        (out / "adapter_config.json").write_text(json.dumps(c))
    if tensors is not None:
        save_file(tensors(load_file(out / "adapter_model.safetensors")), out / "adapter_model.safetensors")
    return out


def test_bad_adapters(tmp_path, pair):
    hf, adapter = pair
    st = "adapter_model.safetensors"
    q = "base_model.model.model.layers.0.self_attn.q_proj"
    (tmp_path / "empty").mkdir()
    cases = [
        (tmp_path / "empty", f"{tmp_path / 'empty' / 'adapter_config.json'}: no such file (a LoRA adapter is a PEFT "
         "adapter directory: adapter_config.json and adapter_model.safetensors, as peft's save_pretrained writes them)"),
        (edited(adapter, tmp_path / "dora", {"use_dora": True}),
         f"{tmp_path / 'dora' / 'adapter_config.json'}: field 'use_dora': DoRA adapters are not supported"),
        (edited(adapter, tmp_path / "rank", {"r": 8}),
         f"{tmp_path / 'rank' / st}: LoRA tensors of 'model.layers.0.self_attn.q_proj' have rank 4, but "
         f"{tmp_path / 'rank' / 'adapter_config.json'} gives it r = 8 (field 'r' or 'rank_pattern')"),
        (edited(adapter, tmp_path / "base", {"auto_mapping": {"base_model_class": "GPT2LMHeadModel"}}),
         f"{tmp_path / 'base' / 'adapter_config.json'}: field 'auto_mapping.base_model_class': the adapter was "
         f"trained on 'GPT2LMHeadModel', but {hf / 'config.json'} is a 'LlamaForCausalLM': use the adapter's base model"),
        (edited(adapter, tmp_path / "module", tensors=lambda t: {k.replace("q_proj", "qq_proj"): v for k, v in t.items()}),
         f"{tmp_path / 'module' / st}: the adapter targets module 'model.layers.0.self_attn.qq_proj', which the model "
         "does not have (no tensor 'model.layers.0.self_attn.qq_proj.weight' in the checkpoint): the adapter is for "
         "another base model"),
        (edited(adapter, tmp_path / "shape", tensors=lambda t: t | {f"{q}.lora_A.weight": np.zeros((4, 8), np.float32)}),
         f"{tmp_path / 'shape' / st}: LoRA tensors of 'model.layers.0.self_attn.q_proj' have shapes A [4, 8] and B "
         "[64, 4], but its weight [64, 64] needs A [r, 64] and B [64, r]: the adapter is for another base model"),
        (edited(adapter, tmp_path / "half", tensors=lambda t: {k: v for k, v in t.items() if k != f"{q}.lora_B.weight"}),
         f"{tmp_path / 'half' / st}: tensor '{q}.lora_B.weight' is missing (its lora_A is there)"),
    ]
    for bad, message in cases:
        r = H.run_mobius("build", "--config", hf, tmp_path / "out", "--lora", bad)
        assert r.returncode == 1 and r.stderr.startswith(f"mobius: error: {message}"), r.stderr
        assert r.stderr.count("\n") == 1 and not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="drop --no-weights"):
        mobius_cpp.build(hf, tmp_path / "out", weights=False, lora=adapter)
    with pytest.raises(FileNotFoundError):
        mobius_cpp.build(hf, tmp_path / "out", lora=tmp_path / "empty")
    assert not (tmp_path / "out").exists()


def adapter_logits(package: Path, config, adapter: Path | None) -> tuple[np.ndarray, np.ndarray]:
    """(the package logits on the harness batch with `adapter`, an .onnx_adapter file, active; the valid positions)"""
    lm = H.OnnxLM(H.graph_path(package, "model"), config)
    ids, mask, pos = H.prefill_batch(config.vocab_size)
    options = ort.RunOptions()
    if adapter is not None:
        loaded = ort.LoraAdapter()
        loaded.Load(str(adapter))
        options.add_active_adapter(loaded)
    feeds = {"input_ids": ids, "attention_mask": mask, "position_ids": pos, **lm.empty_past(len(ids))}
    names = {i.name for i in lm.sess.get_inputs()}  # --ep cpu: GroupQueryAttention takes no position_ids
    return lm.sess.run(["logits"], {k: v for k, v in feeds.items() if k in names}, options)[0], mask.astype(bool)


def genai_tokens(model, adapters, name: str | None, prompt: np.ndarray, n: int) -> list[int]:
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt) + n, do_sample=False)
    gen = og.Generator(model, params)
    if name is not None:
        gen.set_active_adapter(adapters, name)
    gen.append_tokens(np.asarray(prompt, np.int32)[None, :])
    while not gen.is_done():
        gen.generate_next_token()
    return [int(t) for t in gen.get_sequence(0)[len(prompt):]]


def test_runtime_adapters(tmp_path):
    hf = tmp_path / "hf"
    H.write_checkpoint("llama", {}, hf)
    dirs = {"one": tmp_path / "one", "two": tmp_path / "two"}
    write_adapter(hf, dirs["one"], **CASES["llama"])
    write_adapter(hf, dirs["two"], seed=2, r=2, lora_alpha=3, target_modules=["q_proj", "v_proj", "down_proj"],
                  use_rslora=True)
    pkg = mobius_cpp.build(hf, tmp_path / "base", lora_runtime=[dirs["one"], dirs["two"]])
    assert {"one.onnx_adapter", "two.onnx_adapter"} <= set(pkg.files)
    # the inputs: those Olive makes of the ORT GenAI builder's LoRA MatMuls, over the union of the
    # adapted modules
    lora = {v.name: v.shape for v in pkg.inputs if ".lora_" in v.name}
    a_shape, b_shape = (64, "lora_r"), ("lora_r", 64)  # q_proj of layer 0 (hidden 64)
    assert lora["model.layers.0.attn.q_proj.lora_A.weight"] == a_shape  # the ORT GenAI builder's "attn"
    assert lora["model.layers.0.attn.q_proj.lora_B.weight"] == b_shape
    assert len(lora) == 2 * 7 * 2  # two layers, seven Linears each, A and B
    # each file holds A^T and scale * B^T of each module the adapter adapts
    params = ort.AdapterFormat.read_adapter(str(pkg.path / "two.onnx_adapter")).get_parameters()
    assert len(params) == 2 * 3 * 2
    peft_model = PeftModel.from_pretrained(H.load_reference(hf), dirs["two"])
    layer = peft_model.base_model.model.model.layers[1].mlp.down_proj
    np.testing.assert_array_equal(params["model.layers.1.mlp.down_proj.lora_A.weight"].numpy(),
                                  layer.lora_A["default"].weight.detach().numpy().T)
    np.testing.assert_allclose(params["model.layers.1.mlp.down_proj.lora_B.weight"].numpy(),
                               layer.lora_B["default"].weight.detach().numpy().T * layer.scaling["default"], rtol=1e-6)
    # onnxruntime: no adapter is the base model, each adapter its merged package
    ref = H.load_reference(hf)
    plain = mobius_cpp.build(hf, tmp_path / "plain")
    got, valid = adapter_logits(pkg.path, ref.config, None)
    want, _ = adapter_logits(plain.path, ref.config, None)
    assert H.max_abs(got[valid], want[valid]) <= H.TOL
    merged = {name: mobius_cpp.build(hf, tmp_path / f"merged_{name}", lora=d) for name, d in dirs.items()}
    for name in dirs:
        got, valid = adapter_logits(pkg.path, ref.config, pkg.path / f"{name}.onnx_adapter")
        want, _ = adapter_logits(merged[name].path, ref.config, None)
        assert H.max_abs(got[valid], want[valid]) <= H.TOL, name
        assert H.max_abs(got[valid], adapter_logits(plain.path, ref.config, None)[0][valid]) > 100 * H.TOL
    # onnxruntime-genai: switching adapters between generations
    prompt = np.random.RandomState(3).randint(3, ref.config.vocab_size, size=H.GEN_PROMPT)
    model = og.Model(str(pkg.path))
    adapters = og.Adapters(model)
    for name in dirs:
        adapters.load(str(pkg.path / f"{name}.onnx_adapter"), name)
    expected = {name: H.genai_greedy(merged[name].path, prompt, H.GEN_NEW) for name in dirs}
    expected[None] = H.genai_greedy(plain.path, prompt, H.GEN_NEW)
    assert len({tuple(t) for t in expected.values()}) == 3  # the adapters change the tokens
    for name in ("one", "two", None, "one"):
        assert genai_tokens(model, adapters, name, prompt, H.GEN_NEW) == expected[name], name


def test_runtime_adapter_errors(tmp_path, pair):
    hf, adapter = pair
    copy = tmp_path / "x" / adapter.name
    shutil.copytree(adapter, copy)
    r = H.run_mobius("build", "--config", hf, tmp_path / "out", "--lora-runtime", adapter, copy)
    assert r.returncode == 1 and r.stderr == (f"mobius: error: --lora-runtime {copy}: another adapter directory is also "
                                              f"named '{adapter.name}' (each is written as <directory name>.onnx_adapter)\n")
    assert not (tmp_path / "out").exists()


@torch.no_grad()
def dequantized_checkpoint(package: Path, hf: Path, out: Path) -> None:
    """`hf` with every Linear weight replaced by what `package`'s MatMulNBits compute with: its
    4-bit blocks dequantized by the operator's spec, a packed weight (q/k/v, gate/up) cut back
    into its modules by their checkpoint sizes."""
    from test_gguf_keep_quantization import dequantize_by_spec

    tensors = load_file(hf / "model.safetensors")
    model = onnx.load(str(H.graph_path(package, "model")))
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type != "MatMulNBits":
            continue
        w = dequantize_by_spec(inits[node.input[1]], inits[node.input[2]], 4)
        stem, _, packed = node.input[1].partition(".weight")[0].rpartition(".")
        names = [f"{stem}.{m}.weight" for m in re.findall(r"(?:q|k|v|o|gate|up|down)_proj", packed)] or \
                [node.input[1].partition(".weight")[0] + ".weight"]
        rows = np.cumsum([tensors[n].shape[0] for n in names])[:-1]
        for name, part in zip(names, np.split(w, rows)):
            assert part.shape == tensors[name].shape, name
            tensors[name] = part[:, :tensors[name].shape[1]].astype(np.float32)
    out.mkdir()
    for f in hf.iterdir():
        if f.name != "model.safetensors":
            shutil.copy(f, out / f.name)
    save_file(tensors, str(out / "model.safetensors"))


@pytest.mark.parametrize("options", [dict(ep="cpu", precision="int4", accuracy_level=0), dict(ep="cpu")],
                         ids=["int4-cpu", "float-cpu"])
def test_runtime_adapters_on_an_int4_cpu_package(tmp_path, options):
    """--lora-runtime with --ep cpu --precision int4 (issue 25: the deployment people want), and
    --ep cpu in float (packed MatMuls): the
    adapters' A and B stay float MatMuls beside the MatMulNBits (packed q/k/v and gate/up get the
    inputs of each module, empty for those no adapter adapts). With no adapter active the package
    is the int4 package without adapters; with one, it computes the int4 weights plus the LoRA
    product: the logits of a float package built from the dequantized int4 weights with the
    adapter merged (--lora), within 1e-4 (accuracy level 0: the kernel's float activations), and
    onnxruntime-genai's greedy tokens with og.Adapters are that package's."""
    hf = tmp_path / "hf"
    H.write_checkpoint("llama", {}, hf)
    adapter = tmp_path / "adapter"
    write_adapter(hf, adapter, r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "up_proj", "down_proj"])
    pkg = mobius_cpp.build(hf, tmp_path / "int4", lora_runtime=[adapter], **options)
    nodes = onnx.load(str(H.graph_path(pkg.path, "model")), load_external_data=False).graph.node
    quantized = 2 * 4 + 1 if "precision" in options else 0  # qkv, o, gate_up, down; the LM head
    assert sum(n.op_type == "MatMulNBits" for n in nodes) == quantized
    assert sum(n.op_type == "GroupQueryAttention" for n in nodes) == 2
    lora = {v.name for v in pkg.inputs if ".lora_" in v.name}
    assert "model.layers.0.attn.k_proj.lora_A.weight" in lora  # a packed part no adapter adapts: empty
    plain = mobius_cpp.build(hf, tmp_path / "plain", **options)
    ref = H.load_reference(hf)
    got, valid = adapter_logits(pkg.path, ref.config, None)
    want, _ = adapter_logits(plain.path, ref.config, None)
    assert H.max_abs(got[valid], want[valid]) <= H.TOL
    if "precision" in options:  # the float weights the int4 package computes with
        dequantized_checkpoint(plain.path, hf, tmp_path / "deq")
    merged = mobius_cpp.build(tmp_path / "deq" if "precision" in options else hf, tmp_path / "merged", lora=adapter)
    got, valid = adapter_logits(pkg.path, ref.config, pkg.path / "adapter.onnx_adapter")
    want, _ = adapter_logits(merged.path, ref.config, None)
    assert H.max_abs(got[valid], want[valid]) <= H.TOL
    assert H.max_abs(got[valid], adapter_logits(plain.path, ref.config, None)[0][valid]) > 100 * H.TOL
    # onnxruntime-genai loads the int4 package and its adapter: the merged package's greedy tokens
    prompt = np.random.RandomState(3).randint(3, ref.config.vocab_size, size=H.GEN_PROMPT)
    model = og.Model(str(pkg.path))
    adapters = og.Adapters(model)
    adapters.load(str(pkg.path / "adapter.onnx_adapter"), "adapter")
    assert genai_tokens(model, adapters, "adapter", prompt, H.GEN_NEW) == H.genai_greedy(merged.path, prompt, H.GEN_NEW)
    assert genai_tokens(model, adapters, None, prompt, H.GEN_NEW) == H.genai_greedy(plain.path, prompt, H.GEN_NEW)
