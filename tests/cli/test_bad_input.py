"""`mobius build` on broken input: exit code 1, exactly one stderr line `mobius: error: ...` that
names the file and the tensor or field, and no output (nor temp dir) left behind.

Every case starts from a valid tiny llama checkpoint (the parity harness writes it) and breaks it.
Malformed safetensors files are written by hand: 8-byte little-endian header length, JSON header,
data.
"""

import json
import os
import resource
import shutil
import signal
import struct
from pathlib import Path

import onnx
import pytest

import audio_harness as A
import harness as H

ST = "model.safetensors"
Q = "model.layers.0.self_attn.q_proj.weight"
K = "model.layers.0.self_attn.k_proj.weight"
V = "model.layers.0.self_attn.v_proj.weight"
UP1 = "model.layers.1.mlp.up_proj.weight"


# --- raw safetensors --------------------------------------------------------------------------
def read_st(path: Path) -> dict:
    """name -> (dtype, shape, bytes), in file order (without __metadata__)."""
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    items = sorted(((k, v) for k, v in header.items() if k != "__metadata__"), key=lambda kv: kv[1]["data_offsets"])
    return {k: (v["dtype"], v["shape"], data[slice(*v["data_offsets"])]) for k, v in items}


def write_st(path: Path, tensors: dict, edit=None, header_len: int | None = None) -> None:
    """Writes tensors (name -> (dtype, shape, bytes)) contiguously; `edit(header)` may then break
    the header; `header_len` overrides the 8-byte length field."""
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(data)]}
        off += len(data)
    if edit:
        edit(header)
    hb = json.dumps(header).encode()
    hb += b" " * (-len(hb) % 8)
    body = b"".join(t[2] for t in tensors.values())
    path.write_bytes(struct.pack("<Q", len(hb) if header_len is None else header_len) + hb + body)


# --- fixtures and the assertion ----------------------------------------------------------------
@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("ckpt") / "hf"
    H.write_checkpoint("llama", {}, d)
    return d


@pytest.fixture
def ckpt(pristine, tmp_path_factory) -> Path:
    # neutral directory names: the message must name "llama" etc. by itself, not through a path
    d = tmp_path_factory.mktemp("case") / "hf"
    shutil.copytree(pristine, d)
    return d


def expect_error(ckpt: Path, *needles, out: Path | None = None, extra=(), preexec_fn=None) -> str:
    """Each needle is a string, or a tuple of which one must appear."""
    out = out or ckpt.parent / "out"
    before = {p: p.stat().st_mtime_ns for p in ckpt.parent.rglob("*")}
    r = H.run_mobius("build", "--config", ckpt, out, *extra, preexec_fn=preexec_fn)
    lines = r.stderr.splitlines()
    assert r.returncode == 1, f"exit code {r.returncode}, stderr: {r.stderr!r}"
    assert len(lines) == 1 and lines[0].startswith("mobius: error:"), \
        f"stderr must be exactly one line starting 'mobius: error:', got {lines}"
    for n in needles:
        alts = n if isinstance(n, tuple) else (n,)
        assert any(a in lines[0] for a in alts), f"{' or '.join(alts)!r} not named in: {lines[0]}"
    after = {p: p.stat().st_mtime_ns for p in ckpt.parent.rglob("*")}
    assert after == before, f"files created or changed: {sorted(map(str, after.keys() ^ before.keys()))}"
    return lines[0]


def edit_config(ckpt: Path, **kv) -> None:
    p = ckpt / "config.json"
    p.write_text(json.dumps({**json.loads(p.read_text()), **kv}))


# --- config.json -------------------------------------------------------------------------------
def test_missing_config(ckpt):
    (ckpt / "config.json").unlink()
    expect_error(ckpt, "config.json")


def test_unknown_model_type_suggests_nearest(ckpt):
    # one letter away from llama alone ("lamma", two away, ties with bamba, gemma, jamba first)
    edit_config(ckpt, model_type="llamma")
    expect_error(ckpt, "config.json", "model_type", "llamma", "llama")


