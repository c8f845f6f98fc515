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
import shutil
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
    assert H.data_path(tmp_path / "out").read_bytes() == H.data_path(tmp_path / "plain").read_bytes()


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
    assert H.package_files(out) == {"config.json", "genai_config.json", "generation_config.json"} | H.graph_files(["model"], "hf")
    assert [p.name for p in ckpt.parent.iterdir() if ".mobius-tmp" in p.name] == []


@pytest.mark.parametrize("model_type", ["qwen2_5_vl", "phi4_multimodal"])
def test_force_replaces_a_previous_multi_graph_package(model_type, tmp_path):
    """A vision-language package (vision, embedding, decoder graphs; phi4_multimodal's speech
    graph; vision_processor.json, genai_config.json for the types onnxruntime-genai runs) is a
    previous mobius package: --force replaces it, and leaves nothing else behind."""
    import vlm_harness as V  # noqa: PLC0415

    hf = tmp_path / "hf"
    V.AutoConfig.for_model(model_type, **V.base_row(model_type).config).save_pretrained(hf)
    out = tmp_path / "out"
    for _ in range(2):
        r = H.run_mobius("build", "--config", hf, out, "--no-weights", "--force")
        assert r.returncode == 0, r.stderr
    names = sorted(H.package_files(out))
    graphs = {"vision", "embedding", "decoder"} | ({"speech"} if model_type == "phi4_multimodal" else set())
    assert {n for n in names if ".onnx" in n} == H.graph_files(graphs, "hf"), names
    if model_type == "qwen2_5_vl":
        assert {"genai_config.json", "vision_processor.json"} <= set(names), names
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


# --- untrusted text never reaches a backtracking regex (src/util/linear_regex.h) --------------------
def x_tensor(name: str) -> dict:
    return {name: np.zeros((2, 2), np.float32)}


lora_adapter = H.write_raw_lora_adapter


@pytest.mark.parametrize("length,needle", [(100_000, "longer than mobius' limit of 4096"),
                                           (4000, "lora_B.weight' is missing")])
def test_lora_tensor_with_a_long_name(ckpt, tmp_path, length, needle):
    # std::regex_match recursed per character: a 100,000-character name overflowed the stack
    adapter = lora_adapter(ckpt, tmp_path / "adapter", extra_tensors=x_tensor(f"base_model.model.{'x' * length}.lora_A.weight"))
    expect_error(ckpt, "adapter_model.safetensors", needle, extra=("--lora", adapter))


@pytest.mark.parametrize("pattern", ["(.*)*(.*)*(.*)*Z", "(a|a)*(a|aa)*$", "(x+x+)+y"])
def test_lora_rank_pattern_that_would_backtrack_builds_in_linear_time(ckpt, tmp_path, pattern):
    adapter = lora_adapter(ckpt, tmp_path / "adapter", rank_pattern={pattern: 3}, alpha_pattern={pattern: 1.0})
    start = time.monotonic()
    r = H.run_mobius("build", "--config", ckpt, tmp_path / "out", "--lora", adapter, timeout=60)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("field", ["rank_pattern", "alpha_pattern"])
@pytest.mark.parametrize("pattern,needle", [("(" * 60000 + ")" * 60000, "longer than 1024 bytes"),
                                            ("(?:" * 40 + "q" + ")" * 40, "nested deeper than 32"), ("(q)" * 40, "more than 32 capturing groups"),
                                            (r"(q)\1", "backreferences"), ("q(?=_proj)", "lookaround"),
                                            ("q_proj)|(k", "unbalanced")])
def test_lora_pattern_outside_the_linear_subset(ckpt, tmp_path, field, pattern, needle):
    adapter = lora_adapter(ckpt, tmp_path / "adapter", **{field: {pattern: 2}})
    expect_error(ckpt, "adapter_config.json", field, needle, extra=("--lora", adapter))


def register_file(path: Path, **entry) -> Path:
    path.write_text(json.dumps({"model_type": "renamed_llama", "base": "llama", **entry}))
    return path


