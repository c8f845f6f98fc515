"""apply-weights (src/driver/apply_weights.h): a checkpoint bound into a --no-weights package
equals a direct build byte for byte (every file), from Python and from the CLI; a checkpoint of
another config, and a package not built by mobius, are refused with nothing written. About 5 s."""

from pathlib import Path

import onnx
import pytest

import harness as H
import mobius_cpp
import seq2seq_harness as S

OPTIONS = ("--ep", "cpu", "--precision", "int4", "--block-size", "64", "--dtype", "f16")


def files(d: Path) -> dict:
    return {f: (d / f).read_bytes() for f in sorted(H.package_files(d))}


def test_apply_weights_equals_direct_build(tmp_path):
    H.write_checkpoint("llama", {}, tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "graph", "--no-weights", *OPTIONS)
    H.build(tmp_path / "hf", tmp_path / "direct", *OPTIONS)
    pkg = mobius_cpp.apply_weights(tmp_path / "graph", tmp_path / "hf", tmp_path / "py")
    r = H.run_mobius("apply-weights", tmp_path / "graph", tmp_path / "hf", tmp_path / "cli")
    assert r.returncode == 0, r.stderr
    direct = files(tmp_path / "direct")
    assert files(tmp_path / "py") == direct and files(tmp_path / "cli") == direct
    assert direct["onnx/model.onnx_data"] != files(tmp_path / "graph")["onnx/model.onnx_data"]  # the graph had zeros
    assert pkg.num_weights > 0 and pkg.quantize["bits"] == 4 and pkg.quantize["block_size"] == 64


def test_apply_weights_refuses_another_graph(tmp_path):
    H.write_checkpoint("llama", {}, tmp_path / "hf")
    H.write_checkpoint("llama", {"num_hidden_layers": 3}, tmp_path / "deeper")
    H.build(tmp_path / "hf", tmp_path / "graph", "--no-weights")
    with pytest.raises(ValueError) as e:
        mobius_cpp.apply_weights(tmp_path / "graph", tmp_path / "deeper", tmp_path / "out")
    assert str(e.value).startswith(f"{H.graph_path(tmp_path / 'graph')}: the checkpoint's config gives another graph")
    r = H.run_mobius("apply-weights", tmp_path / "graph", tmp_path / "deeper", tmp_path / "out")
    assert r.returncode == 1 and r.stderr == f"mobius: error: {e.value}\n"
    assert not (tmp_path / "out").exists()

    # a model.onnx without the build options (not built by this mobius)
    model = onnx.load(H.graph_path(tmp_path / "graph", "model"), load_external_data=False)
    del model.metadata_props[:]
    (tmp_path / "foreign").mkdir()
    onnx.save(model, H.graph_path(tmp_path / "foreign", "model"))
    with pytest.raises(ValueError, match=r"no 'mobius.build_options' metadata: not built by this mobius"):
        mobius_cpp.apply_weights(tmp_path / "foreign", tmp_path / "hf", tmp_path / "out")
    with pytest.raises(FileNotFoundError):
        mobius_cpp.apply_weights(tmp_path / "nowhere", tmp_path / "hf", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_another_graph_is_refused_before_a_weight_is_written(tmp_path):
    """The graph check comes first (issue 25: 62 % of the weights were written before the refusal):
    the progress callback, called between written chunks of weights, is never called; a checkpoint
    that fits calls it."""
    H.write_checkpoint("llama", {}, tmp_path / "hf")
    H.write_checkpoint("llama", {"intermediate_size": 96}, tmp_path / "wider")
    H.build(tmp_path / "hf", tmp_path / "graph", "--no-weights")
    calls = []
    with pytest.raises(ValueError, match="the checkpoint's config gives another graph"):
        mobius_cpp.apply_weights(tmp_path / "graph", tmp_path / "wider", tmp_path / "out",
                                 progress=lambda *a: calls.append(a))
    assert calls == [] and sorted(p.name for p in tmp_path.iterdir()) == ["graph", "hf", "wider"]
    mobius_cpp.apply_weights(tmp_path / "graph", tmp_path / "hf", tmp_path / "out", progress=lambda *a: calls.append(a))
    assert calls and calls[-1][1] == calls[-1][2] == H.data_path(tmp_path / "out").stat().st_size


def test_apply_weights_names_a_checkpoint_of_another_task(tmp_path):
    """A checkpoint whose type builds several graphs (an encoder-decoder) into a decoder package: the
    error names the checkpoint, its type and what it builds, not the package (a new-user trial
    found "apply-weights takes a single-graph package" here); nothing written."""
    H.write_checkpoint("llama", {}, tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "graph", "--no-weights")
    S.write_checkpoint(next(r for r in S.ROWS if r.model_type == "t5"), tmp_path / "t5")
    r = H.run_mobius("apply-weights", tmp_path / "graph", tmp_path / "t5", tmp_path / "out")
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"{tmp_path / 't5'}: a t5 checkpoint (text2text-generation) builds 2 graphs" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()
