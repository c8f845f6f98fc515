"""T3 for speech encoders (task audio-feature-extraction): transformers AutoModel / AutoModelForCTC
(float32, eager) vs the model.onnx mobius builds, one test per audio_harness.ROWS row (what each
checks: tests/parity/audio_harness.py). The rows join the printed parity table.
Also: one row per conv-norm layout built with `--ep cpu`, against the same reference, and
`--dtype f16` rows (audio_harness.check_f16: weights bit-exact, a finite run)."""

import pytest

import audio_harness as A
import harness as H
import seq2seq_harness as S

FIRST = len(H.rows()) + len(H.encoder_rows()) + len(S.ROWS)
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(A.ROWS)]


@pytest.mark.parametrize("index,row", ROWS)
def test_audio_encoder_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = A.compare(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


EP_ROWS = [r for r in A.ROWS if (r.model_type, r.variant) in {("wav2vec2", "group-ctc"), ("wav2vec2", "layer-stable")}]


@pytest.mark.parametrize("row", EP_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in EP_ROWS])
def test_audio_encoder_ep_cpu(row, tmp_path_factory):
    rec = {}
    work = tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-ep-cpu")
    failures = A.compare(row, work, rec, build_args=("--ep", "cpu"))
    failures += H.attention_lowering_problems(H.graph_path(work / "onnx", "model"))
    assert not failures, "\n".join(failures)


# --dtype f16: both conv norms (InstanceNormalization, LayerNormalization), the weight-norm fold,
# WavLM's relative bias, the conformer's batch norm and relative attention, SEW-D's disentangled attention
F16_ROWS = [r for r in A.ROWS if (r.model_type, r.variant) in
            {("wav2vec2", "group-ctc"), ("wav2vec2", "layer-stable"), ("wavlm", "group-ctc"),
             ("wav2vec2-conformer", "relative-ctc"), ("sew-d", "group-ctc")}]


@pytest.mark.parametrize("row", F16_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in F16_ROWS])
def test_audio_encoder_f16(row, tmp_path_factory):
    failures = A.check_f16(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-f16"))
    assert not failures, "\n".join(failures)


def test_training_only_tensors_are_not_reported_unused(tmp_path):
    """A wav2vec2 checkpoint saved with mask_time_prob > 0 holds masked_spec_embed (the SpecAugment
    vector, training only): the build reads every other tensor and warns of none unused."""
    from safetensors.numpy import load_file  # noqa: PLC0415

    row = next(r for r in A.ROWS if (r.model_type, r.variant) == ("wav2vec2", "group-ctc"))
    model = A.write_checkpoint(row, tmp_path / "hf")
    assert model.config.mask_time_prob > 0
    stored = load_file(tmp_path / "hf" / "model.safetensors")
    assert "wav2vec2.masked_spec_embed" in stored
    r = H.run_mobius("build", "--config", tmp_path / "hf", tmp_path / "out", "--runtime", "none")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    assert f", {len(stored) - 1} weights," in r.stdout, r.stdout
