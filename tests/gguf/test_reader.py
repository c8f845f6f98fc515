"""The GGUF reader against gguf.GGUFReader (metadata of every value type, alignment, offsets), and
`mobius build --gguf` on malformed files: exit 1, exactly one stderr line `mobius: error: ...`
naming the file (and the key or tensor), no output directory. Malformed files are a valid tiny
llama GGUF with bytes patched at offsets that gguf.GGUFReader reports. Every run is limited to
1 GiB of address space, so an absurd count that were trusted for an allocation would fail."""

import resource
import struct
import subprocess
from pathlib import Path

import gguf
import numpy as np
import pytest

import harness as H
from gguf_testlib import QT, dump_json, write_gguf

VT = gguf.GGUFValueType
LIMIT = 1 << 30

SCALARS = [
    ("t.u8", 200, VT.UINT8), ("t.i8", -100, VT.INT8), ("t.u16", 60000, VT.UINT16),
    ("t.i16", -30000, VT.INT16), ("t.u32", 4000000000, VT.UINT32), ("t.i32", -2000000000, VT.INT32),
    ("t.f32", 0.1, VT.FLOAT32), ("t.bool", True, VT.BOOL), ("t.str", "héllo ✓", VT.STRING),
    ("t.empty", "", VT.STRING), ("t.u64", 2**64 - 1, VT.UINT64), ("t.i64", -(2**62), VT.INT64),
    ("t.f64", 1e300, VT.FLOAT64),
]
ARRAYS = [
    ("t.a.u8", [0, 255, 7], VT.UINT8), ("t.a.i8", [-128, 127], VT.INT8), ("t.a.u16", [1, 65535], VT.UINT16),
    ("t.a.i16", [-5, 5], VT.INT16), ("t.a.u32", [3, 4000000000], VT.UINT32), ("t.a.i32", [-1, 1], VT.INT32),
    ("t.a.f32", [1.5, -0.25, 1e-30], VT.FLOAT32), ("t.a.bool", [True, False, True], VT.BOOL),
    ("t.a.str", ["a", "", "ünï"], VT.STRING), ("t.a.u64", [2**63, 1], VT.UINT64),
    ("t.a.i64", [-(2**63), 2**63 - 1], VT.INT64), ("t.a.f64", [2.5, -1e-300], VT.FLOAT64),
]
NESTED = [[1, 2, 3], [4], [5, 6]]


def f32(x: float) -> float:
    return float(np.float32(x))