def renamed_checkpoint(ckpt: Path, names) -> None:
    """config.json says renamed_llama; tensors renamed by names(name)."""
    edit_config(ckpt, model_type="renamed_llama")
    write_st(ckpt / ST, {names(k): v for k, v in read_st(ckpt / ST).items()})


def test_register_key_renames_on_long_names_take_linear_time(ckpt, tmp_path):
    # every name 4000 bytes longer: (x+x+)+y backtracks exponentially on a run of x's
    renamed_checkpoint(ckpt, lambda k: "x" * 4000 + "." + k)
    reg = register_file(tmp_path / "reg.json", key_renames=[["(x+x+)+y", "z"], ["^x+\\.", ""]])
    start = time.monotonic()
    r = H.run_mobius("build", "--config", ckpt, tmp_path / "out", "--register", reg, timeout=60)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("rename,needle", [
    ([r"(a)\1", ""], r"key_renames[0]: pattern '(a)\1': backreferences are not supported"),
    (["(" * 60000, ""], "key_renames[0]: pattern"),
    (["(layers)", "$2"], "takes group $2, but the pattern has 1 groups"),
])
def test_register_pattern_outside_the_linear_subset(ckpt, tmp_path, rename, needle):
    reg = register_file(tmp_path / "reg.json", key_renames=[rename])
    expect_error(ckpt, str(reg), needle, extra=("--register", reg))


def test_register_rename_that_grows_names_past_the_limit(ckpt, tmp_path):
    renamed_checkpoint(ckpt, lambda k: k)
    reg = register_file(tmp_path / "reg.json", key_renames=[[".", "$&$&"]] * 8)  # x 256
    expect_error(ckpt, ST, "key_renames", "more than 4096 bytes", extra=("--register", reg))


# --- every file through the safe reader ------------------------------------------------------------
@pytest.mark.parametrize("make,needle", [
    (lambda p: fifo(p), "a FIFO, expected a regular file"),
    (lambda p: p.write_text('{"a": ' + "[" * 100000 + "]" * 100000 + "}"), "nested deeper than 64"),
    (lambda p: p.write_text('{"model_type": "x", "base": "llama", "config_renames": {"a": 1e999}}'),
     "field 'config_renames.a': a number out of range"),
    (lambda p: os.truncate(p, 17 << 20) if p.exists() else (p.write_bytes(b" "), os.truncate(p, 17 << 20)),
     "more than the 16777216"),
])
def test_register_file_is_read_as_untrusted_input(ckpt, tmp_path, make, needle):
    reg = tmp_path / "reg.json"
    make(reg)
    start = time.monotonic()
    expect_error(ckpt, str(reg), needle, extra=("--register", reg))
    assert time.monotonic() - start < 20


@pytest.mark.parametrize("ref,needle", [("../../../..", "expected a revision"), ("/etc", "expected a revision"),
                                        ("..", "expected a revision"), ("main\n../x", "expected a revision"),
                                        (None, "a FIFO, expected a regular file")])
def test_hub_cache_refs_main_cannot_leave_the_cache(ckpt, tmp_path, ref, needle):
    cache = tmp_path / "hub"
    repo = cache / "models--org--tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "snapshots").mkdir()
    shutil.copytree(ckpt, tmp_path / "elsewhere")
    if ref is None:
        fifo(repo / "refs" / "main")
    else:
        (repo / "refs" / "main").write_text(ref)
    env = {**os.environ, "HF_HUB_CACHE": str(cache)}
    r = subprocess.run([str(H.mobius_bin()), "build", "--config", "org/tiny", str(tmp_path / "out")], env=env,
                       capture_output=True, text=True, timeout=30, cwd=tmp_path / "elsewhere")
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and needle in lines[0], r.stderr
    assert "refs/main" in lines[0] and not (tmp_path / "out").exists()


