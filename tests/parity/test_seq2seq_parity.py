"""T3 for encoder-decoders (task text2text-generation): transformers AutoModelForSeq2SeqLM
(float32, eager) vs the two-graph package mobius builds, one test per seq2seq_harness.ROWS row
(what each checks: tests/parity/seq2seq_harness.py). The rows join the printed parity table."""

import pytest

import harness as H
import seq2seq_harness as S

FIRST = len(H.rows()) + len(H.encoder_rows())
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(S.ROWS)]


@pytest.mark.parametrize("index,row", ROWS)
def test_seq2seq_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = S.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)