def write(path: Path, edit=None, alignment=None) -> None:
    w = gguf.GGUFWriter(str(path), "llama")
    if alignment:
        w.add_custom_alignment(alignment)
    for key, val, vt in SCALARS:
        w.add_key_value(key, val, vt)
    for key, val, vt in ARRAYS:
        w.add_key_value(key, val, VT.ARRAY, sub_type=vt)
    w.add_key_value("t.a.nested", NESTED, VT.ARRAY)
    rng = np.random.default_rng(0)
    w.add_tensor("a", rng.standard_normal((3, 5)).astype(np.float32))
    q = gguf.quants.quantize(rng.standard_normal((2, 64)).astype(np.float32), QT.Q8_0)
    w.add_tensor("b", q, raw_shape=q.shape, raw_dtype=QT.Q8_0)
    w.add_tensor("c", rng.standard_normal((7,)).astype(np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.mark.parametrize("alignment", [None, 64])
def test_metadata_and_layout_match_gguf_reader(tmp_path, alignment):
    path = tmp_path / "all.gguf"
    write(path, alignment=alignment)
    info = dump_json("info", path)
    ref = gguf.GGUFReader(str(path))
    assert info["version"] == 3
    assert info["alignment"] == ref.alignment == (alignment or 32)
    assert info["data_offset"] == ref.data_offset
    meta = {m["key"]: m for m in info["metadata"]}
    assert list(meta) == [k for k in ref.fields if not k.startswith("GGUF.")]
    for key, val, vt in SCALARS:
        m = meta[key]
        assert m["type"] == vt.name.lower(), key
        want = f32(val) if vt == VT.FLOAT32 else val
        assert m["value"] == want == ref.fields[key].contents(), key
    for key, val, vt in ARRAYS:
        m = meta[key]
        assert (m["type"], m["element_type"]) == ("array", vt.name.lower()), key
        want = [f32(x) for x in val] if vt == VT.FLOAT32 else val
        assert m["value"] == want == ref.fields[key].contents(), key
    assert meta["t.a.nested"]["value"] == NESTED
    assert meta["general.architecture"]["value"] == "llama"
    tensors = info["tensors"]
    assert [t["name"] for t in tensors] == [t.name for t in ref.tensors]
    for ours, t in zip(tensors, ref.tensors):
        assert ours["type"] == t.tensor_type.name
        assert ours["ne"] == [int(d) for d in t.shape]
        assert info["data_offset"] + ours["offset"] == t.data_offset


def test_version_2_is_read(tmp_path):
    path = tmp_path / "v2.gguf"
    write(path)
    raw = bytearray(path.read_bytes())
    raw[4:8] = struct.pack("<I", 2)
    path.write_bytes(raw)
    info = dump_json("info", path)
    assert info["version"] == 2 and [t["name"] for t in info["tensors"]] == ["a", "b", "c"]


# --- malformed files through `mobius build --gguf` ---------------------------------------------
@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("gguf")
    model = H.write_checkpoint("llama", {}, d / "hf")
    path = d / "model.gguf"
    write_gguf(model, path)
    return path


@pytest.fixture
def case(pristine, tmp_path) -> Path:
    p = tmp_path / "case.gguf"
    p.write_bytes(pristine.read_bytes())
    return p


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def expect_error(path: Path, *needles) -> str:
    out = path.parent / "out"
    r = subprocess.run([str(H.mobius_bin()), "build", "--gguf", str(path), str(out)], capture_output=True,
                       text=True, timeout=120, preexec_fn=limited)
    lines = r.stderr.splitlines()
    assert r.returncode == 1, f"exit code {r.returncode}, stderr: {r.stderr!r}"
    assert len(lines) == 1 and lines[0].startswith("mobius: error:"), f"expected one error line, got {lines}"
    assert str(path) in lines[0], f"the file is not named in: {lines[0]}"
    message = lines[0].replace(str(path), "<file>")
    for n in needles:
        assert n in message, f"{n!r} not named in: {lines[0]}"
    assert not out.exists() and sorted(p.name for p in path.parent.iterdir()) == [path.name], \
        f"output left behind: {sorted(p.name for p in path.parent.iterdir())}"
    return lines[0]


def patch(path: Path, offset: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[offset:offset + len(data)] = data
    path.write_bytes(raw)


def kv_value_offset(reader, key: str) -> int:
    """Offset of the value (after the type tag) of metadata entry `key`."""
    return reader.fields[key].offset + 8 + len(key.encode()) + 4


def tensor_info_offsets(reader, i: int) -> dict:
    t = reader.tensors[i]
    start = t.field.offset + 8 + len(t.name.encode())
    n_dims = len(t.shape)
    return {"n_dims": start, "ne": start + 4, "type": start + 4 + 8 * n_dims, "offset": start + 8 + 8 * n_dims}


def test_pristine_builds_under_the_memory_limit(pristine, tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([str(H.mobius_bin()), "build", "--gguf", str(pristine), str(out)], capture_output=True,
                       text=True, timeout=120, preexec_fn=limited)
    assert r.returncode == 0, r.stderr


def test_bad_magic(case):
    patch(case, 0, b"GGML")
    expect_error(case, "magic")


@pytest.mark.parametrize("version,needle", [(1, "version 1"), (4, "version 4"), (0x03000000, "big-endian")])
def test_unsupported_version(case, version, needle):
    patch(case, 4, struct.pack("<I", version))
    expect_error(case, needle)


@pytest.mark.parametrize("where", ["magic", "counts", "kv-key", "kv-value", "tensor-info", "data"])
def test_truncated(case, where):
    r = gguf.GGUFReader(str(case))
    key = list(r.fields)[-1]  # the last entry: the counts before it stay plausible
    last = len(r.tensors) - 1
    cut = {"magic": 3, "counts": 20, "kv-key": r.fields[key].offset + 10, "kv-value": kv_value_offset(r, key) + 2,
           "tensor-info": tensor_info_offsets(r, last)["ne"] + 3, "data": r.tensors[-1].data_offset + 8}[where]
    case.write_bytes(case.read_bytes()[:cut])
    named = {"kv-value": [key], "tensor-info": [r.tensors[last].name], "data": [r.tensors[last].name]}
    expect_error(case, "truncated", *named.get(where, []))


@pytest.mark.parametrize("field,offset", [("tensor_count", 8), ("kv_count", 16)])
def test_absurd_counts(case, field, offset):
    patch(case, offset, struct.pack("<Q", 2**63 + 5))
    expect_error(case, field)


def test_string_length_past_end(case):
    r = gguf.GGUFReader(str(case))
    patch(case, r.fields["general.name"].offset, struct.pack("<Q", 2**40))
    expect_error(case, "string length")


def test_array_length_past_end(case):
    w_path = case.parent / "arr.gguf"
    w = gguf.GGUFWriter(str(w_path), "llama")
    w.add_key_value("test.list", [1, 2, 3], VT.ARRAY, sub_type=VT.UINT32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    r = gguf.GGUFReader(str(w_path))
    patch(w_path, kv_value_offset(r, "test.list") + 4, struct.pack("<Q", 2**61))
    case.unlink()
    expect_error(w_path, "test.list", "array")


def test_unknown_value_type(case):
    r = gguf.GGUFReader(str(case))
    patch(case, kv_value_offset(r, "llama.block_count") - 4, struct.pack("<I", 13))
    expect_error(case, "llama.block_count", "value type 13")


@pytest.mark.parametrize("ggml_type", [99, 4])  # 4: Q4_2, removed from ggml
def test_unknown_ggml_type(case, ggml_type):
    r = gguf.GGUFReader(str(case))
    patch(case, tensor_info_offsets(r, 2)["type"], struct.pack("<I", ggml_type))
    expect_error(case, r.tensors[2].name, f"unknown ggml type {ggml_type}")


def test_n_dims_out_of_range(case):
    r = gguf.GGUFReader(str(case))
    patch(case, tensor_info_offsets(r, 1)["n_dims"], struct.pack("<I", 5))
    expect_error(case, r.tensors[1].name, "n_dims")


def test_tensor_offset_out_of_range(case):
    r = gguf.GGUFReader(str(case))
    patch(case, tensor_info_offsets(r, 0)["offset"], struct.pack("<Q", 1 << 40))
    expect_error(case, r.tensors[0].name, "out of range")


def test_tensor_offset_misaligned(case):
    r = gguf.GGUFReader(str(case))
    off = tensor_info_offsets(r, 1)["offset"]
    patch(case, off, struct.pack("<Q", r.tensors[1].data_offset - r.data_offset + 4))
    expect_error(case, r.tensors[1].name, "alignment")


def test_tensors_overlap(case):
    r = gguf.GGUFReader(str(case))
    patch(case, tensor_info_offsets(r, 1)["offset"], struct.pack("<Q", r.tensors[0].data_offset - r.data_offset))
    expect_error(case, "overlaps", r.tensors[1].name)


def test_duplicate_tensor_name(case):
    r = gguf.GGUFReader(str(case))
    names = [t.name for t in r.tensors]
    i = names.index("blk.0.attn_k.weight")
    patch(case, r.tensors[i].field.offset + 8, b"blk.0.attn_q.weight")
    expect_error(case, "duplicate", "blk.0.attn_q.weight")


def test_duplicate_key(case):
    path = case.parent / "dup.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_uint32("test.ab", 1)
    w.add_uint32("test.aa", 2)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    r = gguf.GGUFReader(str(path))
    patch(path, r.fields["test.aa"].offset + 8, b"test.ab")
    case.unlink()
    expect_error(path, "duplicate", "test.ab")


def test_block_size_mismatch(tmp_path):
    path = tmp_path / "q.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    q = gguf.quants.quantize(np.ones((2, 64), np.float32), QT.Q8_0)
    w.add_tensor("blk.0.ffn_up.weight", q, raw_shape=q.shape, raw_dtype=QT.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    r = gguf.GGUFReader(str(path))
    patch(path, tensor_info_offsets(r, 0)["ne"], struct.pack("<Q", 48))
    expect_error(path, "blk.0.ffn_up.weight", "block size")


@pytest.mark.parametrize("value,vt,needle", [(48, VT.UINT32, "power of two"), (64, VT.UINT64, "uint32")])
def test_bad_alignment(tmp_path, value, vt, needle):
    path = tmp_path / "align.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_key_value("general.alignment", value, vt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    expect_error(path, "general.alignment", needle)


# --- metadata the build needs -------------------------------------------------------------------
def rewrite(src: Path, dst: Path, drop_key=None, arch=None, retype=None) -> None:
    """Copies src to dst through GGUFWriter, dropping a key, renaming the architecture or
    re-encoding one tensor (name -> (raw uint8 data, ggml type))."""
    r = gguf.GGUFReader(str(src))
    w = gguf.GGUFWriter(str(dst), arch or r.fields["general.architecture"].contents())
    for key, f in r.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", drop_key):
            continue
        vt = f.types[0]
        if vt == VT.ARRAY:
            w.add_key_value(key, f.contents(), vt, sub_type=f.types[-1])
        else:
            w.add_key_value(key, f.contents(), vt)
    for t in r.tensors:
        if retype and t.name == retype[0]:
            w.add_tensor(t.name, retype[1], raw_shape=retype[1].shape, raw_dtype=retype[2])
        else:
            w.add_tensor(t.name, np.array(t.data), raw_shape=list(reversed([int(d) for d in t.shape])),
                         raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_unsupported_architecture(pristine, tmp_path):
    path = tmp_path / "arch.gguf"
    rewrite(pristine, path, arch="gptneox")
    expect_error(path, "general.architecture", "gptneox")


def test_missing_required_key(pristine, tmp_path):
    path = tmp_path / "nokey.gguf"
    rewrite(pristine, path, drop_key="llama.block_count")
    expect_error(path, "llama.block_count", "missing")


def test_type_that_cannot_be_dequantized(pristine, tmp_path):
    path = tmp_path / "q81.gguf"
    r = gguf.GGUFReader(str(pristine))
    t = next(t for t in r.tensors if t.name == "blk.0.ffn_up.weight")
    rows, cols = int(t.shape[1]), int(t.shape[0])
    block, size = gguf.GGML_QUANT_SIZES[QT.Q8_1]  # a valid ggml type mobius does not dequantize
    raw = np.zeros((rows, cols // block * size), np.uint8)
    rewrite(pristine, path, retype=("blk.0.ffn_up.weight", raw, QT.Q8_1))
    expect_error(path, "blk.0.ffn_up.weight", "Q8_1")


# --- the CLI --------------------------------------------------------------------------------------
@pytest.mark.parametrize("args,needle", [((), "no SOURCE given ("),
                                         (("--config", "ckpt"), "two sources given (ckpt and ")])
def test_exactly_one_of_config_and_gguf(pristine, tmp_path, args, needle):
    out = tmp_path / "out"
    extra = ("--gguf", pristine) if args else ()
    r = H.run_mobius("build", *args, *extra, out)
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:"), r.stderr
    assert needle in lines[0] and not out.exists()


def test_no_weights_needs_only_the_metadata(pristine, tmp_path):
    out = tmp_path / "out"
    r = H.run_mobius("build", "--gguf", pristine, out, "--no-weights")
    assert r.returncode == 0, r.stderr
    assert "0 weights" in r.stdout and (H.graph_path(out, "model")).is_file()
