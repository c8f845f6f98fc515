"""The Hugging Face package layout (`mobius build --layout hf`, src/package/layout.h): one row per
task family through that family's whole parity check (transformers in float64 vs onnxruntime, and
onnxruntime-genai where it runs the family: decoder, Whisper, Qwen2.5-VL, Phi-4-multimodal) with the package's graphs
under onnx/ with the Hugging Face file names and their external data as <graph>.onnx_data, and
genai_config.json naming those files."""

import json
from pathlib import Path

import onnx
import pytest

import decoder_harness as D
import encoder_harness as E
import harness as H
import phi4mm_harness
import seq2seq_harness as S
import speech_harness as W
import vlm_harness as V

HF = ("--layout", "hf")


def layout_problems(out_dir: Path, roles) -> list[str]:
    """The package in out_dir is in the hf layout: onnx/ holds exactly the graphs of `roles` with
    their Hugging Face names, each graph's initializers point into its own <graph>.onnx_data, and
    every filename genai_config.json names (when there is one) is one of those graphs."""
    if H.layout(out_dir) != "hf":
        return [f"{out_dir}: no onnx/ folder"]
    problems = []
    in_onnx = {f for f in H.package_files(out_dir) if f.startswith("onnx/")}
    if in_onnx != H.graph_files(roles, "hf"):
        problems.append(f"onnx/ holds {sorted(in_onnx)}, expected {sorted(H.graph_files(roles, 'hf'))}")
    for role in roles:
        model = onnx.load(str(H.graph_path(out_dir, role)), load_external_data=False)
        locations = {e.value for t in model.graph.initializer for e in t.external_data if e.key == "location"}
        want = {Path(H.data_file(role, "hf")).name}
        if locations != want:
            problems.append(f"{role}: external data in {sorted(locations)}, expected {sorted(want)}")
    genai = out_dir / "genai_config.json"
    if genai.is_file():
        sections = json.loads(genai.read_text())["model"]
        named = {k: v["filename"] for k, v in sections.items() if isinstance(v, dict) and v.get("filename")}
        graphs = {H.graph_file(r, "hf") for r in roles}
        problems += [f"genai_config.json {k}.filename {f!r} is not one of {sorted(graphs)}"
                     for k, f in named.items() if f not in graphs]
        if not named:
            problems.append("genai_config.json names no graph file")
    return problems


def test_decoder(tmp_path):
    model_type, name, overrides = next(r for r in H.rows() if r[:2] == ("llama", "default"))
    row: dict = {}
    failures = D.run_parity(model_type, overrides, tmp_path, row, HF)
    failures += layout_problems(tmp_path / "onnx", ("model",))
    assert row.get("genai", "n/a") != "n/a", "onnxruntime-genai did not run the package"
    assert not failures, "\n".join(failures)


def test_encoder(tmp_path):
    model_type, name, overrides = next(r for r in H.encoder_rows() if r[:2] == ("bert", "default"))
    failures = E.run_encoder_parity(model_type, overrides, tmp_path, {}, HF)
    failures += layout_problems(tmp_path / "onnx", ("model",))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("model_type,variant", [("t5", "v1.1-untied"), ("bart", "scaled-untied")])
def test_seq2seq(model_type, variant, tmp_path):
    row = next(r for r in S.ROWS if (r.model_type, r.variant) == (model_type, variant))
    failures = S.run(row, tmp_path, {}, HF)
    failures += layout_problems(tmp_path / "onnx", ("encoder", "decoder"))
    assert not failures, "\n".join(failures)


def test_whisper(tmp_path):
    rec: dict = {}
    failures = W.run(W.ROWS[0], tmp_path, rec, HF)
    failures += layout_problems(tmp_path / "onnx", ("encoder", "decoder"))
    assert rec.get("genai", "n/a") != "n/a", "onnxruntime-genai's whisper pipeline did not run"
    assert not failures, "\n".join(failures)


def test_vlm(tmp_path):
    rec: dict = {}
    failures = V.run(V.base_row("qwen2_5_vl"), tmp_path, rec, HF)
    failures += layout_problems(tmp_path / "onnx", ("vision", "embedding", "decoder"))
    assert rec.get("genai", "n/a") != "n/a", "onnxruntime-genai's multimodal pipeline did not run"
    assert not failures, "\n".join(failures)


def test_phi4mm(tmp_path):
    """Four graphs, the speech graph as onnx/audio_encoder.onnx (transformers.js' name for it):
    onnxruntime's parity on the base row, and onnxruntime-genai's phi4mm pipeline (image and audio
    prompts, phi4mm_harness.check_genai) on its own package."""
    failures = V.run(V.base_row("phi4_multimodal"), tmp_path / "ort", {}, HF)
    failures += phi4mm_harness.check_genai(tmp_path / "genai", {}, HF)
    for work in (tmp_path / "ort", tmp_path / "genai"):
        failures += layout_problems(work / "onnx", ("vision", "speech", "embedding", "decoder"))
    assert not failures, "\n".join(failures)
