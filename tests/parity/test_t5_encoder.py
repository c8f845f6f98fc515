"""T5-family encoder-only checkpoints (src/archs/t5.cpp T5EncoderModel): a tiny T5EncoderModel /
MT5EncoderModel / UMT5EncoderModel (seed 0, every parameter re-randomized, save_pretrained: config.json
architectures "...EncoderModel", as Flux's and SD3's text_encoder_2 saves it) built alone from its
folder gives the feature-extraction graph (input_ids, attention_mask -> last_hidden_state), compared
with transformers' float64 forward on the non-padding tokens of a right- and a left-padded row,
within harness.TOL of the output's scale (the largest |reference|)."""

import numpy as np
import onnx
import pytest
import torch
import transformers

import encoder_harness as E
import harness as H
from seq2seq_harness import T5

ROWS = [
    ("T5EncoderModel", "relu", dict(T5, feed_forward_proj="relu")),
    # T5 v1.1 as Flux's T5-XXL text_encoder_2: gated-gelu, tie_word_embeddings false, 3 layers
    ("T5EncoderModel", "v1.1-untied", dict(T5, feed_forward_proj="gated-gelu", tie_word_embeddings=False, num_layers=3)),
    ("MT5EncoderModel", "base", dict(T5, feed_forward_proj="gated-gelu")),
    ("UMT5EncoderModel", "base", dict(T5, feed_forward_proj="gated-gelu")),  # a relative bias per layer
]
CONFIGS = {"T5EncoderModel": "T5Config", "MT5EncoderModel": "MT5Config", "UMT5EncoderModel": "UMT5Config"}


@pytest.mark.parametrize("cls,variant,kwargs", ROWS, ids=[f"{c}-{v}" for c, v, _ in ROWS])
def test_t5_encoder_parity(cls, variant, kwargs, tmp_path):
    torch.manual_seed(0)
    config = getattr(transformers, CONFIGS[cls])(**kwargs)
    model = getattr(transformers, cls)(config).eval()
    H.rerandomize(model)
    model.save_pretrained(tmp_path / "hf")
    path = H.build(tmp_path / "hf", tmp_path / "onnx")
    failures = H.check_model(path, {})
    meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
    if meta.get("task") not in (None, "feature-extraction"):
        failures.append(f"metadata task {meta.get('task')}")
    sess = H.ort_session(path)
    failures += H.io_problems(sess, {"input_ids", "attention_mask"}, {"last_hidden_state"})
    assert not failures, failures
    ids, mask, _ = E.encoder_batch(config)
    with torch.no_grad():
        want = H.float64(model)(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask)) \
            .last_hidden_state.double().numpy()
    (got,) = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})
    valid = mask.astype(bool)
    scale = float(np.max(np.abs(want[valid])))
    err = float(np.max(np.abs(got[valid].astype(np.float64) - want[valid])))
    print(f"{cls}-{variant}: max|Δ| {err:.3g}, scale {scale:.3g}")
    assert err <= H.TOL * scale, f"last_hidden_state max|Δ| {err:.3g} > {H.TOL} x scale {scale:.3g}"
