"""T3 for vision encoders (tasks image-feature-extraction and image-classification): transformers
(float32, eager) vs the model.onnx mobius builds, one test per vision_harness.ROWS row (what each
checks: tests/parity/vision_harness.py). The rows join the printed parity table."""

import pytest

import harness as H
import seq2seq_harness as S
import vision_harness as V

FIRST = len(H.rows()) + len(H.encoder_rows()) + len(S.ROWS)
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(V.ROWS)]


@pytest.mark.parametrize("index,row", ROWS)
def test_vision_encoder_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = V.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


# --ep cpu (the CPU lowering passes over a vision graph) and --precision int4 on two Linear-heavy
# towers: ViT (cls token, pooler) and SigLIP (attention-pooling head)
EXTRA_ROWS = [r for r in V.ROWS if (r.model_type, r.variant) in {("vit", "base"), ("siglip_vision_model", "base")}]


@pytest.mark.parametrize("row", EXTRA_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in EXTRA_ROWS])
def test_vision_ep_cpu(row, tmp_path_factory):
    rec = {}
    failures = V.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-cpu"), rec, ("--ep", "cpu"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", EXTRA_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in EXTRA_ROWS])
def test_vision_int4(row, tmp_path_factory):
    failures = V.check_int4(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-int4"))
    assert not failures, "\n".join(failures)
