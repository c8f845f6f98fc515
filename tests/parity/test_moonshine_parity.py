"""T3 for speech-to-text on the raw waveform (Moonshine): transformers
MoonshineForConditionalGeneration (float32, eager) vs the two-graph package mobius builds, run by
onnxruntime (onnxruntime-genai 0.18 has no model type for it), one test per moonshine_harness.ROWS
row (what each checks: tests/parity/moonshine_harness.py). The rows join the printed parity table.
Each row also checks `--dtype f16` (moonshine_harness.check_f16) and `--precision int4`
(check_int4), as test_whisper_parity.py does."""

import pytest

import harness as H
import moonshine_harness as M
import seq2seq_harness as S
import speech_harness as W

FIRST = len(H.rows()) + len(H.encoder_rows()) + len(S.ROWS) + len(W.ROWS)
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(M.ROWS)]
IDS = [f"{r.model_type}-{r.variant}" for r in M.ROWS]


@pytest.mark.parametrize("index,row", ROWS)
def test_moonshine_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = M.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", M.ROWS[:1], ids=IDS[:1])
def test_moonshine_f16(row, tmp_path_factory):
    failures = M.check_f16(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-f16"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", M.ROWS[:1], ids=IDS[:1])
def test_moonshine_int4(row, tmp_path_factory):
    failures = M.check_int4(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-int4"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", M.ROWS, ids=IDS)
def test_moonshine_optimum(row, tmp_path_factory):
    """--runtime optimum: Optimum's speech contract (ORTModelForMoonshine, transformers.js), the
    decoder passed encoder_hidden_states and the samples' encoder_attention_mask at every step
    (speech_harness.check_optimum)."""
    failures = M.run_optimum(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-optimum"), {})
    assert not failures, "\n".join(failures)
