"""Parity harness of the text2text-generation task: tiny random AutoModelForSeq2SeqLM checkpoint ->
`mobius build` (encoder.onnx + decoder.onnx, docs/seq2seq.md) -> onnxruntime vs transformers.

Rows are typed (Row: model type, variant, config kwargs). Each row checks, for a batch of 2 whose
second encoder row is left-padded:
  - the package: exactly encoder.onnx(.data) and decoder.onnx(.data), onnx.checker, the I/O names;
  - the encoder's last_hidden_state on the non-padding tokens;
  - a decoder prefill (empty caches, the encoder's output) and DECODE_STEPS one-token steps
    (encoder_hidden_states of length 0, both caches carried), logits and the final caches against
    transformers' EncoderDecoderCache;
  - GEN_NEW-token greedy generation equal to transformers' generate (num_beams 1, no sampling,
    no token repeated on both sides: NO_REPEAT_NGRAM_SIZE), for both rows.
Float32 tolerance: harness.TOL on every compared tensor.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch
from transformers import AutoConfig, AutoModelForSeq2SeqLM, GenerationConfig

import harness as H


@dataclasses.dataclass(frozen=True)
class Row:
    model_type: str
    variant: str
    config: dict  # AutoConfig.for_model kwargs


# T5 family: small bucket counts so that the tiny sequences reach the logarithmic and the
# saturated buckets (bidirectional: exact below 4, log up to 12; causal: exact below 8, log up to 12).
T5 = dict(vocab_size=256, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
          relative_attention_num_buckets=16, relative_attention_max_distance=12,
          decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
# BART family: encoder and decoder differ in heads and widths, so that a swapped field shows.
BART = dict(vocab_size=256, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=96, max_position_embeddings=64,
            pad_token_id=0, bos_token_id=2, eos_token_id=1, decoder_start_token_id=2, forced_eos_token_id=None)
ROWS = [
    Row("t5", "relu", dict(T5, feed_forward_proj="relu")),  # the original T5: tied, output scaled
    # T5 v1.1 layout, tie_word_embeddings false (no output scaling), a deeper encoder (not the
    # decoder: transformers 5.23's generate sizes the decoder cache by num_layers)
    Row("t5", "v1.1-untied", dict(T5, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                                  num_layers=3, num_decoder_layers=2)),
    Row("mt5", "base", dict(T5, feed_forward_proj="gated-gelu")),
    Row("umt5", "base", dict(T5, feed_forward_proj="gated-gelu")),  # a relative bias per layer
    Row("bart", "base", dict(BART)),
    Row("bart", "scaled-untied", dict(BART, scale_embedding=True, tie_word_embeddings=False,
                                      activation_function="relu")),
    Row("mbart", "base", dict(BART, scale_embedding=True)),
    Row("plbart", "base", dict(BART, scale_embedding=True)),
    Row("marian", "base", dict(BART, scale_embedding=True)),
    Row("pegasus", "base", dict(BART, scale_embedding=True)),
    Row("blenderbot", "base", dict(BART, scale_embedding=True)),
    Row("blenderbot-small", "base", dict(BART, scale_embedding=True)),  # its decoder ignores the scale
]
ENC_LEN = 20
PAD = 7  # left padding of encoder row 1
DEC_PREFILL = 6
DECODE_STEPS = 3
GEN_NEW = 24
# Greedy generation on both sides with transformers' no_repeat_ngram_size 1 (NoRepeatNGramLogitsProcessor:
# a token of the decoder's sequence so far, the start token included, is never picked again):
# without it the tiny random models repeat one token from the first steps on, and the generation
# would show little of what the cache carries.
NO_REPEAT_NGRAM_SIZE = 1
FILES = {"encoder.onnx", "encoder.onnx.data", "decoder.onnx", "decoder.onnx.data"}


def types() -> set[str]:
    return {r.model_type for r in ROWS}


def write_checkpoint(row: Row, hf_dir: Path):
    """The tiny model (seed 0), every parameter re-randomized (harness.rerandomize), saved."""
    torch.manual_seed(0)
    config = AutoConfig.for_model(row.model_type, **row.config)
    model = AutoModelForSeq2SeqLM.from_config(config, dtype=torch.float32, attn_implementation="eager").eval()
    H.rerandomize(model)
    # the shared token embeddings at unit scale, as rerandomize does for `embed_tokens`: scaled by
    # 1/sqrt(d_model) (T5's `shared` does not match that name) the tied logits would be ~0.1 and
    # greedy generation nearly a tie
    # Fixed sinusoidal position tables (Marian, Pegasus: modules with create_weight()) back to their
    # values: transformers recomputes Marian's at load (it is not saved), Pegasus saves it.
    with torch.no_grad():
        emb = model.get_input_embeddings().weight
        emb.copy_(torch.randn_like(emb))
        for m in model.modules():
            if hasattr(m, "create_weight"):
                m.weight.copy_(m.create_weight())
    model.save_pretrained(hf_dir)
    return model


def encoder_batch(vocab: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    ids = rng.integers(2, vocab, size=(2, ENC_LEN), dtype=np.int64)
    mask = np.ones_like(ids)
    ids[1, :PAD] = 0
    mask[1, :PAD] = 0
    return ids, mask


def decoder_session_io(layers: int) -> tuple[set, set]:
    inputs = {"input_ids", "encoder_attention_mask", "encoder_hidden_states"}
    outputs = {"logits"}
    for i in range(layers):
        for part in ("decoder", "encoder"):
            for kv in ("key", "value"):
                inputs.add(f"past_key_values.{i}.{part}.{kv}")
                outputs.add(f"present.{i}.{part}.{kv}")
    return inputs, outputs


class OnnxSeq2Seq:
    """Runs the decoder graph as the contract says: the first step with the encoder's output and
    empty caches, later ones with encoder_hidden_states of length 0 and the presents."""

    def __init__(self, out_dir: Path):
        """The cache shapes come from the decoder graph's inputs (heads, head_dim per state)."""
        self.encoder = H.ort_session(out_dir / "encoder.onnx")
        self.decoder = H.ort_session(out_dir / "decoder.onnx")
        inputs = {i.name: i.shape for i in self.decoder.get_inputs()}
        self.d_model = inputs["encoder_hidden_states"][2]
        self.past = {n: s for n, s in inputs.items() if n.startswith("past_key_values.")}
        self.layers = sum(n.endswith(".decoder.key") for n in self.past)
        self.outputs = [o.name for o in self.decoder.get_outputs()]

    def encode(self, ids, mask) -> np.ndarray:
        return self.encoder.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})[0]

    def step(self, ids, enc_mask, enc_states, state):
        """Returns (logits, state); state None = the first step."""
        b = ids.shape[0]
        feeds = {"input_ids": ids, "encoder_attention_mask": enc_mask}
        if state is None:
            feeds["encoder_hidden_states"] = enc_states
            state = {"present." + n[len("past_key_values."):]: np.zeros((b, s[1], 0, s[3]), np.float32)
                     for n, s in self.past.items()}
        else:
            feeds["encoder_hidden_states"] = np.zeros((b, 0, self.d_model), np.float32)
        for name, v in state.items():
            feeds["past_key_values." + name[len("present."):]] = v
        got = dict(zip(self.outputs, self.decoder.run(self.outputs, feeds)))
        return got["logits"], {k: v for k, v in got.items() if k != "logits"}


