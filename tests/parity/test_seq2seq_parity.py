"""T3 for encoder-decoders (task text2text-generation): transformers AutoModelForSeq2SeqLM
(float32, eager) vs the two-graph package mobius builds, one test per seq2seq_harness.ROWS row
(what each checks: tests/parity/seq2seq_harness.py). The rows join the printed parity table.
A subset also checks `--dtype f16` (seq2seq_harness.check_f16) and `--precision int4`
(check_int4), as test_dtypes.py and test_quantized.py do for decoders."""

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


# --ep cpu (GraphLowering::attention: every attention of both graphs as MultiHeadAttention, the decoder's with its
# self-attention cache as past/present and its cross-attention on the carried cross cache): the T5 layout (relative
# bias in the mask, unscaled) and the BART layout, through the same checks as the canonical rows
EP_ROWS = [r for r in S.ROWS if (r.model_type, r.variant) in {("t5", "v1.1-untied"), ("bart", "scaled-untied")}]


@pytest.mark.parametrize("row", EP_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in EP_ROWS])
def test_seq2seq_ep_cpu(row, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-ep-cpu")
    failures = S.run(row, work, {}, ("--ep", "cpu"))
    failures += [p for g in ("encoder", "decoder") for p in H.attention_lowering_problems(work / "onnx" / f"{g}.onnx")]
    assert not failures, "\n".join(failures)


# --dtype f16 and --precision int4: the T5 layout (tied shared matrix, relative bias table) and the BART layout
# (untied embeddings, final_logits_bias, sinusoidal table constant in marian), the Switch experts, LED's local
# attention mask
F16_ROWS = [r for r in S.ROWS if (r.model_type, r.variant) in
            {("t5", "v1.1-untied"), ("umt5", "base"), ("bart", "scaled-untied"), ("marian", "base"),
             ("switch_transformers", "capacity-3"), ("led", "windows-4-8")}]


@pytest.mark.parametrize("row", F16_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in F16_ROWS])
def test_seq2seq_f16(row, tmp_path_factory):
    failures = S.check_f16(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-f16"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", F16_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in F16_ROWS])
def test_seq2seq_int4(row, tmp_path_factory):
    failures = S.check_int4(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-int4"))
    assert not failures, "\n".join(failures)
