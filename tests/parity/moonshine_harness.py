"""Parity harness of speech-to-text on the raw waveform (Moonshine): tiny random
MoonshineForConditionalGeneration -> `mobius build` (encoder.onnx + decoder.onnx, docs/speech.md
"Moonshine") -> onnxruntime vs transformers. onnxruntime-genai 0.18 has no model type for Moonshine
(its "moonshine" config section is the streaming_enc_dec_asr type of moonshine_streaming), so the
package has no genai_config.json and onnxruntime runs it.

Rows are seq2seq_harness.Row (model type, variant, config kwargs). Each row checks, for a batch of 2
waveforms of SAMPLES samples whose row 0 has SHORT samples then zeros, with attention_mask:
  - the package: exactly the GRAPHS' files plus the copied checkpoint files, onnx.checker, the I/O names;
  - the encoder's encoder_hidden_states, encoder_attention_mask (equal to transformers' encoder
    output mask) and every decoder layer's cross keys/values against transformers;
  - a decoder prefill on the prompt plus random tokens (empty self caches) and DECODE_STEPS
    one-token steps, logits and the final self caches against transformers' EncoderDecoderCache;
  - GEN_NEW-token greedy generation by onnxruntime on the graphs equal to transformers' generate
    with the same decoder prompt (decoder_start_token_id), no token repeated.
Float32 tolerance: harness.TOL on every compared tensor. check_f16 and check_int4 as Whisper's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from transformers import (DynamicCache, EncoderDecoderCache, GenerationConfig, MoonshineConfig,
                          MoonshineForConditionalGeneration)

import harness as H
import seq2seq_harness as S
import speech_harness as SH

# head_dim 16: 14 rotated channels (partial_rotary_factor 0.9); the decoder's activation (silu) is
# not the encoder's (gelu)
MOONSHINE = dict(vocab_size=320, hidden_size=64, intermediate_size=96, encoder_num_hidden_layers=2,
                 decoder_num_hidden_layers=3, encoder_num_attention_heads=4, decoder_num_attention_heads=4,
                 max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                 decoder_start_token_id=1)
ROWS = [
    S.Row("moonshine", "tiny", dict(MOONSHINE)),
    # biased q/k/v, an untied proj_out, half the head rotated, relu / gelu feed-forwards
    S.Row("moonshine", "bias-untied-half-rotary",
          dict(MOONSHINE, attention_bias=True, tie_word_embeddings=False, encoder_hidden_act="relu",
               decoder_hidden_act="gelu", partial_rotary_factor=0.5, rope_theta=500.0)),
]
SAMPLES, SHORT = 16000, 11000  # 40 frames; row 0's audio covers 29 (frame j: sample 384 j)
DECODE_STEPS = 3
GEN_NEW = 24
GRAPHS = ("encoder", "decoder")


def types() -> set[str]:
    return {r.model_type for r in ROWS}


def write_checkpoint(row: S.Row, hf_dir: Path):
    """The tiny Moonshine of `row` (write_model)."""
    return write_model(MoonshineConfig(**row.config), hf_dir)


def write_model(config, hf_dir: Path):
    """MoonshineForConditionalGeneration from `config`, as speech_harness.write_model makes Whisper's."""
    return SH.write_model(config, hf_dir, MoonshineForConditionalGeneration)


