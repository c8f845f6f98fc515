"""Dequantization is bit-identical to gguf.quants.dequantize (the gguf package, pinned).

For every supported ggml type a GGUF file is written with gguf.GGUFWriter holding
- "random": random block bytes with the fp16 scale fields set to finite random values (every bit
  pattern of the quants, scales of both signs, subnormal and large), and
- "quantized" (types the package can quantize): gguf.quants.quantize of random normal data;
then mobius-gguf-dump's float32 output is compared bit for bit with gguf.quants.dequantize of the
tensor bytes as gguf.GGUFReader reads them (which also checks our offsets and shapes).
"""

import gguf
import numpy as np
import pytest

from gguf_testlib import QT, dump_floats

# type -> byte offsets of fp16 fields in a block (ggml-quants.c block layouts)
FP16_FIELDS = {
    QT.Q4_0: [0], QT.Q4_1: [0, 2], QT.Q5_0: [0], QT.Q5_1: [0, 2], QT.Q8_0: [0],
    QT.Q4_K: [0, 2], QT.Q5_K: [0, 2], QT.Q6_K: [208],
    QT.MXFP4: [],  # its e8m0 exponent byte: any of the 256 values (255's 2^127 * 12 is inf in both)
}
QUANTIZABLE = {QT.Q4_0, QT.Q4_1, QT.Q5_0, QT.Q5_1, QT.Q8_0, QT.MXFP4}
TYPES = [QT.F32, QT.F16, QT.BF16, *FP16_FIELDS]


def random_fp16(rng, n):
    """Finite fp16 values over the whole range: normal, large, subnormal, zeros of both signs."""
    v = rng.standard_normal(n) * np.exp2(rng.integers(-24, 15, n))
    v[: min(n, 4)] = [0.0, -0.0, 6.0e-8, -65504.0][: min(n, 4)]
    return v.astype(np.float16)


def random_blocks(qtype, shape, rng) -> np.ndarray:
    """uint8 data of a tensor of `shape` (row-major, last dim blocked) with finite scales."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    n_blocks = int(np.prod(shape)) // block
    raw = rng.integers(0, 256, (n_blocks, size), dtype=np.uint8)
    for off in FP16_FIELDS[qtype]:
        raw[:, off:off + 2] = random_fp16(rng, n_blocks).view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(*shape[:-1], shape[-1] // block * size)


def plain(qtype, shape, rng) -> np.ndarray:
    if qtype == QT.F32:
        v = (rng.standard_normal(shape) * np.exp2(rng.integers(-100, 100, shape))).astype(np.float32)
        v.flat[:4] = [np.inf, -np.inf, -0.0, 1e-45]
        return v
    if qtype == QT.F16:
        return random_fp16(rng, int(np.prod(shape))).reshape(shape)
    return rng.integers(0, 256, (*shape[:-1], shape[-1] * 2), dtype=np.uint8)  # BF16: any bits


@pytest.mark.parametrize("qtype", TYPES, ids=lambda t: t.name)
def test_dequantize_bit_identical(qtype, tmp_path):
    rng = np.random.default_rng(int(qtype) + 1)
    block = gguf.GGML_QUANT_SIZES[qtype][0]
    path = tmp_path / f"{qtype.name}.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    shapes = {"random": (3, 2 * max(block, 32)), "random.3d": (2, 3, max(block, 32))}
    for name, shape in shapes.items():
        if qtype in FP16_FIELDS:
            data = random_blocks(qtype, shape, rng)
            w.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
        elif qtype == QT.BF16:
            data = plain(qtype, shape, rng)
            w.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
        else:
            w.add_tensor(name, plain(qtype, shape, rng))
    if qtype in QUANTIZABLE | {QT.BF16}:
        q = gguf.quants.quantize(rng.standard_normal((4, 256)).astype(np.float32), qtype)
        w.add_tensor("quantized", q, raw_shape=q.shape, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    reader = gguf.GGUFReader(str(path))
    assert len(reader.tensors) == len(shapes) + (qtype in QUANTIZABLE | {QT.BF16})
    for t in reader.tensors:
        assert t.tensor_type == qtype
        ref = gguf.quants.dequantize(t.data, qtype).astype(np.float32, copy=False).ravel()
        ours = dump_floats("tensor", path, t.name, tmp_path)
        assert ours.shape == ref.shape, f"{t.name}: {ours.shape} vs {ref.shape}"
        diff = np.flatnonzero(ours.view(np.uint32) != ref.view(np.uint32))
        assert diff.size == 0, (f"{qtype.name} {t.name}: {diff.size} of {ref.size} values differ, first at "
                                f"{diff[0]}: ours {ours[diff[0]]!r} reference {ref[diff[0]]!r}")
