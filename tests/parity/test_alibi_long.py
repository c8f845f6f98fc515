"""ALiBi past 256 positions: the parity rows prefill 48 tokens, short of the positions where
Falcon's bfloat16 rounding of the ALiBi positions starts to matter (bfloat16 holds every integer
only up to 256; without the rounding the logits move by ~1). One left-padded 400-token prefill per
ALiBi type, float32 logits vs transformers within the harness tolerance."""

import numpy as np
import pytest

import harness as H

ROWS = [("falcon", "alibi-16-heads"), ("bloom", "heads-12"), ("mpt", "default")]
LENGTH, PAD = 400, 37


@pytest.mark.parametrize("model_type,name", ROWS, ids=[f"{m}-{n}" for m, n in ROWS])
def test_long_padded_prefill(model_type, name, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"{model_type}-{name}-long")
    overrides = H.variant(model_type, name)
    H.write_checkpoint(model_type, overrides, work / "hf")
    ref = H.load_reference(work / "hf", overrides=overrides)
    lm = H.OnnxLM(H.build(work / "hf", work / "onnx"), ref.config)
    ids = np.random.RandomState(5).randint(0, ref.config.vocab_size, size=(2, LENGTH)).astype(np.int64)
    mask = np.ones_like(ids)
    mask[1, :PAD] = 0
    ids[1, :PAD] = 0
    pos = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)
    hf_logits, _ = H.hf_forward(H.float64(ref), ids, mask, pos)
    ox_logits, _ = lm(ids, mask, pos)
    valid = mask.astype(bool)
    delta = H.max_abs(ox_logits[valid], hf_logits[valid])
    assert delta <= H.TOL, f"{LENGTH}-token padded prefill max|Δ| {delta:.3g} > {H.TOL}"