def greedy(onnx: OnnxSeq2Seq, ids, mask, start: int, n: int) -> np.ndarray:
    """n greedy tokens per row after `start`, no token repeated (NO_REPEAT_NGRAM_SIZE 1)."""
    enc = onnx.encode(ids, mask)
    seqs = np.full((ids.shape[0], 1), start, np.int64)
    logits, state = onnx.step(seqs, mask, enc, None)
    for _ in range(n):
        scores = logits[:, -1].copy()
        np.put_along_axis(scores, seqs, -np.inf, axis=1)
        nxt = scores.argmax(-1)[:, None].astype(np.int64)
        seqs = np.concatenate([seqs, nxt], axis=1)
        logits, state = onnx.step(nxt, mask, None, state)
    return seqs[:, 1:]


def run(row: Row, work: Path, rec: dict) -> list[str]:
    """Fills `rec` (the parity table's row: prefill = encoder and decoder-prefill max|Δ|, decode =
    the decode steps', tokens = matched greedy tokens); returns the failed checks."""
    hf_dir, out_dir = work / "hf", work / "onnx"
    model = write_checkpoint(row, hf_dir)
    ref = AutoModelForSeq2SeqLM.from_pretrained(hf_dir, dtype=torch.float32, attn_implementation="eager").eval()
    cfg = ref.config
    H.build(hf_dir, out_dir)
    failures = []
    files = {p.name for p in out_dir.iterdir()}
    if files != FILES:
        failures.append(f"package files {sorted(files)}, expected {sorted(FILES)}")
    for g in ("encoder", "decoder"):
        failures += [f"{g}: {f}" for f in H.check_model(out_dir / f"{g}.onnx", rec)]
    onnx = OnnxSeq2Seq(out_dir)
    failures += [f"encoder I/O: {p}" for p in H.io_problems(onnx.encoder, {"input_ids", "attention_mask"},
                                                             {"last_hidden_state"})]
    layers = getattr(cfg, "num_decoder_layers", None) or cfg.decoder_layers
    failures += [f"decoder I/O: {p}" for p in H.io_problems(onnx.decoder, *decoder_session_io(layers))]
    if failures:
        return failures

    ids, mask = encoder_batch(cfg.vocab_size)
    t_ids, t_mask = torch.from_numpy(ids), torch.from_numpy(mask)
    deltas = {"encoder": [], "prefill": [], "decode": []}
    with torch.no_grad():
        hf_enc = ref.get_encoder()(input_ids=t_ids, attention_mask=t_mask).last_hidden_state
        # harness self-check: the checkpoint on disk is the model we made
        assert torch.equal(hf_enc, model.get_encoder()(input_ids=t_ids, attention_mask=t_mask).last_hidden_state)
        enc = onnx.encode(ids, mask)
        valid = mask.astype(bool)
        deltas["encoder"].append(H.max_abs(enc[valid], hf_enc.numpy()[valid]))

        rng = np.random.default_rng(2)
        dec = np.concatenate([np.full((2, 1), cfg.decoder_start_token_id, np.int64),
                              rng.integers(2, cfg.vocab_size, size=(2, DEC_PREFILL - 1), dtype=np.int64)], axis=1)
        hf = ref(encoder_outputs=(hf_enc,), attention_mask=t_mask, decoder_input_ids=torch.from_numpy(dec),
                 use_cache=True)
        logits, state = onnx.step(dec, mask, enc, None)
        deltas["prefill"].append(H.max_abs(logits, hf.logits.numpy()))
        cache = hf.past_key_values
        for _ in range(DECODE_STEPS):
            nxt = rng.integers(2, cfg.vocab_size, size=(2, 1), dtype=np.int64)
            hf = ref(encoder_outputs=(hf_enc,), attention_mask=t_mask, decoder_input_ids=torch.from_numpy(nxt),
                     past_key_values=cache, use_cache=True)
            cache = hf.past_key_values
            logits, state = onnx.step(nxt, mask, None, state)
            deltas["decode"].append(H.max_abs(logits, hf.logits.numpy()))
        for i in range(onnx.layers):  # both caches after the last step
            for part, c in (("decoder", cache.self_attention_cache), ("encoder", cache.cross_attention_cache)):
                deltas["decode"].append(H.max_abs(state[f"present.{i}.{part}.key"], c.layers[i].keys.numpy()))
                deltas["decode"].append(H.max_abs(state[f"present.{i}.{part}.value"], c.layers[i].values.numpy()))

        gen = GenerationConfig(max_new_tokens=GEN_NEW, min_new_tokens=GEN_NEW, do_sample=False, num_beams=1,
                               no_repeat_ngram_size=NO_REPEAT_NGRAM_SIZE,
                               decoder_start_token_id=cfg.decoder_start_token_id, pad_token_id=cfg.pad_token_id,
                               eos_token_id=None, bos_token_id=None)
        want = ref.generate(input_ids=t_ids, attention_mask=t_mask, generation_config=gen).numpy()[:, 1:]
    got = greedy(onnx, ids, mask, cfg.decoder_start_token_id, GEN_NEW)

    rec["prefill"] = max(deltas["encoder"] + deltas["prefill"])
    rec["decode"] = max(deltas["decode"])
    matched = int((got == want).all(axis=0).cumprod().sum()) if got.shape == want.shape else 0
    rec["tokens"] = f"{matched}/{GEN_NEW}"
    rec["genai"] = "n/a"
    for what, d in deltas.items():
        if not max(d) <= H.TOL:
            failures.append(f"{what} max|Δ| {max(d):.3g} > {H.TOL}")
    if got.shape != want.shape or not np.array_equal(got, want):
        failures.append(f"greedy generation: {matched}/{GEN_NEW} tokens match transformers' generate "
                        f"(mobius {got.tolist()}, transformers {want.tolist()})")
    return failures