# --- safetensors structure ---------------------------------------------------------------------
def test_truncated_file(ckpt):
    p = ckpt / ST
    p.write_bytes(p.read_bytes()[: p.stat().st_size * 3 // 5])
    expect_error(ckpt, ST)


def test_header_length_past_end_of_file(ckpt):
    p = ckpt / ST
    write_st(p, read_st(p), header_len=p.stat().st_size * 2)
    expect_error(ckpt, ST)


def test_overlapping_offsets(ckpt):
    p = ckpt / ST

    def overlap(h):  # k_proj and v_proj have the same size: make v_proj read k_proj's bytes
        h[V]["data_offsets"] = list(h[K]["data_offsets"])

    write_st(p, read_st(p), edit=overlap)
    expect_error(ckpt, ST, (K, V))


def test_offsets_out_of_range(ckpt):
    p = ckpt / ST
    tensors = read_st(p)
    end = sum(len(t[2]) for t in tensors.values())

    def beyond(h):  # consistent size, but past the end of the data
        h[Q]["data_offsets"] = [end, end + len(tensors[Q][2])]

    write_st(p, tensors, edit=beyond)
    expect_error(ckpt, ST, Q)


def test_unknown_dtype(ckpt):
    p = ckpt / ST
    write_st(p, read_st(p), edit=lambda h: h[Q].update(dtype="F99"))
    expect_error(ckpt, ST, Q)


# --- binding -------------------------------------------------------------------------------------
def test_shape_mismatch(ckpt):
    p = ckpt / ST
    tensors = read_st(p)
    dtype, (rows, cols), data = tensors[Q]
    tensors[Q] = (dtype, [rows, cols // 2], data[: len(data) // 2])
    write_st(p, tensors)
    expect_error(ckpt, Q)


def test_missing_tensor(ckpt):
    p = ckpt / ST
    tensors = read_st(p)
    del tensors[UP1]
    write_st(p, tensors)
    expect_error(ckpt, UP1)


def test_no_safetensors_without_no_weights(ckpt):
    (ckpt / ST).unlink()
    expect_error(ckpt, ".safetensors")


def test_sharded_index_names_missing_shard(ckpt):
    tensors = read_st(ckpt / ST)
    (ckpt / ST).rename(ckpt / "model-00001-of-00002.safetensors")
    weight_map = {k: "model-00001-of-00002.safetensors" for k in tensors}
    weight_map[UP1] = "model-00002-of-00002.safetensors"
    (ckpt / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    expect_error(ckpt, "model-00002-of-00002.safetensors")


# --- output directory ----------------------------------------------------------------------------
def test_existing_output_needs_force(ckpt):
    out = ckpt.parent / "existing-output"
    out.mkdir()
    (out / "keep.txt").write_text("user data")
    expect_error(ckpt, "existing-output", out=out)
    assert sorted(os.listdir(out)) == ["keep.txt"] and (out / "keep.txt").read_text() == "user data"
    # --force replaces only a previous package: tests/cli/test_hostile.py


@pytest.mark.parametrize("limit", ["graph", "data"])
def test_no_room_for_the_package(ckpt, limit):
    # The graph file is written first, then the data file's blocks are allocated before any weight
    # is converted: a file system that cannot hold either (here a file-size limit below the graph
    # file's size, or above it and below the data file's, with SIGXFSZ ignored so the call fails
    # with EFBIG like a full disk's ENOSPC) fails at once, naming the file where the package would
    # be (not the temporary directory), and leaves nothing behind.
    probe = ckpt.parent / "probe"
    assert H.run_mobius("build", "--config", ckpt, probe, "--no-weights").returncode == 0
    graph_bytes = H.graph_path(probe, "model").stat().st_size
    shutil.rmtree(probe)
    size = graph_bytes // 2 if limit == "graph" else graph_bytes + (4 << 10)

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    if limit == "graph":
        expect_error(ckpt, "out/onnx/model.onnx: write failed", "File too large", preexec_fn=small_files)
    else:
        line = expect_error(ckpt, "out/onnx/model.onnx_data: cannot allocate", "File too large",
                            preexec_fn=small_files)
        assert int(line.split("cannot allocate ")[1].split()[0]) > size, line


def test_no_weights_builds_without_safetensors(ckpt):
    for p in ckpt.glob("*.safetensors"):
        p.unlink()
    out = ckpt.parent / "out"
    r = H.run_mobius("build", "--config", ckpt, out, "--no-weights")
    assert r.returncode == 0, r.stderr
    model = onnx.load(str(H.graph_path(out, "model")), load_external_data=False)
    inputs = {i.name for i in model.graph.input}
    assert {"input_ids", "attention_mask", "position_ids", "past_key_values.0.key"} <= inputs
    assert {o.name for o in model.graph.output} >= {"logits", "present.1.value"}


# --- encoder config fields (checked before any weight is read) -----------------------------------
@pytest.mark.parametrize("model_type,field,value", [
    ("bert", "position_embedding_type", "relative_key"),  # not an absolute position table
    ("bert", "is_decoder", True),                         # causal BERT: not feature-extraction
    ("ernie", "use_task_id", True),                       # task_type_ids input not supported
    ("distilbert", "n_heads", 5),                         # does not divide dim 64
])
def test_unsupported_encoder_config(tmp_path, model_type, field, value):
    d = tmp_path / "hf"
    H.make_config(model_type, {}).save_pretrained(d)
    edit_config(d, **{field: value})
    expect_error(d, "config.json", field)


# --- speech encoder config fields (checked before any weight is read; docs/audio.md) -------------
@pytest.mark.parametrize("model_type,field,value", [
    ("wav2vec2", "add_adapter", True),                      # the conv adapter: not supported
    ("wav2vec2", "adapter_attn_dim", 16),                   # MMS attention adapters: not supported
    ("wav2vec2", "feat_extract_norm", "batch"),             # only "group" or "layer"
    ("wav2vec2", "conv_kernel", [10, 3]),                   # one entry per conv_dim layer
    ("wav2vec2", "conv_stride", [5, 0, 2]),                 # strides >= 1
    ("wav2vec2", "num_conv_pos_embedding_groups", 5),       # does not divide hidden_size 32
    ("hubert", "conv_pos_batch_norm", True),                # the batch-norm position conv: not supported
    ("wavlm", "num_buckets", 2),                            # no exact bucket left
    ("wav2vec2-conformer", "conv_depthwise_kernel_size", 4),  # "same" padding needs an odd kernel
    ("wav2vec2-conformer", "position_embeddings_type", "relative_key"),
    ("wav2vec2-bert", "add_adapter", True),
    ("wav2vec2-bert", "use_intermediate_ffn_before_adapter", True),  # only with add_adapter
    ("wav2vec2-bert", "position_embeddings_type", "alibi"),
    ("sew-d", "pos_att_type", ["c2p", "p2p"]),             # only c2p / p2c
    ("sew-d", "conv_kernel_size", 4),                       # ConvLayer keeps the length only with odd kernels
    ("sew-d", "position_buckets", 2),                       # no exact bucket left
])
def test_unsupported_audio_config(tmp_path, model_type, field, value):
    d = tmp_path / "hf"
    H.transformers.AutoConfig.for_model(model_type, **(A.BERT if model_type == "wav2vec2-bert" else A.BASE)).save_pretrained(d)
    edit_config(d, **{field: value})
    expect_error(d, "config.json", field)


# --- Moonshine: head counts transformers' MoonshineAttention cannot run (docs/speech.md) ----------
@pytest.mark.parametrize("field,value", [
    ("decoder_num_attention_heads", 2),
    ("encoder_num_key_value_heads", 2),
    ("decoder_num_key_value_heads", 1),
    # int(16 * 0.45) = 7 rotated channels: odd (the error names partial_rotary_factor)
    ("rope_parameters", {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.45}),
])
def test_unsupported_moonshine_config(tmp_path, field, value):
    import moonshine_harness as M  # noqa: PLC0415
    d = tmp_path / "hf"
    H.transformers.AutoConfig.for_model("moonshine", **M.MOONSHINE).save_pretrained(d)
    edit_config(d, **{field: value})
    expect_error(d, "config.json", "partial_rotary_factor" if field == "rope_parameters" else field)


# --- decoder config fields (checked before any weight is read) -----------------------------------
@pytest.mark.parametrize("model_type,field,value", [
    ("codegen", "n_head", 2),       # CodeGen splits qkv_proj into mp_num = 4 groups of heads
    ("codegen", "rotary_dim", 32),  # more than the head size 16
])
def test_unsupported_decoder_config(tmp_path, model_type, field, value):
    d = tmp_path / "hf"
    H.make_config(model_type, {}).save_pretrained(d)
    edit_config(d, **{field: value})
    expect_error(d, "config.json", field)


# --- head counts: the error gives the values that do not fit --------------------------------------
@pytest.mark.parametrize("model_type,fields,needle", [
    ("llama", {"num_key_value_heads": 3}, "field 'num_key_value_heads': 3 must divide num_attention_heads 4"),
    ("llama", {"num_attention_heads": 5, "head_dim": None},
     "field 'num_attention_heads': 5 must divide hidden_size 64 when head_dim is not set"),
    ("qwen2", {"num_key_value_heads": 3}, "field 'num_key_value_heads': 3 must divide num_attention_heads 4"),
])
def test_head_count_errors_give_the_values(tmp_path, model_type, fields, needle):
    d = tmp_path / "hf"
    H.make_config(model_type, {}).save_pretrained(d)
    config = json.loads((d / "config.json").read_text())
    assert config["hidden_size"] == 64 and config["num_attention_heads"] == 4, config  # the tiny base
    for k, v in fields.items():
        if v is None:
            config.pop(k, None)
        else:
            config[k] = v
    (d / "config.json").write_text(json.dumps(config))
    expect_error(d, needle)


# --- --precision (weight quantization) ---------------------------------------------------------
@pytest.mark.parametrize("extra,needles", [
    (("--precision", "int3"), ("--precision", "int3")),
    (("--precision", "fp8"), ("--precision", "fp8")),
    (("--precision", "int4", "--block-size", "48"), ("--block-size", "48")),
    (("--precision", "int4", "--block-size", "16"), ("--block-size", "16")),
    (("--precision", "int4", "--quant-scheme", "nf4"), ("--quant-scheme", "nf4")),
    (("--precision", "int4", "--accuracy-level", "5"), ("--accuracy-level", "5")),
    (("--precision", "int4", "--dtype", "bf16"), ("--precision int4", "bf16")),
    (("--block-size", "64",), ("--precision",)),
    (("--quantize-lm-head",), ("--precision",)),
    (("--quantize-embeddings",), ("--precision",)),
])
def test_bad_quantization_options(ckpt, extra, needles):
    expect_error(ckpt, *needles, extra=extra)


def test_try_generic_refuses_precision(ckpt):
    edit_config(ckpt, model_type="llamaish")
    expect_error(ckpt, "--try-generic", "--precision", extra=("--try-generic", "--precision", "int4"))
