"""Parity harness of the speech-to-text task: tiny random WhisperForConditionalGeneration ->
`mobius build` (encoder.onnx + decoder.onnx + genai_config.json, docs/speech.md) -> onnxruntime and
onnxruntime-genai vs transformers.

Rows are seq2seq_harness.Row (model type, variant, config kwargs). Each row checks, for a batch of 2
random log-mel inputs [2, num_mel_bins, 3000]:
  - the package: exactly the graphs, FILES plus the copied checkpoint files, onnx.checker, the I/O names;
  - the encoder's encoder_hidden_states and every decoder layer's cross keys/values
    (present_{key,value}_cross_{i}) against transformers' encoder output and cross cache;
  - a decoder prefill on the forced prompt (empty self caches) and DECODE_STEPS one-token steps,
    logits and the final self caches against transformers' EncoderDecoderCache;
  - GEN_NEW-token greedy generation equal to transformers' generate with the same forced
    decoder prompt (decoder_input_ids), no token repeated (seq2seq_harness.NO_REPEAT_NGRAM_SIZE),
    run by onnxruntime on the graphs and by onnxruntime-genai 0.18 on the package.
Float32 tolerance: harness.TOL on every compared tensor.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from transformers import (DynamicCache, EncoderDecoderCache, GenerationConfig, WhisperConfig,
                          WhisperForConditionalGeneration)

import harness as H
import seq2seq_harness as S

# encoder and decoder differ in layers, heads and widths, so that a swapped field shows; 1500
# encoder positions (3000 frames) as onnxruntime-genai requires of every whisper package
WHISPER = dict(vocab_size=320, d_model=64, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4,
               decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=96, num_mel_bins=80,
               max_source_positions=1500, max_target_positions=64, pad_token_id=0, bos_token_id=1,
               eos_token_id=2, decoder_start_token_id=3, suppress_tokens=None, begin_suppress_tokens=None)
ROWS = [
    S.Row("whisper", "tiny", dict(WHISPER)),
    # large-v3's 128 mel bins, turbo's shallow decoder, an untied proj_out, relu feed-forward
    S.Row("whisper", "128-mel-untied", dict(WHISPER, num_mel_bins=128, encoder_layers=3, decoder_layers=1,
                                            tie_word_embeddings=False, activation_function="relu")),
]
PROMPT = [3, 7, 8, 9]  # the forced decoder prompt (<|startoftranscript|><|lang|><|task|><|notimestamps|>)
DECODE_STEPS = 3
GEN_NEW = 24
FRAMES = 3000
FILES = {"genai_config.json", "audio_processor_config.json"}  # with the encoder and decoder graphs
COPIED = S.COPIED + ("preprocessor_config.json",)


def types() -> set[str]:
    return {r.model_type for r in ROWS}


def write_checkpoint(row: S.Row, hf_dir: Path):
    """The tiny Whisper of `row` (seed 0), every parameter re-randomized (harness.rerandomize: the
    decoder's embed_tokens at unit scale), saved to hf_dir; returns the in-memory model."""
    return write_model(WhisperConfig(**row.config), hf_dir)


def write_model(config, hf_dir: Path, model_class=WhisperForConditionalGeneration):
    """`model_class` (Whisper's, or Moonshine's) from `config` (seed 0, eager attention as the
    reference loads it), every parameter re-randomized (harness.rerandomize), saved to hf_dir;
    returns it."""
    torch.manual_seed(0)
    model = model_class._from_config(config, dtype=torch.float32, attn_implementation="eager").eval()
    H.rerandomize(model)
    model.save_pretrained(hf_dir)
    return model


def features(num_mel_bins: int, frames: int = FRAMES, seed: int = 1) -> np.ndarray:
    """A batch of 2 log-mel inputs [2, num_mel_bins, frames] in WhisperFeatureExtractor's range."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=(2, num_mel_bins, frames)).astype(np.float32)


def io_names(layers: int) -> tuple[set, set, set, set]:
    """(encoder inputs, encoder outputs, decoder inputs, decoder outputs) of the contract."""
    cross = {f"{kv}_cross_{i}" for i in range(layers) for kv in ("key", "value")}
    self_ = {f"{kv}_self_{i}" for i in range(layers) for kv in ("key", "value")}
    return ({"audio_features"}, {"encoder_hidden_states", *("present_" + n for n in cross)},
            {"input_ids", *("past_" + n for n in cross | self_)}, {"logits", *("present_" + n for n in self_)})


class OnnxWhisper:
    """Runs the two graphs as onnxruntime-genai does: the encoder once; the decoder on the prompt
    with empty self caches, then one token per step with the presents; the encoder's cross caches
    at every step."""

    def __init__(self, out_dir: Path):
        self.encoder = H.ort_session(H.graph_path(out_dir, "encoder"))
        self.decoder = H.ort_session(H.graph_path(out_dir, "decoder"))
        self.self_past = {i.name: i.shape for i in self.decoder.get_inputs() if "_self_" in i.name}
        self.layers = sum(n.startswith("past_key_self_") for n in self.self_past)
        self.enc_outputs = [o.name for o in self.encoder.get_outputs()]
        self.dec_outputs = [o.name for o in self.decoder.get_outputs()]

    def encode(self, feats: np.ndarray) -> dict:
        return dict(zip(self.enc_outputs, self.encoder.run(self.enc_outputs, {"audio_features": feats})))

    def step(self, ids, enc: dict, state, dtype=np.float32):
        """Returns (logits, state); state None = the first step (self caches of length 0 in `dtype`)."""
        feeds = {"input_ids": ids}
        feeds.update({"past_" + n[len("present_"):]: v for n, v in enc.items() if "_cross_" in n})
        if state is None:
            state = {"present_" + n[len("past_"):]: np.zeros((ids.shape[0], s[1], 0, s[3]), dtype)
                     for n, s in self.self_past.items()}
        feeds.update({"past_" + n[len("present_"):]: v for n, v in state.items()})
        got = dict(zip(self.dec_outputs, self.decoder.run(self.dec_outputs, feeds)))
        return got.pop("logits"), got


def prompt_ids() -> np.ndarray:
    return np.array([PROMPT, PROMPT], np.int64)


def greedy(onnx: OnnxWhisper, feats: np.ndarray, n: int) -> np.ndarray:
    """n greedy tokens per row after the forced prompt, no token of the sequence repeated (the
    caches in the dtype of feats)."""
    enc = onnx.encode(feats)
    seqs = prompt_ids()
    logits, state = onnx.step(seqs, enc, None, feats.dtype)
    for _ in range(n):
        scores = logits[:, -1].copy()
        np.put_along_axis(scores, seqs, -np.inf, axis=1)
        nxt = scores.argmax(-1)[:, None].astype(np.int64)
        seqs = np.concatenate([seqs, nxt], axis=1)
        logits, state = onnx.step(nxt, enc, state)
    return seqs[:, len(PROMPT):]


def genai_greedy(package_dir: Path, feats: np.ndarray, n: int) -> np.ndarray:
    """n greedy tokens per row by onnxruntime-genai's whisper pipeline on the package: the features
    and the forced prompt given as its named inputs (audio_features, input_ids), no_repeat_ngram_size 1."""
    import onnxruntime_genai as og

    model = og.Model(str(package_dir))
    inputs = og.NamedTensors()
    inputs["audio_features"] = feats
    inputs["input_ids"] = prompt_ids().astype(np.int32)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(PROMPT) + n, batch_size=feats.shape[0],
                              no_repeat_ngram_size=S.NO_REPEAT_NGRAM_SIZE)
    gen = og.Generator(model, params)
    gen.set_inputs(inputs)
    while not gen.is_done():
        gen.generate_next_token()
    return np.array([gen.get_sequence(i)[len(PROMPT):] for i in range(feats.shape[0])], np.int64)


def reference_tokens(ref, feats: np.ndarray, n: int) -> np.ndarray:
    """transformers' generate: greedy, the forced prompt as decoder_input_ids, no suppressed tokens,
    no token repeated; the n new tokens per row."""
    gen = GenerationConfig(max_new_tokens=n, min_new_tokens=n, do_sample=False, num_beams=1,
                           no_repeat_ngram_size=S.NO_REPEAT_NGRAM_SIZE, decoder_start_token_id=PROMPT[0],
                           pad_token_id=ref.config.pad_token_id, eos_token_id=None, bos_token_id=None,
                           suppress_tokens=None, begin_suppress_tokens=None)
    with torch.no_grad():
        out = ref.generate(input_features=torch.from_numpy(feats), decoder_input_ids=torch.from_numpy(prompt_ids()),
                           generation_config=gen).numpy()
    return out[:, -n:]


def run(row: S.Row, work: Path, rec: dict, build_args=()) -> list[str]:
    """Fills `rec` (the parity table's row: prefill = encoder, cross caches and decoder prefill
    max|Δ|, decode = the decode steps', tokens = matched greedy tokens, genai = onnxruntime-genai's);
    returns the failed checks. `build_args`: further `mobius build` options (--ep cpu)."""
    model = write_checkpoint(row, work / "hf")
    return check(work / "hf", model, work / "onnx", rec, generate=True, build_args=build_args)


def check(hf_dir: Path, model, out_dir: Path, rec: dict, generate: bool, build_args=()) -> list[str]:
    """The parity check of the checkpoint in hf_dir (`model`: the in-memory model it was saved
    from): transformers loads it, `mobius build` packages it into out_dir; then the package
    (check_package), the I/O names, the encoder and the decoder steps (check_steps) and, with
    `generate`, greedy generation by onnxruntime and by onnxruntime-genai. Returns the failures."""
    ref = WhisperForConditionalGeneration.from_pretrained(hf_dir, dtype=torch.float32,
                                                          attn_implementation="eager").eval()
    H.build(hf_dir, out_dir, *build_args)
    failures = check_package(hf_dir, out_dir, ref.config, rec)
    if failures:
        return failures
    onnx = OnnxWhisper(out_dir)
    names = io_names(ref.config.decoder_layers)
    failures = [f"encoder I/O: {p}" for p in H.io_problems(onnx.encoder, *names[:2])]
    failures += [f"decoder I/O: {p}" for p in H.io_problems(onnx.decoder, *names[2:])]
    if failures:
        return failures
    failures = check_steps(H.float64(ref), H.float64(model), onnx, rec)
    rec["genai"] = "n/a"
    if not generate:
        return failures
    feats = features(ref.config.num_mel_bins)
    want = reference_tokens(ref, feats, GEN_NEW)
    for name, got in (("tokens", greedy(onnx, feats, GEN_NEW)), ("genai", genai_greedy(out_dir, feats, GEN_NEW))):
        matched = int((got == want).all(axis=0).cumprod().sum()) if got.shape == want.shape else 0
        rec[name] = f"{matched}/{GEN_NEW}"
        if got.shape != want.shape or not np.array_equal(got, want):
            failures.append(f"{name}: {matched}/{GEN_NEW} greedy tokens match transformers' generate "
                            f"(got {got.tolist()}, transformers {want.tolist()})")
    return failures


def check_package(hf_dir: Path, out_dir: Path, cfg, rec: dict) -> list[str]:
    """Exactly the graphs, FILES and a byte-identical copy of each COPIED file hf_dir has; onnx.checker on both
    graphs; genai_config.json's sizes are those of `cfg` (transformers' WhisperConfig), and
    audio_processor_config.json's mel bins."""
    failures = []
    files = H.package_files(out_dir)
    copied = {f for f in COPIED if (hf_dir / f).is_file()}
    want = FILES | copied | H.graph_files(("encoder", "decoder"), H.layout(out_dir))
    if files != want:
        failures.append(f"package files {sorted(files)}, expected {sorted(want)}")
        return failures
    failures += H.copy_problems(hf_dir, out_dir, copied)
    for g in ("encoder", "decoder"):
        failures += [f"{g}: {f}" for f in H.check_model(H.graph_path(out_dir, g), rec)]
    m = json.loads((out_dir / "genai_config.json").read_text())["model"]
    want = {"type": "whisper", "vocab_size": cfg.vocab_size, "context_length": cfg.max_target_positions,
            "encoder.hidden_size": cfg.d_model, "decoder.num_hidden_layers": cfg.decoder_layers,
            "decoder.num_attention_heads": cfg.decoder_attention_heads,
            "decoder.head_size": cfg.d_model // cfg.decoder_attention_heads}
    got = {k: m[k.split(".")[0]][k.split(".")[1]] if "." in k else m[k] for k in want}
    if got != want:
        failures.append(f"genai_config.json: {got}, expected {want}")
    mels = json.loads((out_dir / "audio_processor_config.json").read_text())["feature_extraction"]["sequence"][2]
    if mels["operation"]["attrs"]["n_mel"] != cfg.num_mel_bins:
        failures.append(f"audio_processor_config.json: n_mel {mels['operation']['attrs']['n_mel']}")
    return failures


@torch.no_grad()
def check_steps(ref, model, onnx: OnnxWhisper, rec: dict) -> list[str]:
    """encoder_hidden_states and the cross caches, a decoder prefill on the prompt plus random
    tokens and DECODE_STEPS one-token steps (logits), then the self caches after the last step,
    against `ref` (transformers' float64 model, harness.float64; EncoderDecoderCache). Sets rec prefill / decode (max|Δ|)."""
    cfg = ref.config
    feats = features(cfg.num_mel_bins, 2 * cfg.max_source_positions)
    deltas = {"encoder": [], "prefill": [], "decode": []}
    hf_enc = ref.get_encoder()(input_features=torch.from_numpy(feats)).last_hidden_state
    # harness self-check: the checkpoint on disk is the model we made
    assert torch.equal(hf_enc, model.get_encoder()(input_features=torch.from_numpy(feats)).last_hidden_state)
    enc = onnx.encode(feats)
    deltas["encoder"].append(H.delta(rec, enc["encoder_hidden_states"], hf_enc.numpy()))

    rng = np.random.default_rng(2)
    dec = np.concatenate([prompt_ids(), rng.integers(4, cfg.vocab_size, size=(2, 2), dtype=np.int64)], axis=1)
    # the caches without the config: DynamicCache(config=...) turns every layer into a sliding
    # cache when config.json has a sliding_window, a field WhisperDecoder's attention never reads
    cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
    hf = ref(encoder_outputs=(hf_enc,), decoder_input_ids=torch.from_numpy(dec), past_key_values=cache, use_cache=True)
    logits, state = onnx.step(dec, enc, None)
    deltas["prefill"].append(H.delta(rec, logits, hf.logits.numpy()))
    cache = hf.past_key_values
    for i in range(onnx.layers):  # the cross caches the encoder graph computed
        c = cache.cross_attention_cache.layers[i]
        deltas["encoder"].append(H.delta(rec, enc[f"present_key_cross_{i}"], c.keys.numpy()))
        deltas["encoder"].append(H.delta(rec, enc[f"present_value_cross_{i}"], c.values.numpy()))
    for _ in range(DECODE_STEPS):
        nxt = rng.integers(4, cfg.vocab_size, size=(2, 1), dtype=np.int64)
        hf = ref(encoder_outputs=(hf_enc,), decoder_input_ids=torch.from_numpy(nxt), past_key_values=cache,
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
    return [f"{what} max|Δ| {max(d):.3g} > {H.TOL}" for what, d in deltas.items() if not max(d) <= H.TOL]


def check_f16(row: S.Row, work: Path) -> list[str]:
    """`--dtype f16`: seq2seq_harness.f16_initializer_failures on both graphs (every weight the
    float16 bits of its checkpoint tensor, the same weights as the float32 build); a prefill plus a
    decode step in onnxruntime on float16 audio_features give finite logits whose greedy tokens are
    those of the float32 build; onnxruntime-genai's GEN_NEW greedy tokens on the float16 package
    equal onnxruntime's on its graphs."""
    hf_dir, out_dir, f32_dir = work / "hf", work / "onnx", work / "onnx-f32"
    write_checkpoint(row, hf_dir)
    H.build(hf_dir, out_dir, "--dtype", "f16")
    H.build(hf_dir, f32_dir)
    failures = S.f16_initializer_failures(hf_dir, out_dir, f32_dir)
    feats = features(row.config["num_mel_bins"])
    argmax = {}
    for name, d, dtype in (("f16", out_dir, np.float16), ("f32", f32_dir, np.float32)):
        m = OnnxWhisper(d)
        enc = m.encode(feats.astype(dtype))
        first, state = m.step(prompt_ids(), enc, None, dtype)
        nxt = first[:, -1:].argmax(-1).astype(np.int64)
        second, _ = m.step(nxt, enc, state, dtype)
        if not all(np.isfinite(v).all() for v in (*enc.values(), first, second)):
            failures.append(f"{name} run: non-finite values")
        argmax[name] = (first[:, -1].argmax(-1).tolist(), second[:, -1].argmax(-1).tolist())
    if argmax["f16"] != argmax["f32"]:
        failures.append(f"float16 greedy tokens {argmax['f16']}, float32 {argmax['f32']}")
    f16 = feats.astype(np.float16)  # onnxruntime-genai runs the float16 package (its caches in float16)
    want, got = greedy(OnnxWhisper(out_dir), f16, GEN_NEW), genai_greedy(out_dir, f16, GEN_NEW)
    if not np.array_equal(got, want):
        failures.append(f"onnxruntime-genai on the float16 package: {got.tolist()}, onnxruntime {want.tolist()}")
    return failures


def check_int4(row: S.Row, work: Path) -> list[str]:
    """`--precision int4` (seq2seq_harness.int4_reference: every MatMul by a 2-D checkpoint weight
    of both graphs but the tied proj_out a MatMulNBits, onnxruntime's quantizer applied to the
    float build on the same nodes): the encoder's outputs and the logits of a prefill and
    DECODE_STEPS steps equal onnxruntime's, max|Δ| <= harness.TOL."""
    hf_dir, q_dir, f_dir, ref_dir = work / "hf", work / "int4", work / "float", work / "ort-int4"
    write_checkpoint(row, hf_dir)
    failures = S.int4_reference(hf_dir, q_dir, f_dir, ref_dir)
    if failures:
        return failures
    feats = features(row.config["num_mel_bins"])
    rng = np.random.default_rng(3)
    tokens = [prompt_ids()] + [rng.integers(4, row.config["vocab_size"], size=(2, 1)) for _ in range(DECODE_STEPS)]
    outs = {}
    for name, d in (("mobius", q_dir), ("onnxruntime", ref_dir)):
        m = OnnxWhisper(d)
        enc, state, out = m.encode(feats), None, []
        for t in tokens:
            lg, state = m.step(t, enc, state)
            out.append(lg)
        outs[name] = [*enc.values(), np.concatenate(out, axis=1)]
    d = max(H.max_abs(a, b) for a, b in zip(outs["mobius"], outs["onnxruntime"]))
    if not d <= H.TOL:
        failures.append(f"int4 encoder outputs and logits vs onnxruntime's quantizer: max|Δ| {d:.3g} > {H.TOL}")
    return failures


# --runtime optimum: Optimum's speech contract (docs/speech.md "Optimum and transformers.js")

class OnnxOptimumSpeech:
    """Runs the two graphs of Optimum's speech contract as ORTModelForSpeechSeq2Seq
    (optimum-onnx modeling_seq2seq.py ORTDecoderForSeq2Seq.forward) and transformers.js do: the
    encoder once (last_hidden_state); the decoder at every step with encoder_hidden_states (and a
    waveform model's encoder_attention_mask: the samples' attention_mask), empty caches first, then
    the presents of both caches."""

    def __init__(self, out_dir: Path):
        self.encoder = H.ort_session(H.graph_path(out_dir, "encoder"))
        self.decoder = H.ort_session(H.graph_path(out_dir, "decoder"))
        self.past = {i.name: i.shape for i in self.decoder.get_inputs() if i.name.startswith("past_key_values.")}
        self.layers = sum(n.endswith(".decoder.key") for n in self.past)
        self.outputs = [o.name for o in self.decoder.get_outputs()]

    def encode(self, feeds: dict) -> np.ndarray:
        return self.encoder.run(["last_hidden_state"], feeds)[0]

    def step(self, ids, enc, state, mask=None):
        """Returns (logits, state); state None = the first step (caches of length 0)."""
        feeds = {"input_ids": ids, "encoder_hidden_states": enc}
        if mask is not None:
            feeds["encoder_attention_mask"] = mask
        if state is None:
            state = {"present." + n[len("past_key_values."):]: np.zeros((ids.shape[0], s[1], 0, s[3]), enc.dtype)
                     for n, s in self.past.items()}
        feeds.update({"past_key_values." + n[len("present."):]: v for n, v in state.items()})
        got = dict(zip(self.outputs, self.decoder.run(self.outputs, feeds)))
        return got.pop("logits"), got


def optimum_io_names(layers: int, encoder_inputs: set, waveform: bool) -> tuple[set, set, set, set]:
    """(encoder inputs, encoder outputs, decoder inputs, decoder outputs) of Optimum's contract."""
    caches = {f"{i}.{part}.{kv}" for i in range(layers) for part in ("decoder", "encoder") for kv in ("key", "value")}
    dec_in = {"input_ids", "encoder_hidden_states", *("past_key_values." + c for c in caches)}
    return (encoder_inputs, {"last_hidden_state"}, dec_in | ({"encoder_attention_mask"} if waveform else set()),
            {"logits", *("present." + c for c in caches)})


@torch.no_grad()
def check_optimum(ref, hf_dir: Path, out_dir: Path, enc_feeds: dict, prompt: np.ndarray, want_tokens: np.ndarray,
                  rec: dict) -> list[str]:
    """`mobius build --runtime optimum` of hf_dir into out_dir, run as OnnxOptimumSpeech says, against
    `ref` (transformers' model, float32; compared in float64): the package files (the graphs and the
    copied checkpoint files, no genai_config.json), the I/O names, the encoder's last_hidden_state,
    a prefill on `prompt` plus 2 random tokens and DECODE_STEPS one-token steps (logits), both
    caches after the last step, and greedy generation (no token repeated) equal to `want_tokens`
    (transformers' generate from the same prompt). enc_feeds: the encoder's inputs (input_features,
    or input_values and attention_mask). Sets rec prefill / decode / tokens."""
    H.build(hf_dir, out_dir, "--runtime", "optimum")
    files = H.package_files(out_dir)
    copied = {f for f in COPIED if (hf_dir / f).is_file()}
    graphs = H.graph_files(("encoder", "decoder"), H.layout(out_dir))
    if files != graphs | copied:
        return [f"package files {sorted(files)}, expected {sorted(graphs | copied)}"]
    failures = [f"{g}: {f}" for g in ("encoder", "decoder") for f in H.check_model(H.graph_path(out_dir, g), rec)]
    onnx = OnnxOptimumSpeech(out_dir)
    mask = enc_feeds.get("attention_mask")
    names = optimum_io_names(onnx.layers, set(enc_feeds), mask is not None)
    failures += [f"encoder I/O: {p}" for p in H.io_problems(onnx.encoder, *names[:2])]
    failures += [f"decoder I/O: {p}" for p in H.io_problems(onnx.decoder, *names[2:])]
    if failures:
        return failures
    ref64 = H.float64(ref)
    main = "input_features" if "input_features" in enc_feeds else "input_values"
    hf_enc = ref64.get_encoder()(**{k: torch.from_numpy(v) for k, v in enc_feeds.items()})
    enc = onnx.encode(enc_feeds)
    deltas = {"encoder": [H.delta(rec, enc, hf_enc.last_hidden_state.numpy())], "prefill": [], "decode": []}
    rng = np.random.default_rng(2)
    dec = np.concatenate([prompt, rng.integers(4, ref.config.vocab_size, size=(2, 2), dtype=np.int64)], axis=1)
    cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
    hf = ref64(encoder_outputs=hf_enc, decoder_input_ids=torch.from_numpy(dec), past_key_values=cache, use_cache=True)
    logits, state = onnx.step(dec, enc, None, mask)
    deltas["prefill"].append(H.delta(rec, logits, hf.logits.numpy()))
    cache = hf.past_key_values
    for _ in range(DECODE_STEPS):
        nxt = rng.integers(4, ref.config.vocab_size, size=(2, 1), dtype=np.int64)
        hf = ref64(encoder_outputs=hf_enc, decoder_input_ids=torch.from_numpy(nxt), past_key_values=cache,
                   use_cache=True)
        cache = hf.past_key_values
        logits, state = onnx.step(nxt, enc, state, mask)
        deltas["decode"].append(H.delta(rec, logits, hf.logits.numpy()))
    for i in range(onnx.layers):  # both caches after the last step
        for part, c in (("decoder", cache.self_attention_cache), ("encoder", cache.cross_attention_cache)):
            deltas["decode"].append(H.delta(rec, state[f"present.{i}.{part}.key"], c.layers[i].keys.numpy()))
            deltas["decode"].append(H.delta(rec, state[f"present.{i}.{part}.value"], c.layers[i].values.numpy()))
    rec["prefill"] = max(deltas["encoder"] + deltas["prefill"])
    rec["decode"] = max(deltas["decode"])
    failures = [f"{main} {what} max|Δ| {max(d):.3g} > {H.TOL}" for what, d in deltas.items() if not max(d) <= H.TOL]
    enc = onnx.encode(enc_feeds)  # greedy, float32
    seqs = prompt.copy()
    logits, state = onnx.step(seqs, enc, None, mask)
    for _ in range(want_tokens.shape[1]):
        scores = logits[:, -1].copy()
        np.put_along_axis(scores, seqs, -np.inf, axis=1)
        nxt = scores.argmax(-1)[:, None].astype(np.int64)
        seqs = np.concatenate([seqs, nxt], axis=1)
        logits, state = onnx.step(nxt, enc, state, mask)
    got = seqs[:, prompt.shape[1]:]
    matched = int((got == want_tokens).all(axis=0).cumprod().sum())
    rec["tokens"] = f"{matched}/{want_tokens.shape[1]}"
    if not np.array_equal(got, want_tokens):
        failures.append(f"optimum contract: {matched}/{want_tokens.shape[1]} greedy tokens match transformers' "
                        f"generate (got {got.tolist()}, transformers {want_tokens.tolist()})")
    return failures


def run_optimum(row: S.Row, work: Path, rec: dict) -> list[str]:
    """check_optimum for a Whisper row on features() (3000 frames)."""
    write_checkpoint(row, work / "hf")
    ref = WhisperForConditionalGeneration.from_pretrained(work / "hf", dtype=torch.float32,
                                                          attn_implementation="eager").eval()
    feats = features(ref.config.num_mel_bins)
    return check_optimum(ref, work / "hf", work / "onnx", {"input_features": feats}, prompt_ids(),
                         reference_tokens(ref, feats, GEN_NEW), rec)
