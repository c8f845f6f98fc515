"""`mobius build --try-generic`: an unregistered model_type whose config.json describes a
Llama-like decoder is built with the generic Llama decoder, and the package is committed only if
the prefill/decode self-check passes. Without the flag the build says so; with it, a checkpoint
that is not Llama-shaped, or a package that fails the self-check, is an error that leaves
nothing behind."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper
from safetensors.torch import load_file, save_file

import evaltool as E
import harness as H

TYPE = "my_llama"


def rename(hf: Path, model_type: str = TYPE) -> None:
    p = hf / "config.json"
    p.write_text(json.dumps({**json.loads(p.read_text()), "model_type": model_type}))


@pytest.fixture(scope="module")
def renamed(tmp_path_factory):
    """A tiny random Llama saved by transformers, its model_type renamed; and the model itself."""
    hf = tmp_path_factory.mktemp("generic") / "hf"
    model = H.write_checkpoint("llama", {}, hf)
    rename(hf)
    return hf, model


def copy_of(hf: Path, tmp_path: Path) -> Path:
    d = tmp_path / "case" / "hf"
    shutil.copytree(hf, d)
    return d


def expect_error(hf: Path, *needles: str, extra=("--try-generic",)) -> str:
    """exit 1, one stderr line naming every needle, and nothing created next to the checkpoint."""
    out = hf.parent / "out"
    before = sorted(hf.parent.rglob("*"))
    r = H.run_mobius("build", "--config", hf, out, *extra)
    lines = r.stderr.splitlines()
    assert r.returncode == 1, f"exit {r.returncode}: {r.stderr!r}"
    assert len(lines) == 1 and lines[0].startswith("mobius: error:"), lines
    for n in needles:
        assert n in lines[0], f"{n!r} not in: {lines[0]}"
    assert sorted(hf.parent.rglob("*")) == before, "files were left behind"
    return lines[0]


def test_unknown_llama_like_type_suggests_try_generic(renamed, tmp_path):
    hf = copy_of(renamed[0], tmp_path)
    line = expect_error(hf, "config.json", "model_type", f"'{TYPE}'", "llama", "--try-generic", extra=())
    assert "Llama-like" in line


def test_unknown_type_that_is_not_llama_like_does_not_suggest_it(tmp_path):
    hf = tmp_path / "case" / "hf"
    H.write_checkpoint("gpt2", {}, hf)
    rename(hf, "my_gpt")
    line = expect_error(hf, "model_type", "'my_gpt'", extra=())
    assert "--try-generic" not in line
    # and with the flag: the first Llama field it lacks
    expect_error(hf, "config.json", "hidden_size", "'my_gpt'", "Llama-like")


def test_try_generic_builds_and_matches_transformers(renamed, tmp_path):
    hf, model = renamed
    out = tmp_path / "out"
    r = H.run_mobius("build", "--config", hf, out, "--try-generic")
    assert r.returncode == 0, r.stderr
    m = re.search(r"self-check passed: .*max\|delta\| (\S+) \(tolerance (\S+)\) over (\d+) tokens", r.stdout)
    assert m, r.stdout
    delta, tol = float(m.group(1)), float(m.group(2))
    print(f"self-check: max|Δ| {delta:.2e}, tolerance {tol:.2e}, {m.group(3)} tokens")
    assert delta <= tol and int(m.group(3)) == 8
    assert f"built {TYPE} as the generic Llama decoder" in r.stdout
    assert (out / "genai_config.json").is_file()
    meta = {p.key: p.value for p in onnx.load(H.graph_path(out, "model"), load_external_data=False).metadata_props}
    assert meta["model_type"] == TYPE

    # the package against transformers' LlamaForCausalLM on the same weights (the harness checks)
    lm = H.OnnxLM(H.graph_path(out, "model"), model.config)
    assert not lm.io_problems()
    ids, mask, pos = H.prefill_batch(model.config.vocab_size)
    model64 = H.float64(model)
    ref, cache = H.hf_forward(model64, ids, mask, pos)
    got, past = lm(ids, mask, pos)
    valid = mask.astype(bool)
    d_prefill = H.max_abs(got[valid], ref[valid])
    nxt = np.array([[3], [11]], np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    ref2, _ = H.hf_forward(model64, nxt, mask2, pos[:, -1:] + 1, cache)
    got2, _ = lm(nxt, mask2, pos[:, -1:] + 1, past)
    d_decode = H.max_abs(got2, ref2)
    print(f"{TYPE} --try-generic vs transformers LlamaForCausalLM: prefill {d_prefill:.2e}, decode {d_decode:.2e}")
    assert d_prefill <= H.TOL and d_decode <= H.TOL

    # the evaluator that ran the self-check agrees with onnxruntime on the same package
    feeds = {"input_ids": ids, "attention_mask": mask, "position_ids": pos, **lm.empty_past(2)}
    assert E.max_rel(E.run(H.graph_path(out, "model"), feeds)["logits"][valid], got[valid]) <= 1e-5


def test_registered_type_ignores_the_flag(tmp_path):
    hf = tmp_path / "hf"
    H.write_checkpoint("llama", {}, hf)
    r = H.run_mobius("build", "--config", hf, tmp_path / "out", "--try-generic")
    assert r.returncode == 0, r.stderr
    assert "self-check" not in r.stdout and "built llama (text-generation)" in r.stdout


@pytest.mark.parametrize("model_type,needles", [
    # Qwen3: per-head q/k RMSNorm, tensors the generic decoder does not read
    ("qwen3", ("model.safetensors", "k_norm", "not Llama-shaped")),
    # Phi-3: fused qkv_proj / gate_up_proj, so the Llama projections are missing
    ("phi3", ("model.layers.0.self_attn.q_proj.weight", "qkv_proj")),
])
def test_checkpoint_not_llama_shaped(tmp_path, model_type, needles):
    hf = tmp_path / "case" / "hf"
    H.write_checkpoint(model_type, {}, hf)
    rename(hf, "my_" + model_type)
    expect_error(hf, *needles)


@pytest.mark.parametrize("fields,needle", [
    (dict(sliding_window=16), "sliding_window"),
    (dict(layer_types=["full_attention", "sliding_attention"]), "layer_types"),
    (dict(attn_logit_softcapping=50.0), "attn_logit_softcapping"),
    (dict(final_logit_softcapping=30.0), "final_logit_softcapping"),
    (dict(residual_multiplier=0.22), "residual_multiplier"),
    (dict(logits_scaling=8.0), "logits_scaling"),
])
def test_config_mechanism_the_generic_decoder_lacks(renamed, tmp_path, fields, needle):
    """Fields no weight reveals and an 8-token self-check cannot see are refused by name."""
    hf = copy_of(renamed[0], tmp_path)
    p = hf / "config.json"
    p.write_text(json.dumps({**json.loads(p.read_text()), **fields}))
    expect_error(hf, "config.json", needle, f"'{TYPE}'", "generic Llama decoder")


def test_neutral_values_of_those_fields_are_accepted(renamed, tmp_path):
    hf = copy_of(renamed[0], tmp_path)
    p = hf / "config.json"
    p.write_text(json.dumps({**json.loads(p.read_text()), "sliding_window": 4096, "use_sliding_window": False,
                             "layer_types": ["full_attention"] * 2, "attn_logit_softcapping": None,
                             "residual_multiplier": 1.0}))
    r = H.run_mobius("build", "--config", hf, tmp_path / "out", "--try-generic")
    assert r.returncode == 0, r.stderr


def test_try_generic_refuses_f16_no_weights_and_ep_lowering(renamed, tmp_path):
    hf = copy_of(renamed[0], tmp_path)
    expect_error(hf, "--try-generic", "float32", "--dtype f32", extra=("--try-generic", "--dtype", "f16"))
    expect_error(hf, "--try-generic", "weights", extra=("--try-generic", "--no-weights"))
    # the self-check's evaluator runs the canonical graph, not an --ep lowering
    expect_error(hf, "--try-generic", "--ep default", extra=("--try-generic", "--ep", "cpu"))


def test_failing_self_check_writes_nothing(renamed, tmp_path):
    """Real weights whose logits are not finite: one lm_head row is NaN."""
    hf = copy_of(renamed[0], tmp_path)
    st = hf / "model.safetensors"
    tensors = load_file(st)
    tensors["lm_head.weight"][7] = float("nan")
    save_file(tensors, st, metadata={"format": "pt"})
    expect_error(hf, "self-check failed", f"'{TYPE}'", "not finite", "nothing was written")


def perturb_decode(src: Path, dst: Path, amount: float) -> None:
    """logits += amount * past_sequence_length: prefill unchanged, a decode step shifted."""
    m = onnx.load(src, load_external_data=False)
    g = m.graph
    logits = next(o for o in g.output if o.name == "logits")
    for n in g.node:
        n.output[:] = ["logits_clean" if o == "logits" else o for o in n.output]
    g.initializer.append(onnx.numpy_helper.from_array(np.array(amount, np.float32), "amount"))
    g.node.extend([
        helper.make_node("Shape", ["past_key_values.0.key"], ["past_shape"], start=2, end=3),
        helper.make_node("Cast", ["past_shape"], ["past_len"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["past_len", "amount"], ["shift"]),
        helper.make_node("Add", ["logits_clean", "shift"], [logits.name]),
    ])
    onnx.save(m, dst)
    data = H.data_file("model", "hf")
    shutil.copy(src.parent / Path(data).name, dst.parent / Path(data).name)


def test_self_check_sees_a_perturbed_decode_path(renamed, tmp_path):
    """The comparison runs on real numbers: a graph whose decode step is off by 7 * 1e-2 (the
    check decodes after 7 cached tokens) fails with that delta; the unchanged graph passes."""
    hf, model = renamed
    out = tmp_path / "out"
    H.build(hf, out, "--try-generic", "--runtime", "none")
    c = model.config
    layout = (c.num_hidden_layers, c.num_key_value_heads, c.hidden_size // c.num_attention_heads, c.vocab_size)
    clean = E.self_check(H.graph_path(out, "model"), *layout)
    assert clean["passed"] and clean["max_abs_delta"] <= clean["tolerance"], clean
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    perturb_decode(H.graph_path(out, "model"), H.graph_path(bad_dir, "model"), 1e-2)
    bad = E.self_check(H.graph_path(bad_dir, "model"), *layout)
    print(f"self-check: clean max|Δ| {clean['max_abs_delta']:.2e}, perturbed {bad['max_abs_delta']:.2e} "
          f"(tolerance {bad['tolerance']:.2e})")
    assert not bad["passed"] and bad["finite"]
    assert abs(bad["max_abs_delta"] - 0.07) <= 1e-5 * max(1.0, bad["logit_scale"]), bad
