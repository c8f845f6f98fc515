"""`mobius build --layout hf|flat` (src/package/layout.h): the hf layout's files (graphs under onnx/
with the Hugging Face names, <graph>.onnx_data, genai_config.json pointing into onnx/, the JSON and
tokenizer files at the top), --force between the two layouts (either replaces the other; a foreign
file at the top or in onnx/ stops it, kept), `mobius info --layout hf` naming the data files with
the sizes and disk the build writes, and apply-weights keeping the layout of its package. The values
the hf packages compute are checked against transformers in tests/parity/test_layouts.py. Tiny
models: about 10 s."""

import json
import re

import onnx

import pytest

import harness as H


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    hf = tmp_path_factory.mktemp("layout") / "hf"
    H.write_checkpoint("llama", {}, hf)
    (hf / "tokenizer.json").write_text('{"version": "1.0"}')
    return hf


def test_hf_layout_files(tiny, tmp_path):
    H.build(tiny, tmp_path / "out", "--layout", "hf")
    out = tmp_path / "out"
    assert H.package_files(out) == {"onnx/model.onnx", "onnx/model.onnx_data", "genai_config.json", "config.json",
                                    "generation_config.json", "tokenizer.json"}
    assert json.loads((out / "genai_config.json").read_text())["model"]["decoder"]["filename"] == "onnx/model.onnx"
    # config.json: the checkpoint's, with what transformers.js needs to fetch model.onnx_data and to
    # pick model.onnx (dtype fp32: the file name without a suffix)
    config = json.loads((out / "config.json").read_text())
    assert config.pop("transformers.js_config") == {"use_external_data_format": True, "dtype": "fp32"}
    assert config == json.loads((tiny / "config.json").read_text())
    for f in ("generation_config.json", "tokenizer.json"):
        assert (out / f).read_bytes() == (tiny / f).read_bytes(), f
    # the graph and its weights are the flat layout's; only the data file's name differs
    H.build(tiny, tmp_path / "flat", "--layout", "flat")
    assert (out / "onnx/model.onnx_data").read_bytes() == (tmp_path / "flat/model.onnx.data").read_bytes()
    flat_graph = (tmp_path / "flat/model.onnx").read_bytes()
    assert (out / "onnx/model.onnx").read_bytes() == flat_graph.replace(b"model.onnx.data", b"model.onnx_data")


def test_force_between_layouts(tiny, tmp_path):
    out = tmp_path / "out"
    H.build(tiny, out, "--layout", "flat")
    H.build(tiny, out, "--layout", "hf", "--force")
    assert not (out / "model.onnx").exists() and (out / "onnx/model.onnx").is_file()
    H.build(tiny, out, "--layout", "flat", "--force")
    assert not (out / "onnx").exists() and (out / "model.onnx").is_file()
    H.build(tiny, out, "--layout", "hf", "--force")
    (out / "onnx" / "notes.txt").write_text("mine")
    for layout in ("hf", "flat"):
        r = H.run_mobius("build", tiny, out, "--layout", layout, "--force")
        assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "--force replaces only a previous mobius package" in r.stderr, r.stderr
    assert (out / "onnx" / "notes.txt").read_text() == "mine"
    r = H.run_mobius("build", tiny, tmp_path / "x", "--layout", "nested")
    assert r.returncode != 0 and "--layout" in r.stderr, r.stderr


def test_info_names_the_hf_data_files(tmp_path):
    import seq2seq_harness as S
    row = next(r for r in S.ROWS if r.model_type == "t5")
    S.write_checkpoint(row, tmp_path / "hf")
    r = H.run_mobius("info", tmp_path / "hf", "--layout", "hf")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("build "))
    disk = int(re.search(r"^disk: +the package takes about [\d.]+ MiB \((\d+) bytes;", r.stdout, re.M).group(1))
    H.build(tmp_path / "hf", tmp_path / "out", "--layout", "hf")
    sizes = re.findall(r"(onnx/\w+\.onnx_data) ([\d.]+) MiB", line)
    assert [name for name, _ in sizes] == ["onnx/encoder_model.onnx_data", "onnx/decoder_model_merged.onnx_data"], line
    for name, size in sizes:
        assert float(size) == round((tmp_path / "out" / name).stat().st_size / 2**20, 1), line
    written = sum((tmp_path / "out" / f).stat().st_size for f in H.graph_files(("encoder", "decoder"), "hf"))
    copied = sum((tmp_path / "out" / f).stat().st_size for f in H.package_files(tmp_path / "out")
                 if not f.startswith("onnx/"))
    assert written <= disk <= written + copied, (disk, written, copied)