def audio(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Two waveforms of SAMPLES samples, row 0 with SHORT samples then zeros, and the mask."""
    values = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(2, SAMPLES)).astype(np.float32)
    mask = np.ones((2, SAMPLES), np.int64)
    values[0, SHORT:] = 0
    mask[0, SHORT:] = 0
    return values, mask


def io_names(layers: int) -> tuple[set, set, set, set]:
    """(encoder inputs, encoder outputs, decoder inputs, decoder outputs) of the contract."""
    cross = {f"{kv}_cross_{i}" for i in range(layers) for kv in ("key", "value")}
    self_ = {f"{kv}_self_{i}" for i in range(layers) for kv in ("key", "value")}
    return ({"input_values", "attention_mask"},
            {"encoder_hidden_states", "encoder_attention_mask", *("present_" + n for n in cross)},
            {"input_ids", "encoder_attention_mask", *("past_" + n for n in cross | self_)},
            {"logits", *("present_" + n for n in self_)})


class OnnxMoonshine:
    """The encoder once; the decoder on the prompt with empty self caches, then one token per step
    with the presents; the encoder's cross caches and frame mask at every step."""

    def __init__(self, out_dir: Path):
        self.encoder = H.ort_session(H.graph_path(out_dir, "encoder"))
        self.decoder = H.ort_session(H.graph_path(out_dir, "decoder"))
        self.self_past = {i.name: i.shape for i in self.decoder.get_inputs() if "_self_" in i.name}
        self.layers = sum(n.startswith("past_key_self_") for n in self.self_past)
        self.enc_outputs = [o.name for o in self.encoder.get_outputs()]
        self.dec_outputs = [o.name for o in self.decoder.get_outputs()]

    def encode(self, values: np.ndarray, mask: np.ndarray) -> dict:
        out = self.encoder.run(self.enc_outputs, {"input_values": values, "attention_mask": mask})
        return dict(zip(self.enc_outputs, out))

    def step(self, ids, enc: dict, state, dtype=np.float32):
        """Returns (logits, state); state None = the first step (self caches of length 0 in `dtype`)."""
        feeds = {"input_ids": ids, "encoder_attention_mask": enc["encoder_attention_mask"]}
        feeds.update({"past_" + n[len("present_"):]: v for n, v in enc.items() if "_cross_" in n})
        if state is None:
            state = {"present_" + n[len("past_"):]: np.zeros((ids.shape[0], s[1], 0, s[3]), dtype)
                     for n, s in self.self_past.items()}
        feeds.update({"past_" + n[len("present_"):]: v for n, v in state.items()})
        got = dict(zip(self.dec_outputs, self.decoder.run(self.dec_outputs, feeds)))
        return got.pop("logits"), got


def prompt_ids(cfg) -> np.ndarray:
    return np.full((2, 1), cfg.decoder_start_token_id, np.int64)


def greedy(onnx: OnnxMoonshine, cfg, values, mask, n: int) -> np.ndarray:
    """n greedy tokens per row after the prompt, no token of the sequence repeated."""
    enc = onnx.encode(values, mask)
    seqs = prompt_ids(cfg)
    logits, state = onnx.step(seqs, enc, None, values.dtype)
    for _ in range(n):
        scores = logits[:, -1].astype(np.float32)
        np.put_along_axis(scores, seqs, -np.inf, axis=1)
        nxt = scores.argmax(-1)[:, None].astype(np.int64)
        seqs = np.concatenate([seqs, nxt], axis=1)
        logits, state = onnx.step(nxt, enc, state)
    return seqs[:, 1:]


def reference_tokens(ref, values, mask, n: int) -> np.ndarray:
    """transformers' generate: greedy from decoder_start_token_id, no token repeated; n new tokens."""
    gen = GenerationConfig(max_new_tokens=n, min_new_tokens=n, do_sample=False, num_beams=1,
                           no_repeat_ngram_size=S.NO_REPEAT_NGRAM_SIZE,
                           decoder_start_token_id=ref.config.decoder_start_token_id,
                           pad_token_id=ref.config.pad_token_id, eos_token_id=None, bos_token_id=None)
    with torch.no_grad():
        out = ref.generate(input_values=torch.from_numpy(values), attention_mask=torch.from_numpy(mask),
                           decoder_input_ids=torch.from_numpy(prompt_ids(ref.config)), generation_config=gen).numpy()
    return out[:, -n:]


def run(row: S.Row, work: Path, rec: dict) -> list[str]:
    """Fills `rec` (prefill = encoder, cross caches and decoder prefill max|Δ|, decode = the
    decode steps', tokens = matched greedy tokens); returns the failed checks."""
    model = write_checkpoint(row, work / "hf")
    return check(work / "hf", model, work / "onnx", rec, generate=True)


def check(hf_dir: Path, model, out_dir: Path, rec: dict, generate: bool) -> list[str]:
    """The parity check of the checkpoint in hf_dir (`model`: the in-memory model it was saved
    from): transformers loads it, `mobius build` packages it into out_dir; then the package, the
    I/O names, the encoder and the decoder steps (check_steps) and, with `generate`, greedy
    generation by onnxruntime. Returns the failures."""
    ref = MoonshineForConditionalGeneration.from_pretrained(hf_dir, dtype=torch.float32,
                                                            attn_implementation="eager").eval()
    H.build(hf_dir, out_dir)
    failures = check_package(hf_dir, out_dir, rec)
    if failures:
        return failures
    onnx = OnnxMoonshine(out_dir)
    names = io_names(ref.config.decoder_num_hidden_layers)
    failures = [f"encoder I/O: {p}" for p in H.io_problems(onnx.encoder, *names[:2])]
    failures += [f"decoder I/O: {p}" for p in H.io_problems(onnx.decoder, *names[2:])]
    if failures:
        return failures
    failures = check_steps(H.float64(ref), H.float64(model), onnx, rec)
    rec["genai"] = "n/a"
    if not generate:
        return failures
    values, mask = audio()
    want = reference_tokens(ref, values, mask, GEN_NEW)
    got = greedy(onnx, ref.config, values, mask, GEN_NEW)
    matched = int((got == want).all(axis=0).cumprod().sum()) if got.shape == want.shape else 0
    rec["tokens"] = f"{matched}/{GEN_NEW}"
    if got.shape != want.shape or not np.array_equal(got, want):
        failures.append(f"tokens: {matched}/{GEN_NEW} greedy tokens match transformers' generate "
                        f"(got {got.tolist()}, transformers {want.tolist()})")
    return failures


def check_package(hf_dir: Path, out_dir: Path, rec: dict) -> list[str]:
    """Exactly the GRAPHS' files and a byte-identical copy of each checkpoint file the package copies;
    onnx.checker on both graphs."""
    failures = []
    files = H.package_files(out_dir)
    copied = {f for f in S.COPIED + ("preprocessor_config.json",) if (hf_dir / f).is_file()}
    want = H.graph_files(GRAPHS, H.layout(out_dir)) | copied
    if files != want:
        return [f"package files {sorted(files)}, expected {sorted(want)}"]
    failures += H.copy_problems(hf_dir, out_dir, copied)
    for g in ("encoder", "decoder"):
        failures += [f"{g}: {f}" for f in H.check_model(H.graph_path(out_dir, g), rec)]
    return failures


@torch.no_grad()
def check_steps(ref, model, onnx: OnnxMoonshine, rec: dict) -> list[str]:
    """The encoder's outputs and the cross caches, a decoder prefill on the prompt plus random
    tokens and DECODE_STEPS one-token steps (logits), then the self caches after the last step,
    against `ref` (transformers' float64 model, harness.float64; EncoderDecoderCache). Sets rec prefill / decode (max|Δ|)."""
    cfg = ref.config
    values, mask = audio()
    v, m = torch.from_numpy(values), torch.from_numpy(mask)
    deltas = {"encoder": [], "prefill": [], "decode": []}
    hf_enc = ref.get_encoder()(input_values=v, attention_mask=m)
    # harness self-check: the checkpoint on disk is the model we made
    assert torch.equal(hf_enc.last_hidden_state, model.get_encoder()(input_values=v, attention_mask=m).last_hidden_state)
    enc = onnx.encode(values, mask)
    deltas["encoder"].append(H.delta(rec, enc["encoder_hidden_states"], hf_enc.last_hidden_state.numpy()))
    frames = hf_enc.attention_mask.numpy()
    failures = []
    if not np.array_equal(enc["encoder_attention_mask"], frames) or frames[0].all() or not frames[1].all():
        failures.append(f"encoder_attention_mask {enc['encoder_attention_mask'].tolist()}, transformers "
                        f"{frames.tolist()} (row 0 must have padded frames)")

    rng = np.random.default_rng(2)
    dec = np.concatenate([prompt_ids(cfg), rng.integers(3, cfg.vocab_size, size=(2, 3), dtype=np.int64)], axis=1)
    cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
    hf = ref(encoder_outputs=hf_enc, decoder_input_ids=torch.from_numpy(dec), past_key_values=cache, use_cache=True)
    logits, state = onnx.step(dec, enc, None)
    deltas["prefill"].append(H.delta(rec, logits, hf.logits.numpy()))
    cache = hf.past_key_values
    for i in range(onnx.layers):  # the cross caches the encoder graph computed
        c = cache.cross_attention_cache.layers[i]
        deltas["encoder"].append(H.delta(rec, enc[f"present_key_cross_{i}"], c.keys.numpy()))
        deltas["encoder"].append(H.delta(rec, enc[f"present_value_cross_{i}"], c.values.numpy()))
    for _ in range(DECODE_STEPS):
        nxt = rng.integers(3, cfg.vocab_size, size=(2, 1), dtype=np.int64)
        hf = ref(encoder_outputs=hf_enc, decoder_input_ids=torch.from_numpy(nxt), past_key_values=cache,
                 use_cache=True)
        cache = hf.past_key_values
        logits, state = onnx.step(nxt, enc, state)
        deltas["decode"].append(H.delta(rec, logits, hf.logits.numpy()))
    for i in range(onnx.layers):  # the self caches after the last step
        c = cache.self_attention_cache.layers[i]
        deltas["decode"].append(H.delta(rec, state[f"present_key_self_{i}"], c.keys.numpy()))
        deltas["decode"].append(H.delta(rec, state[f"present_value_self_{i}"], c.values.numpy()))

    rec["prefill"] = max(deltas["encoder"] + deltas["prefill"])
    rec["decode"] = max(deltas["decode"])
    return failures + [f"{what} max|Δ| {max(d):.3g} > {H.TOL}" for what, d in deltas.items() if not max(d) <= H.TOL]


def check_f16(row: S.Row, work: Path) -> list[str]:
    """`--dtype f16`: seq2seq_harness.f16_initializer_failures on both graphs (every weight the
    float16 bits of its checkpoint tensor, the same weights as the float32 build); a prefill plus a
    decode step in onnxruntime on float16 input_values give finite outputs whose greedy tokens are
    those of the float32 build."""
    hf_dir, out_dir, f32_dir = work / "hf", work / "onnx", work / "onnx-f32"
    model = write_checkpoint(row, hf_dir)
    H.build(hf_dir, out_dir, "--dtype", "f16")
    H.build(hf_dir, f32_dir)
    failures = S.f16_initializer_failures(hf_dir, out_dir, f32_dir)
    values, mask = audio()
    argmax = {}
    for name, d, dtype in (("f16", out_dir, np.float16), ("f32", f32_dir, np.float32)):
        m = OnnxMoonshine(d)
        enc = m.encode(values.astype(dtype), mask)
        first, state = m.step(prompt_ids(model.config), enc, None, dtype)
        nxt = first[:, -1:].argmax(-1).astype(np.int64)
        second, _ = m.step(nxt, enc, state, dtype)
        if not all(np.isfinite(v).all() for v in (*enc.values(), first, second)):
            failures.append(f"{name} run: non-finite values")
        argmax[name] = (first[:, -1].argmax(-1).tolist(), second[:, -1].argmax(-1).tolist())
    if argmax["f16"] != argmax["f32"]:
        failures.append(f"float16 greedy tokens {argmax['f16']}, float32 {argmax['f32']}")
    return failures


def check_int4(row: S.Row, work: Path) -> list[str]:
    """`--precision int4` (seq2seq_harness.int4_reference: every MatMul by a 2-D checkpoint weight
    of both graphs but the tied proj_out a MatMulNBits, onnxruntime's quantizer applied to the
    float build on the same nodes): the encoder's outputs and the logits of a prefill and
    DECODE_STEPS steps equal onnxruntime's, max|Δ| <= harness.TOL."""
    hf_dir, q_dir, f_dir, ref_dir = work / "hf", work / "int4", work / "float", work / "ort-int4"
    model = write_checkpoint(row, hf_dir)
    failures = S.int4_reference(hf_dir, q_dir, f_dir, ref_dir)
    if failures:
        return failures
    values, mask = audio()
    rng = np.random.default_rng(3)
    tokens = [prompt_ids(model.config)] + [rng.integers(3, row.config["vocab_size"], size=(2, 1))
                                           for _ in range(DECODE_STEPS)]
    outs = {}
    for name, d in (("mobius", q_dir), ("onnxruntime", ref_dir)):
        m = OnnxMoonshine(d)
        enc, state, out = m.encode(values, mask), None, []
        for t in tokens:
            lg, state = m.step(t, enc, state)
            out.append(lg)
        outs[name] = [v.astype(np.float32) for v in enc.values()] + [np.concatenate(out, axis=1)]
    d = max(H.max_abs(a, b) for a, b in zip(outs["mobius"], outs["onnxruntime"]))
    if not d <= H.TOL:
        failures.append(f"int4 encoder outputs and logits vs onnxruntime's quantizer: max|Δ| {d:.3g} > {H.TOL}")
    return failures


def run_optimum(row: S.Row, work: Path, rec: dict) -> list[str]:
    """speech_harness.check_optimum for a Moonshine row on audio() (row 0 padded: the decoder reduces
    the samples' encoder_attention_mask to the frames)."""
    write_checkpoint(row, work / "hf")
    ref = MoonshineForConditionalGeneration.from_pretrained(work / "hf", dtype=torch.float32,
                                                            attn_implementation="eager").eval()
    values, mask = audio()
    return SH.check_optimum(ref, work / "hf", work / "onnx", {"input_values": values, "attention_mask": mask},
                            prompt_ids(ref.config), reference_tokens(ref, values, mask, GEN_NEW), rec)
