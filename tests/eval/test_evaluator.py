"""The float32 reference evaluator (src/eval, behind `mobius build --try-generic`'s self-check)
against onnxruntime: every op it implements on one-node models with random inputs, then whole
tiny Llama packages built by mobius (padded batch prefill and a decode step)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import evaltool as E
import harness as H

TOL = 1e-5  # max |Δ| relative to the reference's scale: float32 accumulation order only
NP2ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
           np.dtype(np.bool_): TensorProto.BOOL}
rng = np.random.default_rng(0)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def one_node(path: Path, op: str, inputs: dict, outputs=("y",), initializers: dict | None = None, **attrs) -> Path:
    """A model with one `op` node; `inputs` are graph inputs (name -> array, None = omitted)."""
    initializers = initializers or {}
    node = helper.make_node(op, [n if a is not None else "" for n, a in {**inputs, **initializers}.items()],
                            list(outputs), name=f"{op}_0", **attrs)
    graph = helper.make_graph(
        [node], "one", [helper.make_tensor_value_info(n, NP2ONNX[a.dtype], a.shape) for n, a in inputs.items()
                        if a is not None],
        [onnx.ValueInfoProto(name=o) for o in outputs if o],
        [onnx.numpy_helper.from_array(a, n) for n, a in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)], ir_version=10)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)  # the outputs' types
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, path)
    return path


def check(tmp_path, op, inputs: dict, outputs=("y",), initializers=None, select=None, **attrs):
    """The evaluator against onnxruntime on every output; `select` (output name -> boolean mask)
    limits the comparison of an output to the selected elements. Returns (evaluator outputs, model)."""
    model = one_node(tmp_path / "m.onnx", op, inputs, outputs, initializers, **attrs)
    feeds = {n: a for n, a in inputs.items() if a is not None}
    sess = H.ort_session(model)
    names = [o for o in outputs if o]
    ref = dict(zip(names, sess.run(names, feeds)))
    got = E.run(model, feeds)
    for n in names:
        if select and n in select:
            got[n], ref[n] = got[n][select[n]], ref[n][select[n]]
        assert got[n].dtype == ref[n].dtype, f"{op} {n}: dtype {got[n].dtype}, onnxruntime {ref[n].dtype}"
        assert got[n].shape == ref[n].shape, f"{op} {n}: shape {got[n].shape}, onnxruntime {ref[n].shape}"
        if ref[n].dtype == np.float32:
            d = E.max_rel(got[n], ref[n])
            assert d <= TOL, f"{op} {n}: max |Δ| {d:.2e} (relative) vs onnxruntime"
        else:
            np.testing.assert_array_equal(got[n], ref[n], err_msg=f"{op} {n}")
    return got, model


# --- element-wise --------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
def test_arithmetic_broadcasts(tmp_path, op):
    check(tmp_path, op, {"a": f32(2, 1, 5), "b": f32(3, 1) + (3.0 if op == "Div" else 0.0)})


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_int64_arithmetic(tmp_path, op):
    a = np.array([[7, -7, 12], [5, 0, -9]], np.int64)
    check(tmp_path, op, {"a": a, "b": np.array([2, 3, -4], np.int64)})


def test_pow(tmp_path):
    check(tmp_path, "Pow", {"a": np.abs(f32(4, 6)) + 0.5, "b": np.array(0.3, np.float32)})


@pytest.mark.parametrize("op", ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"])
def test_comparisons(tmp_path, op):
    a = np.array([[0, 1, 2, 3]], np.int64)
    check(tmp_path, op, {"a": a, "b": np.array([[1], [2], [3]], np.int64)})
    check(tmp_path / "f", op, {"a": np.round(f32(3, 4)), "b": np.round(f32(4))})


@pytest.mark.parametrize("op", ["And", "Or"])
def test_logic(tmp_path, op):
    check(tmp_path, op, {"a": rng.random((3, 1, 4)) > 0.5, "b": rng.random((2, 1)) > 0.5})


def test_not(tmp_path):
    check(tmp_path, "Not", {"x": rng.random((3, 4)) > 0.5})


@pytest.mark.parametrize("op", ["Cos", "Sin", "Exp", "Tanh", "Neg", "Reciprocal", "Relu", "Sigmoid", "Sqrt"])
def test_unary(tmp_path, op):
    x = f32(4, 33, scale=3.0)
    check(tmp_path, op, {"x": np.abs(x) + 0.1 if op in ("Sqrt", "Reciprocal") else x})


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(tmp_path, approximate):
    check(tmp_path, "Gelu", {"x": f32(5, 40, scale=3.0)}, approximate=approximate)


@pytest.mark.parametrize("src,to", [(np.int64, TensorProto.FLOAT), (np.bool_, TensorProto.FLOAT),
                                    (np.float32, TensorProto.INT64), (np.int64, TensorProto.BOOL),
                                    (np.float32, TensorProto.BOOL), (np.bool_, TensorProto.INT64)])
def test_cast(tmp_path, src, to):
    x = np.array([[-2.75, 0.0, 1.5], [3.25, -0.5, 7.0]]).astype(src)
    check(tmp_path, "Cast", {"x": x}, to=to)


def test_where(tmp_path):
    check(tmp_path, "Where", {"c": rng.random((2, 1, 4)) > 0.5, "a": f32(3, 1), "b": np.array(-3.4e38, np.float32)})


# --- shapes and data movement --------------------------------------------------------------------
@pytest.mark.parametrize("attrs", [{}, {"start": 1, "end": 2}, {"start": -2}, {"end": -1}, {"start": 3, "end": 1}])
def test_shape(tmp_path, attrs):
    check(tmp_path, "Shape", {"x": f32(2, 3, 4)}, **attrs)


@pytest.mark.parametrize("shape", [[0, 0, -1], [-1, 4], [2, 12], [0, -1, 2, 2]])
def test_reshape(tmp_path, shape):
    check(tmp_path, "Reshape", {"x": f32(2, 3, 4), "s": np.array(shape, np.int64)})


@pytest.mark.parametrize("perm", [[0, 2, 1, 3], [3, 1, 0, 2], None])
def test_transpose(tmp_path, perm):
    attrs = {"perm": perm} if perm else {}
    check(tmp_path, "Transpose", {"x": f32(2, 3, 4, 5)}, **attrs)


def test_unsqueeze_squeeze(tmp_path):
    check(tmp_path, "Unsqueeze", {"x": f32(3, 4), "axes": np.array([0, -1], np.int64)})
    check(tmp_path / "b", "Squeeze", {"x": f32(1, 3, 1, 4), "axes": np.array([2], np.int64)})
    check(tmp_path / "c", "Squeeze", {"x": f32(1, 3, 1, 4)})
    check(tmp_path / "d", "Squeeze", {"x": np.array([5], np.int64), "axes": np.array([0], np.int64)})


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_concat(tmp_path, axis):
    shapes = {0: [(2, 3, 4), (1, 3, 4), (0, 3, 4)], 2: [(2, 3, 0), (2, 3, 4), (2, 3, 1)], -1: [(2, 3, 4)] * 3}[axis]
    check(tmp_path, "Concat", {f"x{k}": f32(*s) for k, s in enumerate(shapes)}, axis=axis)


@pytest.mark.parametrize("axis", [0, 1])
def test_gather(tmp_path, axis):
    check(tmp_path, "Gather", {"d": f32(5, 6), "i": np.array([[0, 4, -1], [2, 2, -5]], np.int64)}, axis=axis)


def test_gather_int64_scalar_index(tmp_path):
    check(tmp_path, "Gather", {"d": np.arange(6, dtype=np.int64), "i": np.array(-2, np.int64)})


@pytest.mark.parametrize("values", [(np.int64, 3, 11, 2), (np.int64, 0, 5, 1), (np.int64, 4, 4, 1),
                                    (np.float32, 0.5, 3.2, 0.7), (np.int64, 9, 1, -3)])
def test_range(tmp_path, values):
    t, *v = values
    check(tmp_path, "Range", {n: np.array(x, t) for n, x in zip(("start", "limit", "delta"), v)})


@pytest.mark.parametrize("axes,keepdims", [([0, 1], 0), ([1], 1), ([-1], 0), (None, 1)])
def test_reduce_max(tmp_path, axes, keepdims):
    ins = {"x": f32(3, 4, 5)}
    if axes is not None:
        ins["axes"] = np.array(axes, np.int64)
    check(tmp_path, "ReduceMax", ins, keepdims=keepdims)


@pytest.mark.parametrize("axes,keepdims", [([0, 2], 0), ([-1], 1), (None, 0)])
def test_reduce_sum(tmp_path, axes, keepdims):
    ins = {"x": f32(3, 4, 5)}
    if axes is not None:
        ins["axes"] = np.array(axes, np.int64)
    check(tmp_path, "ReduceSum", ins, keepdims=keepdims)


def test_expand(tmp_path):
    check(tmp_path, "Expand", {"x": f32(3, 1), "shape": np.array([2, 1, 4], np.int64)})
    check(tmp_path, "Expand", {"x": np.array(2.5, np.float32), "shape": np.array([2, 3], np.int64)})


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([0], [3], [-1], None), ([3], [8], [2], [1]), ([0], [100], [2], [2]), ([1], [9], [-1], [2]),
    ([-2, 0], [10**18, 2], [0, 1], None), ([7], [-100], [2], [-2]), ([2], [2], [1], None),
])
def test_slice(tmp_path, starts, ends, axes, steps):
    ins = {"x": f32(4, 3, 8), "starts": np.array(starts, np.int64), "ends": np.array(ends, np.int64),
           "axes": np.array(axes, np.int64)}
    if steps is not None:
        ins["steps"] = np.array(steps, np.int64)
    check(tmp_path, "Slice", ins)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax(tmp_path, axis):
    check(tmp_path, "Softmax", {"x": f32(3, 4, 5, scale=4.0)}, axis=axis)


@pytest.mark.parametrize("axis,largest", [(-1, 1), (1, 1), (0, 0)])
def test_topk(tmp_path, axis, largest):
    x = f32(4, 6, 5)
    x[1, 2, 3] = x[1, 4, 3] = x[1, 0, 3]  # ties: the lower index first
    check(tmp_path, "TopK", {"x": x, "k": np.array([3], np.int64)}, outputs=("values", "indices"), axis=axis,
          largest=largest)


@pytest.mark.parametrize("axis", [1, 0, -1])
def test_scatter_elements(tmp_path, axis):
    data = f32(4, 6)
    idx = np.array([[1, 0, 3], [2, -1, 0]], np.int64) if axis != 0 else np.array([[1, 3], [0, -2]], np.int64)
    if axis == 0:
        data = f32(4, 2)
    upd = f32(*idx.shape)
    check(tmp_path, "ScatterElements", {"data": data, "indices": idx, "updates": upd}, axis=axis)


# --- linear algebra and the LLM ops ---------------------------------------------------------------
@pytest.mark.parametrize("a,b", [((2, 3, 70), (70, 600)), ((2, 1, 5, 8), (3, 8, 4)), ((8,), (8, 3)), ((4, 8), (8,))])
def test_matmul(tmp_path, a, b):
    check(tmp_path, "MatMul", {"a": f32(*a), "b": f32(*b)})


@pytest.mark.parametrize("attrs", [dict(transB=1), dict(transA=1, alpha=0.5, beta=2.0), dict()])
def test_gemm(tmp_path, attrs):
    a = f32(7, 5) if attrs.get("transA") else f32(5, 7)
    b = f32(9, 7) if attrs.get("transB") else f32(7, 9)
    check(tmp_path, "Gemm", {"a": a, "b": b, "c": f32(9)}, **attrs)
    check(tmp_path / "noc", "Gemm", {"a": a, "b": b}, **attrs)


@pytest.mark.parametrize("axis,scale_shape", [(-1, (16,)), (-2, (3, 16)), (2, (16,))])
def test_rms_normalization(tmp_path, axis, scale_shape):
    check(tmp_path, "RMSNormalization", {"x": f32(2, 3, 16, scale=4.0), "s": f32(*scale_shape)}, axis=axis,
          epsilon=1e-6)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rotary_dim", [0, 8])
def test_rotary_embedding(tmp_path, interleaved, rotary_dim):
    half = (rotary_dim or 16) // 2
    attrs = dict(interleaved=interleaved, rotary_embedding_dim=rotary_dim)
    check(tmp_path, "RotaryEmbedding", {"x": f32(2, 3, 5, 16), "cos": f32(2, 5, half), "sin": f32(2, 5, half)}, **attrs)
    pos = np.array([[0, 3, 7, 1, 2], [9, 9, 4, 0, 5]], np.int64)
    check(tmp_path / "pos", "RotaryEmbedding", {"x": f32(2, 3, 5, 16), "cos": f32(10, half), "sin": f32(10, half),
                                                "pos": pos}, **attrs)


def additive_mask(allowed: np.ndarray) -> np.ndarray:
    return np.where(allowed, 0.0, np.finfo(np.float32).min).astype(np.float32)


ATTENTION_CASES = {
    # name: (q heads, kv heads, seq, past, mask kind, attrs)
    "gqa-prefill-additive-mask": (4, 2, 6, 0, "float", {}),
    "gqa-decode-with-past": (4, 2, 1, 7, "float", {"scale": 0.3}),
    "mha-prefill-with-past": (3, 3, 4, 5, "float", {}),
    "mqa-bool-mask": (4, 1, 5, 3, "bool", {}),
    "mask-2d-broadcast": (2, 2, 5, 2, "2d", {}),
    "is-causal": (4, 2, 5, 3, None, {"is_causal": 1}),
    "softcap": (2, 1, 4, 2, "float", {"softcap": 0.5}),
}


def attention_inputs(case):
    hq, hkv, s, p, mask_kind, attrs = ATTENTION_CASES[case]
    b, d = 2, 8
    total = p + s
    q_idx = np.arange(p, total)[:, None]
    allowed = np.arange(total)[None, :] <= q_idx  # causal [s, total]
    keep = np.ones((b, total), bool)
    keep[1, :2] = False  # row 1 left-padded
    full = allowed[None, None] & keep[:, None, None, :]
    mask = {"float": additive_mask(full), "bool": full, "2d": additive_mask(allowed), None: None}[mask_kind]
    ins = {"q": f32(b, hq, s, d), "k": f32(b, hkv, s, d), "v": f32(b, hkv, s, d), "mask": mask,
           "past_k": f32(b, hkv, p, d), "past_v": f32(b, hkv, p, d)}
    # query rows that see at least one key (with a float mask, the others see only the lowest float)
    seen = (full if mask_kind in ("float", "bool") else np.broadcast_to(allowed, full.shape)).any(-1)
    return ins, attrs, np.broadcast_to(seen, (b, hq, s))


@pytest.mark.parametrize("case", list(ATTENTION_CASES))
def test_attention(tmp_path, case):
    ins, attrs, seen = attention_inputs(case)
    check(tmp_path, "Attention", ins, outputs=("y", "present_k", "present_v"), select={"y": seen}, **attrs)


def test_attention_rows_with_every_key_masked_follow_the_spec(tmp_path):
    """A float mask of the lowest float32 on every key of a row (left padding in a prefill) is
    finite: the spec's reference implementation (onnx.reference) averages V over the keys, which
    the evaluator does; onnxruntime returns 0 there. Those rows are padding, whose outputs no one
    reads: test_attention compares the others with onnxruntime."""
    ins, attrs, seen = attention_inputs("gqa-prefill-additive-mask")
    assert not seen.all()
    model = one_node(tmp_path / "m.onnx", "Attention", ins, ("y", "present_k", "present_v"), **attrs)
    got = E.run(model, ins)
    ref = ReferenceEvaluator(str(model)).run(None, ins)
    for name, r in zip(("y", "present_k", "present_v"), ref):
        assert E.max_rel(got[name], r) <= TOL, f"{name} differs from onnx.reference"


def test_unimplemented_op_is_named(tmp_path):
    model = one_node(tmp_path / "m.onnx", "Softsign", {"x": f32(3)})
    r = subprocess.run([str(E.eval_bin()), "run", str(model)], input='{"x": {"dtype": "float32", "shape": [3], '
                       '"data": [1, 2, 3]}}', capture_output=True, text=True)
    assert r.returncode == 1 and "Softsign" in r.stderr and "not implemented" in r.stderr, r.stderr


# --- whole packages --------------------------------------------------------------------------------
# Llama variants whose graphs cover every op of the generic decoder: the default, tied embeddings
# (Gemm, Concat), biases, dynamic NTK rope (ReduceMax, Pow, Max, Reciprocal), longrope (Greater,
# Where on the inverse frequencies), llama3 rope.
PACKAGES = ["default", "tied", "attention-bias", "mlp-bias", "dynamic", "longrope", "llama3", "head-dim-32"]


@pytest.mark.parametrize("variant", PACKAGES)
def test_tiny_llama_package_matches_onnxruntime(tmp_path, variant):
    """Left-padded batch prefill and a decode step on onnxruntime's cache. The padding positions
    are left out (their attention rows see no key: test_attention_rows_with_every_key_masked...)."""
    hf = tmp_path / "hf"
    model = H.write_checkpoint("llama", H.variant("llama", variant), hf)
    path = H.build(hf, tmp_path / "out", "--runtime", "none")
    lm = H.OnnxLM(path, model.config)
    ids, mask, pos = H.prefill_batch(model.config.vocab_size)
    valid = mask.astype(bool)
    ref_logits, past = lm(ids, mask, pos)
    got = E.run(path, {"input_ids": ids, "attention_mask": mask, "position_ids": pos, **lm.empty_past(2)})
    d_prefill = E.max_rel(got["logits"][valid], ref_logits[valid])
    for name, value in past.items():
        present = name.replace("past_key_values", "present")
        d = E.max_rel(got[present].transpose(0, 2, 1, 3)[valid], value.transpose(0, 2, 1, 3)[valid])
        assert d <= TOL, f"{present}: max |Δ| {d:.2e} vs onnxruntime"
    nxt = np.array([[5], [9]], np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    pos2 = pos[:, -1:] + 1
    ref_step, _ = lm(nxt, mask2, pos2, past)
    got_step = E.run(path, {"input_ids": nxt, "attention_mask": mask2, "position_ids": pos2, **past})
    d_decode = E.max_rel(got_step["logits"], ref_step)
    print(f"llama/{variant}: evaluator vs onnxruntime max|Δ| prefill {d_prefill:.2e}, decode {d_decode:.2e} (relative)")
    assert d_prefill <= TOL and d_decode <= TOL, f"prefill {d_prefill:.2e}, decode {d_decode:.2e}"
