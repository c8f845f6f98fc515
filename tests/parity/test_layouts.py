"""The two package layouts (src/package/layout.h) through each task family's whole parity check
(transformers in float64 vs onnxruntime, and onnxruntime-genai where it runs the family: decoder,
Whisper, Qwen2.5-VL, Phi-4-multimodal). Every parity row builds the default hf layout (graphs under
onnx/ with the Hugging Face file names, external data as <graph>.onnx_data); here the rows are
built with `--layout flat` (<graph>.onnx + <graph>.onnx.data at the top, as onnxruntime-genai's
model builder writes them), and a decoder and an encoder-decoder row in both, each package checked
file by file: its graphs where the layout puts them, each graph's initializers in its own data
file, and genai_config.json naming those graph files."""

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

LAYOUT = {"hf": ("--layout", "hf"), "flat": ("--layout", "flat")}
FLAT = LAYOUT["flat"]


def layout_problems(out_dir: Path, roles, layout: str) -> list[str]:
    """The package in out_dir is in `layout`: it holds exactly the graphs of `roles` with that
    layout's names (harness.graph_files), each graph's initializers point into its own data file,
    and every filename genai_config.json names (when there is one) is one of those graphs."""
    if H.layout(out_dir) != layout:
        return [f"{out_dir}: a package in the {H.layout(out_dir)} layout, expected {layout}"]
    problems = []
    graphs = {f for f in H.package_files(out_dir) if f.endswith((".onnx", ".onnx_data", ".onnx.data"))}
    if graphs != H.graph_files(roles, layout):
        problems.append(f"graph files {sorted(graphs)}, expected {sorted(H.graph_files(roles, layout))}")
    for role in roles:
        model = onnx.load(str(H.graph_path(out_dir, role)), load_external_data=False)
        locations = {e.value for t in model.graph.initializer for e in t.external_data if e.key == "location"}
        want = {Path(H.data_file(role, layout)).name}
        if locations != want:
            problems.append(f"{role}: external data in {sorted(locations)}, expected {sorted(want)}")
    genai = out_dir / "genai_config.json"
    if genai.is_file():
        sections = json.loads(genai.read_text())["model"]
        named = {k: v["filename"] for k, v in sections.items() if isinstance(v, dict) and v.get("filename")}
        files = {H.graph_file(r, layout) for r in roles}
        problems += [f"genai_config.json {k}.filename {f!r} is not one of {sorted(files)}"
                     for k, f in named.items() if f not in files]
        if not named:
            problems.append("genai_config.json names no graph file")
    return problems


@pytest.mark.parametrize("layout", ["hf", "flat"])
def test_decoder(layout, tmp_path):
    model_type, name, overrides = next(r for r in H.rows() if r[:2] == ("llama", "default"))
    row: dict = {}
    failures = D.run_parity(model_type, overrides, tmp_path, row, LAYOUT[layout])
    failures += layout_problems(tmp_path / "onnx", ("model",), layout)
    assert row.get("genai", "n/a") != "n/a", "onnxruntime-genai did not run the package"
    assert not failures, "\n".join(failures)


def test_encoder(tmp_path):
    model_type, name, overrides = next(r for r in H.encoder_rows() if r[:2] == ("bert", "default"))
    failures = E.run_encoder_parity(model_type, overrides, tmp_path, {}, FLAT)
    failures += layout_problems(tmp_path / "onnx", ("model",), "flat")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("model_type,variant,layout", [("t5", "v1.1-untied", "hf"), ("t5", "v1.1-untied", "flat"),
                                                       ("bart", "scaled-untied", "flat")])
def test_seq2seq(model_type, variant, layout, tmp_path):
    row = next(r for r in S.ROWS if (r.model_type, r.variant) == (model_type, variant))
    failures = S.run(row, tmp_path, {}, LAYOUT[layout])
    failures += layout_problems(tmp_path / "onnx", ("encoder", "decoder"), layout)
    assert not failures, "\n".join(failures)


def test_whisper(tmp_path):
    rec: dict = {}
    failures = W.run(W.ROWS[0], tmp_path, rec, FLAT)
    failures += layout_problems(tmp_path / "onnx", ("encoder", "decoder"), "flat")
    assert rec.get("genai", "n/a") != "n/a", "onnxruntime-genai's whisper pipeline did not run"
    assert not failures, "\n".join(failures)


def test_vlm(tmp_path):
    rec: dict = {}
    failures = V.run(V.base_row("qwen2_5_vl"), tmp_path, rec, FLAT)
    failures += layout_problems(tmp_path / "onnx", ("vision", "embedding", "decoder"), "flat")
    assert rec.get("genai", "n/a") != "n/a", "onnxruntime-genai's multimodal pipeline did not run"
    assert not failures, "\n".join(failures)


def test_phi4mm(tmp_path):
    """Four graphs, the speech graph as speech.onnx: onnxruntime's parity on the base row, and onnxruntime-genai's phi4mm pipeline (image and audio
    prompts, phi4mm_harness.check_genai) on its own package."""
    failures = V.run(V.base_row("phi4_multimodal"), tmp_path / "ort", {}, FLAT)
    failures += phi4mm_harness.check_genai(tmp_path / "genai", {}, FLAT)
    for work in (tmp_path / "ort", tmp_path / "genai"):
        failures += layout_problems(work / "onnx", ("vision", "speech", "embedding", "decoder"), "flat")
    assert not failures, "\n".join(failures)
