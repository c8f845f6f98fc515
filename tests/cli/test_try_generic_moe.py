"""`mobius build --try-generic` for an unregistered model_type whose config.json names experts
(num_local_experts / num_experts, num_experts_per_tok): the generic MoE decoder
(src/archs/generic_moe.h) with the experts where the checkpoint keeps them (Mixtral's
block_sparse_moe.experts.E.w1/w3/w2, Qwen3-MoE's mlp.experts.E.gate_proj/up_proj/down_proj, or
transformers 5's stacked mlp.experts.gate_up_proj / down_proj), committed only if the
prefill/decode self-check passes; the package against transformers' model of the original type.
A MoE config the decoder cannot express is refused by field."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.torch import save_file

import evaltool as E
import harness as H

TYPE = "my_moe"
CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"


def edit_config(hf: Path, drop=(), **fields) -> None:
    p = hf / "config.json"
    c = {**json.loads(p.read_text()), "model_type": TYPE, **fields}
    for k in drop:
        c.pop(k)
    p.write_text(json.dumps(c))


def save_stacked(model, hf: Path) -> None:
    """The model's own state dict (mlp.experts.gate_up_proj / down_proj, as transformers 5 holds
    them), saved without save_pretrained's conversion back to per-expert tensors."""
    hf.mkdir(parents=True)
    model.config.save_pretrained(hf)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, hf / "model.safetensors",
              metadata={"format": "pt"})


def expect_error(hf: Path, *needles: str, extra=("--try-generic",)) -> str:
    out = hf.parent / "out"
    r = H.run_mobius("build", "--config", hf, out, *extra)
    lines = r.stderr.splitlines()
    assert r.returncode == 1, f"exit {r.returncode}: {r.stderr!r}"
    assert len(lines) == 1 and lines[0].startswith("mobius: error:"), lines
    for n in needles:
        assert n in lines[0], f"{n!r} not in: {lines[0]}"
    assert not out.exists(), "the package was written"
    return lines[0]


def build_and_compare(hf: Path, model, out: Path) -> None:
    r = H.run_mobius("build", "--config", hf, out, "--try-generic")
    assert r.returncode == 0, r.stderr
    m = re.search(r"self-check passed: .*max\|delta\| (\S+) \(tolerance (\S+)\) over (\d+) tokens", r.stdout)
    assert m, r.stdout
    assert float(m.group(1)) <= float(m.group(2)) and int(m.group(3)) == 8
    assert f"built {TYPE} as the generic MoE decoder" in r.stdout

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
    print(f"{TYPE} --try-generic vs transformers {type(model).__name__}: self-check {m.group(1)}, "
          f"prefill {d_prefill:.2e}, decode {d_decode:.2e}")
    assert d_prefill <= H.TOL and d_decode <= H.TOL

    # the evaluator that ran the self-check (its TopK, ScatterElements, ... too) agrees with onnxruntime
    feeds = {"input_ids": ids, "attention_mask": mask, "position_ids": pos, **lm.empty_past(2)}
    assert E.max_rel(E.run(H.graph_path(out, "model"), feeds)["logits"][valid], got[valid]) <= 1e-5


@pytest.mark.parametrize("model_type,overrides", [
    ("mixtral", {}),                          # block_sparse_moe.experts.E.w1 / w3 / w2, renormalized top-k
    ("qwen3_moe", {"mlp_only_layers": [1]}),  # mlp.experts.E.gate_proj ..., q/k norm, a dense layer, norm_topk_prob false
])
def test_saved_moe_checkpoint_builds_and_matches_transformers(tmp_path, model_type, overrides):
    hf = tmp_path / "hf"
    model = H.write_checkpoint(model_type, overrides, hf)
    edit_config(hf)
    build_and_compare(hf, model, tmp_path / "out")


@pytest.fixture(scope="module")
def stacked(tmp_path_factory):
    """A tiny random Mixtral's own tensors (stacked experts under mlp.), model_type renamed."""
    hf = tmp_path_factory.mktemp("stacked") / "hf"
    model = H.write_checkpoint("mixtral", {}, hf.parent / "saved")
    save_stacked(model, hf)
    edit_config(hf)
    return hf, model


def copy_of(hf: Path, tmp_path: Path) -> Path:
    d = tmp_path / "case" / "hf"
    shutil.copytree(hf, d)
    return d


def test_stacked_experts_need_norm_topk_prob(stacked, tmp_path):
    """mlp.experts do not tell Mixtral's renormalized top-k from Qwen's plain one: the field is required."""
    expect_error(copy_of(stacked[0], tmp_path), "config.json", "norm_topk_prob", "renormalized")


def test_stacked_experts_build_and_match_transformers(stacked, tmp_path):
    hf = copy_of(stacked[0], tmp_path)
    edit_config(hf, norm_topk_prob=True)  # MixtralSparseMoeBlock's
    build_and_compare(hf, stacked[1], tmp_path / "out")


def config_only(tmp_path: Path, model_type: str, drop=(), **fields) -> Path:
    hf = tmp_path / "case" / "hf"
    hf.mkdir(parents=True)
    shutil.copy(CONFIGS / f"{model_type}.json", hf / "config.json")
    edit_config(hf, drop, **fields)
    return hf


@pytest.mark.parametrize("model_type,fields,needles", [
    # Qwen2-MoE's shared expert (and its sigmoid gate): not part of the generic MoE decoder
    ("qwen2_moe", {}, ("shared_expert_intermediate_size", "a shared expert", "generic MoE decoder")),
    # DeepSeek-style group-limited routing and scaled routing weights
    ("mixtral", {"n_group": 2, "topk_group": 1}, ("n_group", "group-limited routing")),
    ("mixtral", {"routed_scaling_factor": 2.5}, ("routed_scaling_factor", "other than 1")),
])
def test_moe_config_the_generic_decoder_cannot_express(tmp_path, model_type, fields, needles):
    """Refused by field before any tensor is read (the directory holds config.json only)."""
    hf = tmp_path / "case" / "hf"
    hf.mkdir(parents=True)
    shutil.copy(CONFIGS / f"{model_type}.json", hf / "config.json")
    edit_config(hf, **fields)
    expect_error(hf, "config.json", f"'{TYPE}'", *needles)


def test_without_the_flag_the_error_names_the_moe_decoder(tmp_path):
    hf = tmp_path / "case" / "hf"
    hf.mkdir(parents=True)
    shutil.copy(CONFIGS / "mixtral.json", hf / "config.json")
    edit_config(hf)
    expect_error(hf, "config.json", f"'{TYPE}'", "--try-generic builds it with the generic MoE decoder", extra=())


def test_missing_top_k_is_named(stacked, tmp_path):
    hf = copy_of(stacked[0], tmp_path)
    edit_config(hf, drop=("num_experts_per_tok",), norm_topk_prob=True)
    expect_error(hf, "config.json", "num_experts_per_tok")


def test_config_with_experts_and_a_checkpoint_without_them(tmp_path):
    """A Llama checkpoint whose config.json claims experts: no expert tensors in any layout read."""
    hf = tmp_path / "case" / "hf"
    H.write_checkpoint("llama", {}, hf)
    edit_config(hf, num_local_experts=4, num_experts_per_tok=2)
    expect_error(hf, "config.json", "num_local_experts", "block_sparse_moe.experts.E.w1")
