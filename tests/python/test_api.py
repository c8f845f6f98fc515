"""The Python API (python/mobius_cpp, docs/python.md) against transformers, onnxruntime and the CLI:
build's package equals the CLI's byte for byte and its logits equal transformers'; the I/O
contract, progress, Ctrl-C, the error family, inspect and list_models. Tiny models: about 15 s."""

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch
from safetensors.numpy import load_file

import harness as H
import mobius_cpp

REPO = Path(__file__).resolve().parents[2]


def test_imported_module_is_the_one_under_test():
    """The build tree's module, or with MOBIUS_WHEEL=1 the wheel's, and its `mobius` on PATH."""
    where = Path(mobius_cpp._core.__file__).resolve()  # the .py files are links in the build tree
    if os.environ.get("MOBIUS_WHEEL") == "1":
        assert Path(sys.prefix).resolve() in where.parents, where
        cli = Path(sys.prefix) / "bin" / "mobius"
        version = re.search(r"project\(mobius VERSION (\S+)", (REPO / "CMakeLists.txt").read_text()).group(1)
        r = subprocess.run([cli, "--version"], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.strip() == f"mobius {version}", r.stdout + r.stderr
        assert mobius_cpp.__version__ == version
    else:
        assert (REPO / "build" / "python").resolve() in where.parents, where


def test_build_equals_cli_and_transformers(tiny, tmp_path):
    """One implementation: the same options give the CLI's files byte for byte; the logits are
    transformers' (prefill of a padded batch, then a decode step through the cache)."""
    pkg = mobius_cpp.build(tiny, tmp_path / "py", ep="cpu", runtime="none")
    H.build(tiny, tmp_path / "cli", "--ep", "cpu", "--runtime", "none")
    for name in ("onnx/model.onnx", "onnx/model.onnx_data"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert pkg.files == ["onnx/model.onnx", "onnx/model.onnx_data"] and pkg.graphs == ["model"]
    assert (pkg.model_type, pkg.task) == ("llama", "text-generation")
    tensors = load_file(tiny / "model.safetensors")
    assert pkg.unused_tensors == [] and pkg.warnings == []
    assert dict(pkg.passes)["group_query_attention"] == 2 and pkg.timings["build"] > 0
    assert pkg.peak_memory_bytes > sum(t.nbytes for t in tensors.values())

    model = H.float64(H.load_reference(tiny))
    lm = H.OnnxLM(H.graph_path(pkg.path, "model"), model.config, position_ids_optional=True)  # cpu: from the mask
    assert lm.io_problems() == []
    ids, mask, pos = H.prefill_batch(model.config.vocab_size)
    got, past = lm(ids, mask, pos)
    want, cache = H.hf_forward(model, ids, mask, pos)
    valid = mask.astype(bool)  # the left padding's logits are not compared
    assert H.max_abs(got[valid], want[valid]) <= H.TOL
    step = np.array([[3], [5]])
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    got2, _ = lm(step, mask2, pos[:, -1:] + 1, past)
    want2, _ = H.hf_forward(model, step, mask2, pos[:, -1:] + 1, cache)
    assert H.max_abs(got2, want2) <= H.TOL


def test_flat_layout(tiny, tmp_path):
    """layout="flat" is the CLI's --layout flat byte for byte; Package reads the graphs at the top
    (by role), its session runs them and gives transformers' logits; inspect(layout="flat") names
    the data file there. The default hf layout's files are in test_build_equals_cli_and_transformers."""
    pkg = mobius_cpp.build(tiny, tmp_path / "py", runtime="none", layout="flat")
    H.build(tiny, tmp_path / "cli", "--runtime", "none", "--layout", "flat")
    assert pkg.files == ["model.onnx", "model.onnx.data"] == sorted(H.package_files(tmp_path / "cli"))
    for name in pkg.files:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert (pkg.layout, pkg.graphs, pkg.graph_files) == ("flat", ["model"], {"model": "model.onnx"})
    assert mobius_cpp.Package.open(tmp_path / "cli").graph_files == pkg.graph_files
    for layout in ("hf", "flat"):  # the tests' table is the package layer's
        assert {r: mobius_cpp._core.graph_files(layout)[r] for r in H.HF_GRAPH_NAMES} == \
               {r: H.graph_file(r, layout) for r in H.HF_GRAPH_NAMES}
    model = H.float64(H.load_reference(tiny))
    ids, mask, pos = H.prefill_batch(model.config.vocab_size)
    lm = H.OnnxLM(H.graph_path(pkg.path), model.config)
    got, _ = lm(ids, mask, pos)
    want, _ = H.hf_forward(model, ids, mask, pos)
    valid = mask.astype(bool)
    assert H.max_abs(got[valid], want[valid]) <= H.TOL
    assert [i.name for i in pkg.session().get_inputs()] == [i.name for i in lm.sess.get_inputs()]
    assert list(mobius_cpp.inspect(tiny, layout="flat").data_files) == ["model.onnx.data"]


def test_builder_spellings(tiny, tmp_path):
    """The options take the CLI's spellings, the ORT GenAI model builder's too (driver/option_words.h):
    ep="CPU" / "CPUExecutionProvider", dtype="fp16", precision="FP16" (the builder's precision of
    the whole model: the dtype), layout="HF"; each package equals the one built with mobius' words."""
    want = mobius_cpp.build(tiny, tmp_path / "want", ep="cpu", dtype="f16", runtime="none")
    for i, options in enumerate((dict(ep="CPU", dtype="fp16"), dict(ep="CPUExecutionProvider", precision="FP16"),
                                 dict(ep="Cpu", dtype="float16", layout="HF"))):
        got = mobius_cpp.build(tiny, tmp_path / f"got{i}", runtime="none", **options)
        assert got.files == want.files, options
        for f in want.files:
            assert (got.path / f).read_bytes() == (want.path / f).read_bytes(), (options, f)
    assert mobius_cpp.inspect(tiny, ep="CUDAExecutionProvider", precision="INT4").data_files == \
           mobius_cpp.inspect(tiny, ep="cuda", precision="int4").data_files


def test_io_contract_and_session(tiny, tmp_path):
    """inputs/outputs/metadata are the written model's (as onnxruntime reads them); session() runs it."""
    pkg = mobius_cpp.build(tiny, tmp_path / "out", dtype="f16")
    sess = pkg.session()
    ort_type = {"FLOAT": "tensor(float)", "FLOAT16": "tensor(float16)", "INT64": "tensor(int64)"}
    for ours, theirs in ((pkg.inputs, sess.get_inputs()), (pkg.outputs, sess.get_outputs())):
        assert [(v.name, ort_type[v.dtype], list(v.shape)) for v in ours] == \
               [(v.name, v.type, v.shape) for v in theirs]
    assert sess.get_modelmeta().custom_metadata_map == pkg.metadata
    assert pkg.metadata["model_type"] == "llama"
    # ort-genai runtime: the config and genai_config.json are part of the files
    assert {"config.json", "genai_config.json", "onnx/model.onnx", "onnx/model.onnx_data"} <= set(pkg.files)
    assert mobius_cpp.Package.open(pkg.path).inputs == pkg.inputs


def test_multi_graph_package(tmp_path):
    """A two-graph package (T5): build returns it, each graph's I/O is onnxruntime's, inputs/outputs
    are the decoder's, and session() asks which graph."""
    import seq2seq_harness as S
    S.write_checkpoint(next(r for r in S.ROWS if r.model_type == "t5"), tmp_path / "hf")
    pkg = mobius_cpp.build(tmp_path / "hf", tmp_path / "out")
    assert pkg.graphs == ["decoder", "encoder"] and pkg.task == "text2text-generation"
    for graph in pkg.graphs:
        sess = pkg.session(graph=graph)
        assert [v.name for v in pkg.graph_io[graph]["inputs"]] == [v.name for v in sess.get_inputs()]
        assert [v.name for v in pkg.graph_io[graph]["outputs"]] == [v.name for v in sess.get_outputs()]
    assert pkg.inputs == pkg.graph_io["decoder"]["inputs"]
    with pytest.raises(ValueError, match="pass graph="):
        pkg.session()
    with pytest.raises(ValueError, match="no graph 'model'"):
        pkg.session(graph="model")
    assert mobius_cpp.Package.open(pkg.path).graph_io == pkg.graph_io


def test_task_is_the_cli_option(tmp_path):
    """task= is --task: a BertForTokenClassification checkpoint builds its head by default (logits),
    task="feature-extraction" the encoder (last_hidden_state), a task the model lacks raises."""
    import encoder_harness as E
    auto = E.HEAD_CLASSES["token-classification"][0]
    H.write_checkpoint("bert", {"_task": "token-classification"}, tmp_path / "hf", auto)
    pkg = mobius_cpp.build(tmp_path / "hf", tmp_path / "head")
    assert pkg.task == "token-classification" and [v.name for v in pkg.outputs] == ["logits"]
    pkg = mobius_cpp.build(tmp_path / "hf", tmp_path / "encoder", task="feature-extraction")
    assert pkg.task == "feature-extraction" and [v.name for v in pkg.outputs] == ["last_hidden_state"]
    with pytest.raises(mobius_cpp.MobiusError, match="--task summarization: bert has no such head"):
        mobius_cpp.build(tmp_path / "hf", tmp_path / "bad", task="summarization")


def test_progress_reports_every_byte(tiny, tmp_path):
    calls = []
    mobius_cpp.build(tiny, tmp_path / "out", progress=lambda label, done, total: calls.append((label, done, total)))
    size = H.data_path(tmp_path / "out").stat().st_size
    assert len(calls) > 1 and {c[0] for c in calls} == {"writing weights"}
    assert [c[1] for c in calls] == sorted(c[1] for c in calls)
    assert calls[-1][1:] == (size, size)


def test_ctrl_c_stops_cleanly(tiny, tmp_path):
    """SIGINT during the weights (at the first chunk) raises KeyboardInterrupt before another chunk
    is written and leaves nothing: no output directory, no temporary sibling. The signal goes to
    the main thread (pthread_kill): os.kill lets the kernel hand it to any of the writer's threads,
    whose handler may run only after the last chunk of a tiny model (a race the test must not have)."""
    seen = []

    def interrupt(label, done, total):
        seen.append(done)
        if len(seen) == 1:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    # Python's own SIGINT handler, as in a user's process: an earlier test in the same pytest-xdist
    # worker can leave SIGINT ignored (CI: SIG_IGN at every progress call, no KeyboardInterrupt)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            mobius_cpp.build(tiny, tmp_path / "out", progress=interrupt)
            pytest.fail(f"no KeyboardInterrupt; progress calls at {seen} bytes")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(seen) == 1
    assert list(tmp_path.iterdir()) == []
    # a callback's own exception stops the build the same way
    with pytest.raises(ZeroDivisionError):
        mobius_cpp.build(tiny, tmp_path / "out", progress=lambda *a: 1 / 0)
    assert list(tmp_path.iterdir()) == []


def cli_error(*args) -> str:
    r = H.run_mobius(*args)
    assert r.returncode == 1 and r.stderr.startswith("mobius: error: "), r.stderr
    return r.stderr.strip()[len("mobius: error: "):]


def test_errors_are_the_cli_line_and_builtin(tiny, tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as e:
        mobius_cpp.build(missing, tmp_path / "out")
    assert isinstance(e.value, mobius_cpp.MobiusError) and e.value.file == str(missing)
    assert str(e.value) == cli_error("build", "--config", missing, tmp_path / "out")

    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError) as e:
        mobius_cpp.build(tiny, tmp_path / "full")
    assert e.value.file == str(tmp_path / "full") and e.value.field is None and e.value.tensor is None
    assert str(e.value) == cli_error("build", "--config", tiny, tmp_path / "full")
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"

    bad = tmp_path / "bad"
    bad.mkdir()
    cfg = (tiny / "config.json").read_text()
    (bad / "config.json").write_text(cfg.replace('"num_attention_heads": 4', '"num_attention_heads": "four"'))
    with pytest.raises(ValueError) as e:
        mobius_cpp.build(bad, tmp_path / "out", weights=False)
    assert e.value.field == "num_attention_heads" and e.value.file == str(bad / "config.json")
    assert str(e.value) == cli_error("build", "--config", bad, tmp_path / "out", "--no-weights")

    tensors = load_file(tiny / "model.safetensors")
    (bad / "config.json").write_text(cfg)
    from safetensors.numpy import save_file
    save_file({k: v.astype(np.float32)[..., :-1] if k == "model.norm.weight" else v for k, v in tensors.items()},
              bad / "model.safetensors")
    with pytest.raises(ValueError) as e:
        mobius_cpp.build(bad, tmp_path / "out")
    assert e.value.tensor == "model.norm.weight" and e.value.file == str(bad / "model.safetensors")
    assert str(e.value) == cli_error("build", "--config", bad, tmp_path / "out")

    with pytest.raises(ValueError) as e:
        mobius_cpp.build(tiny, tmp_path / "out", ep="cpu", precision="int4", block_size=48)
    assert str(e.value) == "--block-size 48: expected 32, 64 or 128"  # the CLI's parser refuses it first
    assert e.value.file is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "full"]  # nothing written


def test_inspect_is_mobius_info(tiny):
    info = mobius_cpp.inspect(tiny, ep="cpu", precision="int4")
    tensors = load_file(tiny / "model.safetensors")
    assert (info.model_type, info.task, info.format) == ("llama", "text-generation", "safetensors")
    assert info.parameters == sum(t.size for t in tensors.values())
    assert info.stored["FLOAT"]["tensors"] == len(tensors)
    out = H.run_mobius("info", tiny, "--ep", "cpu", "--precision", "int4").stdout
    assert list(info.data_files) == ["onnx/model.onnx_data"]
    assert f"{info.parameters:,}" in out and \
        f"onnx/model.onnx_data {info.data_files['onnx/model.onnx_data'] / 2**20:.1f} MiB" in out
    assert f"the package takes about {info.disk_bytes / 2**20:.1f} MiB ({info.disk_bytes} bytes;" in out
    assert [e["ep"] for e in info.eps] == ["default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"]


def test_list_models_is_mobius_list_models():
    rows = H.run_mobius("list", "models").stdout.splitlines()[1:]
    assert [m.model_type for m in mobius_cpp.list_models()] == [r.split()[0] for r in rows]
    llama = next(m for m in mobius_cpp.list_models() if m.model_type == "llama")
    assert (llama.task, llama.genai_type) == ("text-generation", "llama")
    by_type = {m.model_type: m for m in mobius_cpp.list_models()}
    assert by_type["gpt_oss"].genai_type == "gptoss" and by_type["gpt2"].genai_type == "decoder"
    assert by_type["t5"].genai_type == "" and by_type["bert"].genai_type == ""


def test_list_components_is_mobius_list_components():
    rows = [r.split() for r in H.run_mobius("list", "components").stdout.splitlines()[1:]]
    assert [(c.class_name, c.family, c.task) for c in mobius_cpp.list_components()] == [tuple(r) for r in rows]
    assert "UNet2DConditionModel" in {c.class_name for c in mobius_cpp.list_components()}


def test_bad_option_values_raise_mobius_errors(tiny, tmp_path):
    """An option value the core refuses (a new-user trial found _core.Error escaping here) is a
    MobiusValueError like every other refusal, and nothing is written."""
    for options in (dict(layout="nested"), dict(dtype="fp8"), dict(ep="tpu"), dict(precision="int3"),
                    dict(runtime="genai")):
        with pytest.raises(mobius_cpp.MobiusValueError):
            mobius_cpp.build(tiny, tmp_path / "out", **options)
        assert not (tmp_path / "out").exists()


def test_inspect_takes_the_runtime_and_task(tiny):
    """inspect(runtime=) counts the runtime's files into the disk need (none: the ONNX files only);
    inspect(task=) is --task (a decoder has no head: refused as the build refuses it)."""
    genai, bare = mobius_cpp.inspect(tiny), mobius_cpp.inspect(tiny, runtime="none")
    assert genai.data_files == bare.data_files and genai.disk_bytes > bare.disk_bytes
    with pytest.raises(mobius_cpp.MobiusError):
        mobius_cpp.inspect(tiny, task="fill-mask")