def test_hub_cache_snapshot_link_out_of_the_cache(ckpt, tmp_path):
    repo = tmp_path / "hub" / "models--org--tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "snapshots").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    (repo / "snapshots" / "0123abcd").symlink_to(ckpt)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub")}
    r = subprocess.run([str(H.mobius_bin()), "build", "--config", "org/tiny", str(tmp_path / "out")], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "outside the cache" in r.stderr and r.stderr.count("\n") == 1, r.stderr


@pytest.fixture
def no_weights_package(ckpt) -> Path:
    pkg = ckpt.parent / "graph"
    r = H.run_mobius("build", "--config", ckpt, pkg, "--no-weights")
    assert r.returncode == 0, r.stderr
    return pkg


def expect_apply_error(pkg: Path, ckpt: Path, out: Path, *needles, extra=()) -> str:
    before = {p: p.stat().st_mtime_ns for p in pkg.parent.rglob("*") if not p.is_fifo()}
    r = H.run_mobius("apply-weights", pkg, ckpt, out, *extra, timeout=30)
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:"), r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    assert {p: p.stat().st_mtime_ns for p in pkg.parent.rglob("*") if not p.is_fifo()} == before
    return lines[0]


@pytest.mark.parametrize("out", [".", "sub"])
def test_apply_weights_output_is_or_is_inside_the_package(ckpt, no_weights_package, out):
    pkg = no_weights_package
    target = pkg if out == "." else pkg / "sub"
    expect_apply_error(pkg, ckpt, target, "the input", extra=("--force",))
    assert (H.graph_path(pkg, "model")).is_file()


@pytest.mark.parametrize("kind", ["fifo", "outside", "huge"])
def test_apply_weights_reads_model_onnx_as_untrusted_input(ckpt, no_weights_package, kind):
    pkg, model = no_weights_package, H.graph_path(no_weights_package, "model")
    model.unlink()
    if kind == "fifo":
        fifo(model)
        needle = "a FIFO, expected a regular file"
    elif kind == "outside":
        model.symlink_to("/etc/passwd")
        needle = "outside"
    else:
        model.write_bytes(b"\0")
        os.truncate(model, 3 << 30)  # sparse: refused by its size, not read
        needle = "more than the"
    start = time.monotonic()
    expect_apply_error(pkg, ckpt, ckpt.parent / "out", "model.onnx", needle)
    assert time.monotonic() - start < 20


@pytest.mark.parametrize("field,value", [("accuracy_level", 1e300), ("accuracy_level", 9), ("block_size", -1),
                                         ("dtype", "f64"), ("ep", 3), ("quantize_lm_head", "yes")])
def test_apply_weights_metadata_out_of_range(ckpt, no_weights_package, field, value):
    import onnx  # noqa: PLC0415
    model_path = H.graph_path(no_weights_package, "model")
    model = onnx.load(model_path, load_external_data=False)
    prop = next(p for p in model.metadata_props if p.key == "mobius.build_options")
    prop.value = json.dumps({**json.loads(prop.value), field: value})
    onnx.save(model, model_path)
    line = expect_apply_error(no_weights_package, ckpt, ckpt.parent / "out", "mobius.build_options",
                              f"field '{field}'")
    assert "--" not in line.split("rebuild")[0]  # no command-line option the user never gave


# --- new families' fields have ranges; sizes computed from them are checked -----------------------
@pytest.mark.parametrize("model_type,path,value", [
    ("whisper", "num_mel_bins", 2**62), ("whisper", "num_mel_bins", 0), ("whisper", "max_source_positions", 2**30),
    ("whisper", "max_target_positions", 2**34), ("whisper", "max_source_positions", 2**62),
    ("qwen2_vl", "vision_config.mlp_ratio", 2**40), ("qwen2_vl", "vision_config.embed_dim", 2**40),
    ("qwen2_vl", "vision_config.patch_size", 2**31), ("qwen2_vl", "vision_config.spatial_merge_size", 2**31),
    ("qwen2_vl", "vision_config.patch_size", 0), ("t5", "d_kv", 0), ("llava", "image_token_index", 2**40),
    ("llava", "vision_config.image_size", 2**30), ("llava", "vision_feature_layer", [-1] * 2_000_000),
    ("llava", "vision_feature_layer", [-1] * 200), ("llava", "vision_feature_layer", [1e30]),
    ("wav2vec2", "conv_stride", [1e30, 2, 2]),  # fuzz_config's finding: converted before its range check
])
def test_field_of_a_new_family_out_of_range(tmp_path, model_type, path, value):
    hf = tmp_path / "hf"
    hf.mkdir()
    cfg = H.transformers.CONFIG_MAPPING[model_type]().to_dict()
    *parents, key = path.split(".")
    node = cfg
    for p in parents:
        node = node[p]
    node[key] = value
    (hf / "config.json").write_text(json.dumps(cfg))
    start = time.monotonic()
    line = expect_error(hf, "config.json", f"field '{path}'", extra=("--no-weights",))
    assert time.monotonic() - start < 30, line


def test_weight_sizes_computed_from_fields_are_checked(tmp_path):
    # each field within its cap, their product (a [d_model, max_source_positions] table) is not
    hf = tmp_path / "hf"
    hf.mkdir()
    cfg = H.transformers.CONFIG_MAPPING["whisper"](d_model=3 * 2**15, max_source_positions=2**24).to_dict()
    (hf / "config.json").write_text(json.dumps(cfg))
    expect_error(hf, "embed_positions.weight", "2^36 elements", extra=("--no-weights",))


# --- values that poison the output ---------------------------------------------------------------
@pytest.mark.parametrize("edit,needle", [({"lora_alpha": 1e308}, "lora_alpha"), ({"lora_alpha": float("nan")}, None),
                                         ({"r": 2**40}, "field 'r'"), ({"rank_pattern": {"q_proj": 0}}, "rank_pattern")])
def test_lora_config_values_out_of_range(ckpt, tmp_path, edit, needle):
    adapter = lora_adapter(ckpt, tmp_path / "adapter", **edit)
    expect_error(ckpt, "adapter_config.json", *([needle] if needle else []), extra=("--lora", adapter))


def test_lora_merge_past_float16_is_refused(ckpt, tmp_path):
    adapter = lora_adapter(ckpt, tmp_path / "adapter", lora_alpha=1e6)
    expect_error(ckpt, "adapter_model.safetensors", "q_proj", "beyond float16", extra=("--lora", adapter, "--dtype", "f16"))


# --- GGUF tokenizer metadata ------------------------------------------------------------------------
def gguf_with_tokenizer(tmp_path: Path, vocab_size: int, tokenizer) -> Path:
    import gguf_testlib as G  # noqa: PLC0415
    model = H.write_checkpoint("llama", {"vocab_size": vocab_size}, tmp_path / "hf")
    path = tmp_path / "m.gguf"
    G.write_gguf(model, path, tokenizer=tokenizer)
    return path


def expect_gguf_error(path: Path, *needles, extra=()) -> str:
    r = H.run_mobius("build", "--gguf", path, path.parent / "out", *extra, timeout=60)
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:"), r.stderr
    assert "internal error" not in lines[0]
    for n in needles:
        assert n in lines[0], lines[0]
    assert not (path.parent / "out").exists()
    return lines[0]


def test_gguf_tokens_whose_merges_would_take_gigabytes(tmp_path):
    k = 2280  # 'a' x 1 ... 'a' x 2280: 2.6 MB of tokens, every split of every token a merge
    def write(w):
        w.add_tokenizer_model("llama")
        w.add_token_list(["a" * (i + 1) for i in range(k)])
        w.add_token_scores([float(-i) for i in range(k)])
    path = gguf_with_tokenizer(tmp_path, k, write)
    start = time.monotonic()
    expect_gguf_error(path, "tokenizer.ggml.tokens", "deriving the merges")
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("key", ["unknown_token_id", "padding_token_id", "bos_token_id"])
def test_gguf_special_token_id_at_uint64_max(tmp_path, key):
    def write(w):
        w.add_tokenizer_model("llama")
        w.add_token_list([f"<t{i}>" for i in range(8)])
        w.add_token_scores([0.0] * 8)
        w.add_uint64(f"tokenizer.ggml.{key}", 2**64 - 1)
    expect_gguf_error(gguf_with_tokenizer(tmp_path, 8, write), f"tokenizer.ggml.{key}")


def test_gguf_token_type_at_uint64_max(tmp_path):
    def write(w):
        w.add_tokenizer_model("llama")
        w.add_token_list([f"<t{i}>" for i in range(8)])
        w.add_token_scores([0.0] * 8)
        w.add_key_value("tokenizer.ggml.token_type", [1] * 7 + [2**64 - 1], gguf.GGUFValueType.ARRAY,
                        sub_type=gguf.GGUFValueType.UINT64)
    expect_gguf_error(gguf_with_tokenizer(tmp_path, 8, write), "tokenizer.ggml.token_type", "element 7")


def test_gguf_100k_tokens_for_a_small_embedding(tmp_path):
    def write(w):
        w.add_tokenizer_model("llama")
        w.add_token_list([f"<t{i}>" for i in range(100_000)])
        w.add_token_scores([0.0] * 100_000)
    expect_gguf_error(gguf_with_tokenizer(tmp_path, 256, write), "tokenizer.ggml.tokens", "100000 tokens",
                      "vocabulary of 256")


# --- small ------------------------------------------------------------------------------------------
def test_number_beyond_a_double_in_config(ckpt):
    cfg = ckpt / "config.json"
    cfg.write_text(cfg.read_text().rstrip()[:-1] + ', "rope_scaling": {"factor": 1e999}}')
    expect_error(ckpt, "config.json", "field 'rope_scaling.factor'", "out of range")


def test_zero_size_gguf_tensor_is_not_an_overlap(tmp_path):
    import gguf_testlib as G  # noqa: PLC0415
    model = H.write_checkpoint("llama", {}, tmp_path / "hf")
    path = tmp_path / "m.gguf"
    real_add = G._add

    def add_with_empty(w, name, data, qtype):
        real_add(w, name, data, qtype)
        if name == "token_embd.weight":
            w.add_tensor("empty.weight", np.zeros((0,), np.float32))
    G._add = add_with_empty
    try:
        G.write_gguf(model, path)
    finally:
        G._add = real_add
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out")
    assert "overlaps" not in r.stderr, r.stderr


def test_nul_in_a_nearest_name_is_escaped(ckpt):
    tensors = read_st(ckpt / ST)
    norm = "model.norm.weight"
    write_st(ckpt / ST, {(k[:-1] + "\0" + k[-1] if k == norm else k): v for k, v in tensors.items()})
    line = expect_error(ckpt, "missing tensor 'model.norm.weight'")
    assert "model.norm.weigh\\0t" in line and line.endswith(")"), line


@pytest.mark.parametrize("command", ["info", "build"])
def test_100k_character_argument(tmp_path, command):
    arg = "x" * 100_000
    args = ("info", arg) if command == "info" else ("build", "--config", arg, tmp_path / "out")
    r = H.run_mobius(*args, timeout=30)
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:"), r.stderr[:500]
    assert "internal error" not in lines[0] and len(lines[0]) < 1000, lines[0][:500]


def test_no_source_includes_a_backtracking_regex_engine():
    """The class, not just its examples: nothing in the library, the CLI or the Python module can
    hand untrusted text to std::regex (util/linear_regex.h is the one matcher)."""
    root = Path(__file__).resolve().parents[2]
    users = [str(p.relative_to(root)) for d in ("src", "tools", "python", "fuzz") for p in (root / d).rglob("*")
             if p.suffix in (".h", ".cpp", ".cc") and "#include <regex>" in p.read_text(errors="replace")]
    assert users == []
