"""T3 for vision-language models (task image-text-to-text): transformers
AutoModelForImageTextToText (float32, eager) vs the three-graph package mobius builds, one test per
vlm_harness.ROWS row (what each checks: tests/parity/vlm_harness.py). The rows join the printed
parity table."""

import pytest

import harness as H
import seq2seq_harness as S
import vlm_harness as V

FIRST = len(H.rows()) + len(H.encoder_rows()) + len(S.ROWS)
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(V.ROWS)]


@pytest.mark.parametrize("index,row", ROWS)
def test_vlm_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = V.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


def test_vlm_ep_cpu(tmp_path_factory):
    """`--ep cpu` lowers the decoder graph (GroupQueryAttention, ...): the image batch's prefill and
    decode steps still equal transformers'."""
    rec: dict = {}
    failures = V.run(V.ROWS[0], tmp_path_factory.mktemp("qwen2_5_vl-ep-cpu"), rec, ("--ep", "cpu"), full=False)
    assert not failures, "\n".join(failures)


def test_vlm_int4(tmp_path_factory):
    failures = V.check_int4(V.ROWS[0], tmp_path_factory.mktemp("qwen2_5_vl-int4"))
    assert not failures, "\n".join(failures)
