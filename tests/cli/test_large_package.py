"""A package over 2 GiB: the protobuf stays small (every weight is external data), tensors lie at
offsets past 2^31, and ONNX Runtime runs it to the logits of transformers.

The model is the tiny Llama of the parity suite with an MLP of 1.75M intermediate features: each of
its six MLP weights is 64 × 1,750,000 float32 (448 MB), 2.7 GB in all, so the last ones written
start past 2 GiB."""

import numpy as np
import onnx
import pytest
from safetensors import safe_open

import harness as H

INTERMEDIATE = 1_750_000
TOL = 1e-4


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    with H.scratch(tmp_path_factory, "large") as work:
        model = H.write_checkpoint("llama", {"intermediate_size": INTERMEDIATE}, work / "hf")
        path = H.build(work / "hf", work / "onnx", "--runtime", "none")
        yield work, model, path


def test_external_data_past_2gib(package):
    work, _, path = package
    data = H.data_path(work / "onnx")
    assert path.stat().st_size < 1 << 20, "the protobuf must stay small: all weights are external"
    proto = onnx.load(str(path), load_external_data=False)
    mapped = np.memmap(data, dtype=np.uint8, mode="r")
    past_2gib = []
    with safe_open(str(work / "hf" / "model.safetensors"), "np") as f:
        weights = set(f.keys())
        for init in proto.graph.initializer:
            if init.name not in weights:
                continue  # small constants of the graph (rope tables, shapes) may stay inline
            weights.discard(init.name)
            assert init.data_location == onnx.TensorProto.EXTERNAL, init.name
            kv = {e.key: e.value for e in init.external_data}
            assert kv["location"] == data.name
            off, length = int(kv["offset"]), int(kv["length"])
            src = f.get_tensor(init.name)
            assert length == src.nbytes, init.name
            # Linear weights are stored transposed, [in, out], as MatMul reads them
            want = src.T if list(init.dims) == list(src.shape[::-1]) and src.ndim == 2 else src
            got = mapped[off:off + length].view(np.float32).reshape(want.shape)
            assert np.array_equal(got, want), init.name
            if off > 2**31:
                past_2gib.append(init.name)
    assert not weights, f"checkpoint tensors without an initializer: {sorted(weights)}"
    assert past_2gib, "no tensor starts past 2 GiB: the test does not test what it says"
    print(f"\n{data.name} {data.stat().st_size / 2**30:.2f} GiB; past 2 GiB: {past_2gib}")


def test_onnxruntime_runs_it(package):
    _, model, path = package
    lm = H.OnnxLM(path, model.config)
    ids, mask, pos = H.prefill_batch(model.config.vocab_size)
    got, _ = lm(ids, mask, pos)
    want, _ = H.hf_forward(H.float64(model, inplace=True), ids, mask, pos)  # 2.7 GB: no copy
    valid = mask.astype(bool)
    delta = H.max_abs(got[valid], want[valid])
    print(f"\nprefill max |Δ| {delta:.2e}")
    assert delta <= TOL
