"""T3 and T5 for speech-to-text (Whisper): transformers WhisperForConditionalGeneration (float32,
eager) vs the two-graph package mobius builds, run by onnxruntime and by onnxruntime-genai's
whisper pipeline, one test per speech_harness.ROWS row (what each checks:
tests/parity/speech_harness.py). The rows join the printed parity table. Each row also checks
`--dtype f16` (speech_harness.check_f16) and `--precision int4` (check_int4), as
test_dtypes.py and test_quantized.py do for decoders."""

import pytest

import harness as H
import seq2seq_harness as S
import speech_harness as W

FIRST = len(H.rows()) + len(H.encoder_rows()) + len(S.ROWS)
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(W.ROWS)]
IDS = [f"{r.model_type}-{r.variant}" for r in W.ROWS]


@pytest.mark.parametrize("index,row", ROWS)
def test_whisper_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = W.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", W.ROWS[:1], ids=IDS[:1])
def test_whisper_ep_cpu(row, tmp_path_factory):
    """--ep cpu: both graphs' attention as MultiHeadAttention (the decoder's cross-attention reading
    the cross cache the encoder graph emits), through the same checks, onnxruntime-genai's
    whisper pipeline included."""
    work = tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-ep-cpu")
    failures = W.run(row, work, {}, ("--ep", "cpu"))
    failures += [p for g in ("encoder", "decoder") for p in H.attention_lowering_problems(H.graph_path(work / "onnx", g))]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", W.ROWS, ids=IDS)
def test_whisper_f16(row, tmp_path_factory):
    failures = W.check_f16(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-f16"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", W.ROWS, ids=IDS)
def test_whisper_int4(row, tmp_path_factory):
    failures = W.check_int4(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-int4"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", W.ROWS, ids=IDS)
def test_whisper_optimum(row, tmp_path_factory):
    """--runtime optimum: Optimum's speech contract (ORTModelForSpeechSeq2Seq, transformers.js), the
    decoder passed encoder_hidden_states at every step (speech_harness.check_optimum)."""
    failures = W.run_optimum(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-optimum"), {})
    assert not failures, "\n".join(failures)
