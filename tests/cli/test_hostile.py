"""Hostile and careless inputs (docs/security.md): every case ends in exit 1 with one stderr line
`mobius: error: ...` naming the file and the field, tensor or path, nothing read outside the
checkpoint, nothing left behind, and no input, checkpoint or user file deleted. One class per
section: reading outside the checkpoint, losing data, hangs, crashes and runaway memory, nonsense
values, and names that would split the error line.

The GGUF cases write metadata-only files with the gguf package (the config is synthesized, and
refused, before any tensor is needed).
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import gguf
import numpy as np
import pytest

import harness as H
from test_bad_input import ST, ckpt, edit_config, expect_error, pristine, read_st, write_st  # noqa: F401

OUTSIDE = "outside-secret"


def fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


# --- reading outside the checkpoint ----------------------------------------------------------------
@pytest.mark.parametrize("target", ["../outside/model.safetensors", "/etc/passwd", "/etc/shadow"])
def test_index_naming_a_file_outside(ckpt, target):
    outside = ckpt.parent / "outside"
    outside.mkdir()
    (outside / ST).write_bytes((ckpt / ST).read_bytes())
    names = read_st(ckpt / ST)
    (ckpt / ST).rename(ckpt / "model-00001-of-00001.safetensors")
    weight_map = {k: "model-00001-of-00001.safetensors" for k in names}
    weight_map[next(iter(names))] = target
    (ckpt / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    line = expect_error(ckpt, "model.safetensors.index.json", target, ("outside the checkpoint", "'..'"))
    assert "root:" not in line


def test_shard_symlink_out_of_the_checkpoint(ckpt):
    (ckpt.parent / OUTSIDE).write_bytes((ckpt / ST).read_bytes())
    (ckpt / ST).unlink()
    (ckpt / ST).symlink_to(ckpt.parent / OUTSIDE)
    expect_error(ckpt, ST, "outside the checkpoint")


def test_tokenizer_symlink_to_etc_passwd_is_not_copied(ckpt):
    (ckpt / "tokenizer.json").symlink_to("/etc/passwd")
    line = expect_error(ckpt, "tokenizer.json", "outside the checkpoint")
    assert "root:" not in line


def test_config_symlink_out_of_the_checkpoint(ckpt):
    (ckpt.parent / OUTSIDE).write_text((ckpt / "config.json").read_text())
    (ckpt / "config.json").unlink()
    (ckpt / "config.json").symlink_to(ckpt.parent / OUTSIDE)
    expect_error(ckpt, "config.json", "outside the checkpoint")


def test_hugging_face_cache_layout_is_followed(ckpt, tmp_path):
    # models--org--name/snapshots/<rev>/<file> -> ../../blobs/<hash>: the hub's own layout builds,
    # tokenizer file included, and gives the same package as the plain directory.
    repo = tmp_path / "models--org--tiny"
    snap, blobs = repo / "snapshots" / "0123abcd", repo / "blobs"
    snap.mkdir(parents=True)
    blobs.mkdir()
    (ckpt / "tokenizer.json").write_text('{"version": "1.0"}')
    for i, f in enumerate(sorted(ckpt.iterdir())):
        (blobs / f"blob{i}").write_bytes(f.read_bytes())
        (snap / f.name).symlink_to(Path("../../blobs") / f"blob{i}")
    r = H.run_mobius("build", "--config", snap, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "tokenizer.json").read_text() == '{"version": "1.0"}'
    H.build(ckpt, tmp_path / "plain")
    assert (tmp_path / "out" / "model.onnx.data").read_bytes() == (tmp_path / "plain" / "model.onnx.data").read_bytes()


# --- losing data ------------------------------------------------------------------------------------
def test_force_output_equal_to_the_checkpoint_is_refused(ckpt):
    before = sorted(p.name for p in ckpt.iterdir())
    expect_error(ckpt, str(ckpt), "is the input", out=ckpt, extra=("--force",))
    assert sorted(p.name for p in ckpt.iterdir()) == before


def test_force_output_containing_the_checkpoint_is_refused(ckpt):
    expect_error(ckpt, "contains the input", out=ckpt.parent, extra=("--force",))
    assert (ckpt / "config.json").is_file()


def test_output_inside_the_checkpoint_is_refused(ckpt):
    expect_error(ckpt, "inside the input", out=ckpt / "onnx")


def test_force_output_dot_is_refused(ckpt):
    r = subprocess.run([str(H.mobius_bin()), "build", "--config", ".", ".", "--force"], cwd=ckpt,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.startswith("mobius: error: .: the output directory is the input")
    assert (ckpt / "config.json").is_file() and (ckpt / ST).is_file()


def test_force_replaces_only_a_previous_package(ckpt):
    out = ckpt.parent / "existing-output"
    out.mkdir()
    (out / "keep.txt").write_text("user data")
    expect_error(ckpt, "existing-output", "not empty", out=out)
    expect_error(ckpt, "existing-output", "only a previous mobius package", out=out, extra=("--force",))
    assert sorted(os.listdir(out)) == ["keep.txt"] and (out / "keep.txt").read_text() == "user data"

    (out / "keep.txt").unlink()  # an empty directory, then a previous package: replaced
    for _ in range(2):
        r = H.run_mobius("build", "--config", ckpt, out, "--force")
        assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(out)) == ["config.json", "genai_config.json", "generation_config.json", "model.onnx", "model.onnx.data"]
    assert [p.name for p in ckpt.parent.iterdir() if ".mobius-tmp" in p.name] == []


@pytest.mark.parametrize("model_type", ["qwen2_5_vl", "phi4_multimodal"])
def test_force_replaces_a_previous_multi_graph_package(model_type, tmp_path):
    """A vision-language package (vision, embedding, decoder graphs; phi4_multimodal's speech
    graph; processor_config.json, genai_config.json for the types onnxruntime-genai runs) is a
    previous mobius package: --force replaces it, and leaves nothing else behind."""
    import vlm_harness as V  # noqa: PLC0415

    hf = tmp_path / "hf"
    V.AutoConfig.for_model(model_type, **V.base_row(model_type).config).save_pretrained(hf)
    out = tmp_path / "out"
    for _ in range(2):
        r = H.run_mobius("build", "--config", hf, out, "--no-weights", "--force")
        assert r.returncode == 0, r.stderr
    names = sorted(os.listdir(out))
    graphs = {"vision", "embedding", "decoder"} | ({"speech"} if model_type == "phi4_multimodal" else set())
    assert {n.split(".")[0] for n in names if ".onnx" in n} == graphs, names
    if model_type == "qwen2_5_vl":
        assert {"genai_config.json", "processor_config.json"} <= set(names), names
    assert [p.name for p in tmp_path.iterdir() if ".mobius-tmp" in p.name] == []


def test_force_output_dir_of_the_gguf_is_refused(tmp_path):
    path = tmp_path / "models" / "m.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF")
    r = H.run_mobius("build", "--gguf", path, path.parent, "--force")
    assert r.returncode == 1 and "contains the input" in r.stderr and len(r.stderr.splitlines()) == 1
    assert path.read_bytes() == b"GGUF"


def test_interrupt_removes_the_partial_package(tmp_path):
    # A checkpoint large enough (about 100 MB of weights) that the write takes a while: SIGINT as
    # soon as the temporary directory appears.
    ckpt = tmp_path / "big"
    H.write_checkpoint("llama", {"hidden_size": 512, "intermediate_size": 2048, "vocab_size": 16384,
                                 "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8}, ckpt)
    out = tmp_path / "out"
    for sig in (signal.SIGINT, signal.SIGTERM):
        p = subprocess.Popen([str(H.mobius_bin()), "build", "--config", ckpt, out], stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not any(".mobius-tmp" in n for n in os.listdir(tmp_path)) and p.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.001)
        p.send_signal(sig)
        err = p.communicate(timeout=60)[1]
        if p.returncode == 0:  # finished before the signal: the machine was too fast for this case
            pytest.fail("the build finished before it could be interrupted; enlarge the checkpoint")
        assert p.returncode == 128 + sig, err
        assert err.splitlines() == [f"mobius: error: interrupted by signal {int(sig)}; the partial package was removed"]
        assert sorted(os.listdir(tmp_path)) == ["big"]


# --- hangs ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["config.json", ST, "generation_config.json", "tokenizer.json"])
def test_fifo_is_refused_without_blocking(ckpt, name):
    fifo(ckpt / name)
    expect_error(ckpt, name, "a FIFO, expected a regular file")


def test_gguf_fifo_is_refused_without_blocking(tmp_path):
    fifo(tmp_path / "m.gguf")
    r = H.run_mobius("build", "--gguf", tmp_path / "m.gguf", tmp_path / "out", timeout=30)
    assert r.returncode == 1 and r.stderr.splitlines() == [f"mobius: error: {tmp_path}/m.gguf: a FIFO, expected a regular file"]


# --- crashes and runaway memory -----------------------------------------------------------------------
def test_huge_max_position_embeddings(ckpt):
    edit_config(ckpt, max_position_embeddings=2**62)
    expect_error(ckpt, "config.json", "max_position_embeddings", "limit", extra=("--ep", "cpu"))


def test_long_context_cos_sin_caches_refused_for_group_query_attention(ckpt):
    # within the fields' caps, but the caches would take 2**24 positions x 512 x 8 bytes = 64 GiB
    edit_config(ckpt, max_position_embeddings=2**24, head_dim=1024)
    expect_error(ckpt, "config.json", "max_position_embeddings", "cos/sin caches", extra=("--ep", "cpu", "--no-weights"))


def test_huge_head_dim(ckpt):
    edit_config(ckpt, head_dim=2**40)
    expect_error(ckpt, "config.json", "head_dim")


def test_deeply_nested_json(ckpt):
    (ckpt / "config.json").write_text('{"a": ' + "[" * 100000 + "]" * 100000 + "}")
    expect_error(ckpt, "config.json", "nested deeper than 64")


def test_oversized_config(ckpt):
    cfg = ckpt / "config.json"
    cfg.write_text(cfg.read_text()[:-1] + ', "padding": "' + "x" * (16 << 20) + '"}')
    expect_error(ckpt, "config.json", "more than the 16777216")


def test_deeply_nested_safetensors_header(ckpt):
    p = ckpt / ST
    hb = ('{"x": ' + "[" * 10000 + "]" * 10000 + "}").encode()
    p.write_bytes(len(hb).to_bytes(8, "little") + hb)
    expect_error(ckpt, ST, "nested deeper than 64")


def write_gguf_metadata(path: Path, **edits) -> None:
    """A llama GGUF with metadata only (key "llama.<name>"); `edits` replace values. Integers are
    written as uint64, floats as float32."""
    w = gguf.GGUFWriter(str(path), "llama")
    fields = {"context_length": 64, "embedding_length": 16, "block_count": 2, "feed_forward_length": 32,
              "attention.head_count": 2, "attention.head_count_kv": 1,
              "attention.layer_norm_rms_epsilon": 1e-6, "vocab_size": 32}
    fields.update({k.replace("__", "."): v for k, v in edits.items()})
    for k, v in fields.items():
        (w.add_float32 if isinstance(v, float) else w.add_uint64)(f"llama.{k}", v)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.mark.parametrize("key,value,needle", [
    ("block_count", 2**31, "llama.block_count"),
    ("context_length", 2**62, "llama.context_length"),
    ("attention__layer_norm_rms_epsilon", float("nan"), "llama.attention.layer_norm_rms_epsilon"),
    ("attention__head_count", 2**20, "llama.attention.head_count"),
])
def test_gguf_metadata_out_of_range(tmp_path, key, value, needle):
    path = tmp_path / "m.gguf"
    write_gguf_metadata(path, **{key: value})
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out", "--ep", "cuda")
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:"), r.stderr
    assert str(path) in lines[0] and needle in lines[0], lines[0]
    assert sorted(os.listdir(tmp_path)) == ["m.gguf"]


# --- nonsense values --------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value", [
    ("hidden_size", 0), ("vocab_size", -5), ("intermediate_size", -1), ("head_dim", -16), ("head_dim", 15),
    ("rms_norm_eps", -1e-6), ("num_hidden_layers", 2**31), ("num_key_value_heads", 3),
])
def test_nonsense_config_value(ckpt, field, value):
    edit_config(ckpt, **{field: value})
    expect_error(ckpt, "config.json", field, extra=("--no-weights",))


@pytest.mark.parametrize("model_type,field,value", [
    ("mpt", "n_layers", 4489331903327091712),  # fuzz_config's finding: layer list sized from it
    ("bart", "decoder_layers", -3), ("t5", "num_decoder_layers", 2**40), ("t5", "d_kv", -8),
])
def test_nonsense_count_of_another_family(tmp_path, model_type, field, value):
    """Counts other families spell their own way are capped before anything is sized from them."""
    hf = tmp_path / "hf"
    hf.mkdir()
    cfg = H.transformers.CONFIG_MAPPING[model_type]().to_dict()
    cfg[field] = value
    (hf / "config.json").write_text(json.dumps(cfg))
    expect_error(hf, "config.json", field, extra=("--no-weights",))


def test_negative_rope_theta(ckpt):
    edit_config(ckpt, rope_parameters={"rope_type": "default", "rope_theta": -1.0})
    expect_error(ckpt, "config.json", "rope_theta", extra=("--no-weights",))


def test_negative_sliding_window(ckpt):
    edit_config(ckpt, model_type="mistral", sliding_window=-4)
    expect_error(ckpt, "config.json", "sliding_window", extra=("--no-weights",))


def test_linear_rope_factor_zero(ckpt):
    edit_config(ckpt, rope_parameters={"rope_type": "linear", "factor": 0.0, "rope_theta": 10000.0})
    expect_error(ckpt, "config.json", "factor", extra=("--no-weights",))


def test_negative_eos_id(ckpt):
    edit_config(ckpt, eos_token_id=-2)
    expect_error(ckpt, "config.json", "eos_token_id", extra=("--no-weights",))


def test_generation_config_nonsense(ckpt):
    (ckpt / "generation_config.json").write_text(json.dumps({"temperature": "hot"}))
    expect_error(ckpt, "generation_config.json", "temperature", extra=("--no-weights",))


def test_duplicate_header_key(ckpt):
    p = ckpt / ST
    tensors = read_st(p)
    name, (dtype, shape, data) = next(iter(tensors.items()))
    write_st(p, tensors)
    raw = p.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    entry = json.dumps({"dtype": dtype, "shape": shape, "data_offsets": [0, len(data)]})
    header = raw[8:8 + n].rstrip(b" ")[:-1] + f', "{name}": {entry}}}'.encode()
    p.write_bytes(len(header).to_bytes(8, "little") + header + raw[8 + n:])
    expect_error(ckpt, ST, name, "appears twice")


def test_header_entry_without_data_offsets(ckpt):
    # found by fuzz_safetensors: reading a missing member of a const JSON object is undefined
    p = ckpt / ST
    write_st(p, read_st(p), edit=lambda h: h.update({"x": {"dtype": "F32", "shape": [1]}}))
    expect_error(ckpt, ST, "'x'", "data_offsets")


def test_shape_whose_byte_size_overflows_int64(ckpt):
    p = ckpt / ST
    write_st(p, read_st(p), edit=lambda h: h.update({"huge": {"dtype": "F32", "shape": [2**31, 2**30],
                                                              "data_offsets": [0, 0]}}))
    expect_error(ckpt, ST, "huge", "overflows int64")


# --- names that would split the line --------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["a\nmobius: error: forged", "cut\0here"])
def test_tensor_name_is_escaped(ckpt, bad):
    p = ckpt / ST
    write_st(p, read_st(p), edit=lambda h: h.update({bad: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}))
    line = expect_error(ckpt, ST)
    assert bad.replace("\n", "\\n").replace("\0", "\\0") in line