def test_apply_weights_keeps_the_hf_layout(tiny, tmp_path):
    H.build(tiny, tmp_path / "nw", "--layout", "hf", "--no-weights")
    r = H.run_mobius("apply-weights", tmp_path / "nw", tiny, tmp_path / "aw")
    assert r.returncode == 0, r.stderr
    H.build(tiny, tmp_path / "direct", "--layout", "hf")
    assert H.package_files(tmp_path / "aw") == H.package_files(tmp_path / "direct")
    for f in H.graph_files(("model",), "hf"):
        assert (tmp_path / "aw" / f).read_bytes() == (tmp_path / "direct" / f).read_bytes(), f


def test_apply_weights_refuses_a_multi_graph_hf_package(tmp_path):
    import seq2seq_harness as S
    row = next(r for r in S.ROWS if r.model_type == "t5")
    S.write_checkpoint(row, tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "nw", "--layout", "hf", "--no-weights")
    r = H.run_mobius("apply-weights", tmp_path / "nw", tmp_path / "hf", tmp_path / "aw")
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "a multi-graph package" in r.stderr and not (tmp_path / "aw").exists(), r.stderr


def test_variants_side_by_side(tiny, tmp_path):
    """--variant (README "The CLI"): each dtype's graph files under the Hugging Face variant name,
    added into the previous package beside the others, each the same graph and weights as the build
    without --variant (only the data file's name differs); the package's other files stay."""
    out = tmp_path / "out"
    H.build(tiny, out, "--variant", "--precision", "int4")  # the first variant: the whole package
    assert json.loads((out / "config.json").read_text())["transformers.js_config"]["dtype"] == "q4"
    genai = (out / "genai_config.json").read_bytes()
    assert json.loads(genai)["model"]["decoder"]["filename"] == "onnx/model_q4.onnx"
    for flags, suffix in ((("--dtype", "f16"), "_fp16"), ((), ""), (("--precision", "int8"), "_quantized"),
                          (("--precision", "int4", "--dtype", "f16"), "_q4f16")):
        H.build(tiny, out, "--variant", *flags)
        single = tmp_path / f"single{suffix}"
        H.build(tiny, single, *flags)
        variant = onnx.load(out / f"onnx/model{suffix}.onnx", load_external_data=False)
        for init in variant.graph.initializer:  # the one difference: where the weights lie
            for e in init.external_data:
                if e.key == "location":
                    assert e.value == f"model{suffix}.onnx_data", (suffix, e.value)
                    e.value = "model.onnx_data"
        assert variant.SerializeToString() == (single / "onnx/model.onnx").read_bytes(), suffix
        assert (out / f"onnx/model{suffix}.onnx_data").read_bytes() == (single / "onnx/model.onnx_data").read_bytes()
    assert {f for f in H.package_files(out) if f.startswith("onnx/")} == {
        f"onnx/model{s}.onnx{d}" for s in ("", "_fp16", "_q4", "_q4f16", "_quantized") for d in ("", "_data")}
    assert (out / "genai_config.json").read_bytes() == genai  # the first variant's, kept
    r = H.run_mobius("build", tiny, out, "--variant", "--dtype", "f16")
    assert r.returncode == 1 and "already holds this variant (use --force" in r.stderr, r.stderr
    assert H.run_mobius("build", tiny, out, "--variant", "--dtype", "f16", "--force").returncode == 0
    r = H.run_mobius("build", tiny, tmp_path / "bf16", "--variant", "--dtype", "bf16")
    assert r.returncode == 1 and "--variant: transformers.js names no variant for --dtype bf16" in r.stderr, r.stderr
    r = H.run_mobius("build", tiny, out, "--variant", "--dtype", "f16", "--force", "--layout", "flat")
    assert r.returncode == 1 and "--variant adds into a package of the hf layout" in r.stderr, r.stderr
    other = tmp_path / "other"
    H.write_checkpoint("llama", {"vocab_size": 300}, other)  # another model into this package
    r = H.run_mobius("build", other, out, "--variant", "--dtype", "f16", "--force")
    assert r.returncode == 1 and "config.json differs from" in r.stderr, r.stderr
    (out / "notes.txt").write_text("mine")
    r = H.run_mobius("build", tiny, out, "--variant", "--dtype", "f16", "--force")
    assert r.returncode == 1 and "only a previous mobius package" in r.stderr, r.stderr
    assert (out / "notes.txt").read_text() == "mine"
