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

import contextlib
import dataclasses
import inspect
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, numpy_helper
from safetensors.torch import load_file
from transformers import AutoConfig, AutoModelForSeq2SeqLM, GenerationConfig
from transformers.models.nllb_moe.modeling_nllb_moe import NllbMoeExperts

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
PROPHETNET = dict(vocab_size=256, hidden_size=64, num_encoder_layers=2, num_decoder_layers=2,
                  num_encoder_attention_heads=4, num_decoder_attention_heads=2, encoder_ffn_dim=128,
                  decoder_ffn_dim=96, max_position_embeddings=64, ngram=2, num_buckets=16, relative_max_distance=12,
                  pad_token_id=0, bos_token_id=2, eos_token_id=1, decoder_start_token_id=2)
NLLB_MOE = dict(num_experts=4, encoder_sparse_step=2, decoder_sparse_step=2)
ROWS = [
    Row("t5", "relu", dict(T5, feed_forward_proj="relu")),  # the original T5: tied, output scaled
    # T5 v1.1 layout, tie_word_embeddings false (no output scaling), a deeper encoder (not the
    # decoder: transformers 5.23's generate sizes the decoder cache by num_layers)
    Row("t5", "v1.1-untied", dict(T5, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                                  num_layers=3, num_decoder_layers=2)),
    Row("mt5", "base", dict(T5, feed_forward_proj="gated-gelu")),
    Row("umt5", "base", dict(T5, feed_forward_proj="gated-gelu")),  # a relative bias per layer
    # encoder_attention_type local: |i - j| <= local_radius 3 over 20 tokens (blocks of 4)
    Row("longt5", "local-radius-3", dict(T5, local_radius=3, feed_forward_proj="gated-gelu")),
    # encoder_attention_type transient-global: the same local band plus one side key per block of 3
    # positions (20 // 3 = 6 blocks; the left-padded row's first blocks are padding or partly, its
    # tokens past the last full block join it), block 0's global relative bias
    Row("longt5", "transient-global-3", dict(T5, encoder_attention_type="transient-global", local_radius=3,
                                             global_block_size=3, feed_forward_proj="gated-gelu")),
    # top-1 experts in block 1 of each stack (num_layers // num_sparse_*_layers = 2); a capacity
    # of 3 tokens per expert and sequence drops tokens in the encoder and the decoder prefill.
    # num_decoder_layers given: SwitchTransformersConfig's default is 12, not num_layers
    Row("switch_transformers", "capacity-3", dict(T5, num_decoder_layers=2, num_experts=4, expert_capacity=3, num_sparse_encoder_layers=1,
                                                  num_sparse_decoder_layers=1, dense_act_fn="gelu_new")),
    Row("switch_transformers", "untied-router-bias", dict(T5, num_decoder_layers=2, num_experts=3, num_sparse_encoder_layers=2,
                                                          num_sparse_decoder_layers=2, router_bias=True,
                                                          tie_word_embeddings=False)),
    Row("bart", "base", dict(BART)),
    Row("bart", "scaled-untied", dict(BART, scale_embedding=True, tie_word_embeddings=False,
                                      activation_function="relu")),
    Row("mbart", "base", dict(BART, scale_embedding=True)),
    Row("plbart", "base", dict(BART, scale_embedding=True)),
    Row("marian", "base", dict(BART, scale_embedding=True)),
    # separate source (256) and target (300) vocabularies: no model.shared, the decoder's embed_tokens,
    # the LM head (tied to it, or its own) and final_logits_bias of decoder_vocab_size rows
    Row("marian", "unshared-tgt-300", dict(BART, scale_embedding=True, share_encoder_decoder_embeddings=False,
                                           decoder_vocab_size=300)),
    Row("marian", "unshared-untied", dict(BART, scale_embedding=True, share_encoder_decoder_embeddings=False,
                                          decoder_vocab_size=300, tie_word_embeddings=False)),
    Row("pegasus", "base", dict(BART, scale_embedding=True)),
    # 3 global tokens, local blocks of 8 over 20 tokens (transformers pads to 24), the second encoder
    # layer staggered by 4; decoder_layers 2 with its own heads (PegasusXConfig has no
    # decoder-specific attribute_map)
    Row("pegasus_x", "blocks-8-stagger", dict(BART, num_global_tokens=3, block_size=8, stagger_local_blocks=True)),
    Row("blenderbot", "base", dict(BART, scale_embedding=True)),
    Row("blenderbot-small", "base", dict(BART, scale_embedding=True)),  # its decoder ignores the scale
    # positions counted from the padding of input_ids: the left-padded row shifts them
    Row("m2m_100", "base", dict(BART, scale_embedding=True)),
    # attention_type original_full (block_sparse is refused: archs/bart.cpp); use_bias false is
    # the class default (no attention biases), true adds them
    Row("bigbird_pegasus", "original-full", dict(BART, attention_type="original_full")),
    Row("bigbird_pegasus", "use-bias", dict(BART, attention_type="original_full", use_bias=True)),
    # Longformer local attention in the encoder: one-sided windows 2 and 4 (attention_window
    # 4 and 8) over 20 tokens; encoder and decoder position tables of different sizes
    # source and target vocabularies of their own (vocab_size is tgt_vocab_size); the position
    # table read from the checkpoint, positions counted from the padding
    # top-2 experts in layer 1 of each stack (encoder_/decoder_sparse_step 2). Capacity over the whole
    # call: ceil(0.2 * batch * seq) = 8 of the encoder's 40 positions, 3 in the 12-token prefill, 1 in a
    # 2-token step; tokens are dropped in each (test_nllb_moe_drops_tokens)
    Row("nllb-moe", "fraction-0.2", dict(BART, **NLLB_MOE, moe_eval_capacity_token_fraction=0.2)),
    # capacity expert_capacity 6 (fraction 0), tokens ranked by their top probability, gates normalized
    # before the drop, padding routed too, a router bias, untied embeddings
    Row("nllb-moe", "prioritized-normalized", dict(BART, **NLLB_MOE, moe_eval_capacity_token_fraction=0.0,
                                                  expert_capacity=6, batch_prioritized_routing=True,
                                                  normalize_router_prob_before_dropping=True,
                                                  router_ignore_padding_tokens=True, router_bias=True,
                                                  tie_word_embeddings=False)),
    # ngram 2: the logits are the first predict stream's; 16 causal buckets (exact below 8, log up to 12)
    Row("prophetnet", "ngram-2", dict(PROPHETNET)),
    # ngram 3 (the first predict stream reads ngram_embeddings[2]), untied embeddings
    Row("prophetnet", "ngram-3-untied", dict(PROPHETNET, ngram=3, tie_word_embeddings=False)),
    Row("fsmt", "src-300", dict(BART, src_vocab_size=300, scale_embedding=True)),
    Row("led", "windows-4-8", dict(BART, attention_window=[4, 8], max_encoder_position_embeddings=64,
                                   max_decoder_position_embeddings=40)),
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
# Types whose transformers reference runs the decoder prefill one token at a time: FSMTModel.forward
# (5.23) passes no causal mask when use_cache is set, so its multi-token prefill with a cache attends
# to later tokens (generate is unaffected: its prefill is the one start token).
# ProphetNetNgramSelfAttention.get_predict_relative_pos_embeddings (5.23) pairs the bias table's rows,
# ordered (batch, position, stream, head), with the bucket rows, ordered (stream, batch, head, position),
# so a multi-token prefill's predict stream (the logits) reads other positions' and streams' biases; a
# one-token call (generate's prefill, every cached step) pairs them right.
PREFILL_BY_TOKEN = {"fsmt", "prophetnet"}


def nllb_moe_experts_forward(self, hidden_states, router_mask, router_probs):
    """NllbMoeExperts.forward as transformers 4.x's NllbMoeSparseMLP dispatched: every token through
    each expert its router kept, times (1 - moe_token_dropout) and that expert's gate."""
    out = torch.zeros_like(hidden_states)
    for e in range(self.num_experts):
        tokens = router_probs[:, e] > 0
        if tokens.any():
            y = self[f"expert_{e}"](hidden_states[tokens]) * (1 - self.moe_token_dropout)
            out[tokens] += y * router_probs[tokens, e, None]
    return out


# The reference's one correction of transformers 5.23 (docs/seq2seq.md, nllb-moe): its
# NllbMoeExperts.forward one-hot encodes the router's [tokens, num_experts] 0/1 top-1 mask as if it
# held expert indices, so it runs expert_1 on every token weighted by the kept top-1 gate and
# expert_0 weighted by the rest, whatever the router chose (test_nllb_moe_reference_fix shows the
# difference). The rows run transformers with the dispatch above instead; the router (capacity,
# policies, padding) stays transformers' own. (class, attribute, replacement) per model type.
REFERENCE_FIXES = {"nllb-moe": (NllbMoeExperts, "forward", nllb_moe_experts_forward)}


@contextlib.contextmanager
def reference_fix(model_type: str):
    """REFERENCE_FIXES[model_type] in place while the block runs (nothing for other types)."""
    if model_type not in REFERENCE_FIXES:
        yield
        return
    cls, name, fixed = REFERENCE_FIXES[model_type]
    original = getattr(cls, name)
    setattr(cls, name, fixed)
    try:
        yield
    finally:
        setattr(cls, name, original)


GRAPHS = ("encoder", "decoder")
# the checkpoint's files every package gets a copy of (src/package/copied_files.h kTokenizerFiles)
COPIED = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model",
          "vocab.json", "merges.txt", "added_tokens.json", "generation_config.json", "chat_template.jinja",
          "chat_template.json", "processor_config.json", "video_preprocessor_config.json")


def types() -> set[str]:
    return {r.model_type for r in ROWS}


def write_checkpoint(row: Row, hf_dir: Path):
    """The tiny model of `row` (seed 0), every parameter re-randomized, saved (write_model)."""
    return write_model(AutoConfig.for_model(row.model_type, **row.config), hf_dir)


def scales_decoder_output(model) -> bool:
    """Whether the model multiplies the decoder output by model_dim**-0.5 before the LM head (its
    forward does: T5 when config.scale_decoder_outputs, UMT5, LongT5 and Switch when the head is
    tied; mT5 does not) and the head is the token embedding table."""
    if "model_dim**-0.5" not in inspect.getsource(type(model).forward):
        return False
    cfg = model.config
    scaled = getattr(cfg, "scale_decoder_outputs", cfg.tie_word_embeddings)
    return bool(scaled) and H._tied_embedding(model) is not None


def write_model(config, hf_dir: Path):
    """AutoModelForSeq2SeqLM from `config` (seed 0), every parameter re-randomized
    (harness.rerandomize), saved to hf_dir; returns the in-memory model."""
    torch.manual_seed(0)
    model = AutoModelForSeq2SeqLM.from_config(config, dtype=torch.float32, attn_implementation="eager").eval()
    H.rerandomize(model)
    # The T5 family's decoder output scaled by 1/sqrt(d_model) before a tied LM head: the shared
    # token embeddings at unit scale (rerandomize scales a tied table as a matrix), else the logits
    # would be ~0.1 and greedy generation nearly a tie. Every other tied head keeps rerandomize's
    # scale (a unit-variance head makes the logits ~30-90, parity table scale column).
    # Fixed sinusoidal position tables (Marian, Pegasus: modules with create_weight()) back to their
    # values: transformers recomputes Marian's at load (it is not saved), Pegasus saves it.
    with torch.no_grad():
        if scales_decoder_output(model):
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
    empty caches, later ones with the presents and either encoder_hidden_states of length 0 or the
    encoder's output again (as Optimum and transformers.js call it; the graph ignores it then)."""

    def __init__(self, out_dir: Path):
        """The cache shapes come from the decoder graph's inputs (heads, head_dim per state)."""
        self.encoder = H.ort_session(H.graph_path(out_dir, "encoder"))
        self.decoder = H.ort_session(H.graph_path(out_dir, "decoder"))
        inputs = {i.name: i.shape for i in self.decoder.get_inputs()}
        self.d_model = inputs["encoder_hidden_states"][2]
        self.past = {n: s for n, s in inputs.items() if n.startswith("past_key_values.")}
        self.layers = sum(n.endswith(".decoder.key") for n in self.past)
        self.outputs = [o.name for o in self.decoder.get_outputs()]

    def encode(self, ids, mask) -> np.ndarray:
        return self.encoder.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})[0]

    def step(self, ids, enc_mask, enc_states, state, dtype=np.float32):
        """Returns (logits, state); state None = the first step (caches and states in `dtype`);
        enc_states None on a later step = encoder_hidden_states of length 0."""
        b = ids.shape[0]
        feeds = {"input_ids": ids, "encoder_attention_mask": enc_mask}
        if enc_states is None:
            enc_states = np.zeros((b, 0, self.d_model), dtype)
        feeds["encoder_hidden_states"] = enc_states
        if state is None:
            state = {"present." + n[len("past_key_values."):]: np.zeros((b, s[1], 0, s[3]), dtype)
                     for n, s in self.past.items()}
        for name, v in state.items():
            feeds["past_key_values." + name[len("present."):]] = v
        got = dict(zip(self.outputs, self.decoder.run(self.outputs, feeds)))
        return got["logits"], {k: v for k, v in got.items() if k != "logits"}


def greedy(onnx: OnnxSeq2Seq, ids, mask, start: int, n: int, never=()) -> np.ndarray:
    """n greedy tokens per row after `start`, no token repeated (NO_REPEAT_NGRAM_SIZE 1) and none of
    the tokens `never` picked; every step is passed the encoder's output, as Optimum and
    transformers.js do."""
    enc = onnx.encode(ids, mask)
    seqs = np.full((ids.shape[0], 1), start, np.int64)
    logits, state = onnx.step(seqs, mask, enc, None)
    for _ in range(n):
        scores = logits[:, -1].copy()
        np.put_along_axis(scores, seqs, -np.inf, axis=1)
        scores[:, list(never)] = -np.inf
        nxt = scores.argmax(-1)[:, None].astype(np.int64)
        seqs = np.concatenate([seqs, nxt], axis=1)
        logits, state = onnx.step(nxt, mask, enc, state)
    return seqs[:, 1:]


def run(row: Row, work: Path, rec: dict, build_args=()) -> list[str]:
    """Fills `rec` (the parity table's row: prefill = encoder and decoder-prefill max|Δ|, decode =
    the decode steps', tokens = matched greedy tokens); returns the failed checks. `build_args`:
    further `mobius build` options (--ep cpu)."""
    model = write_checkpoint(row, work / "hf")
    return check(work / "hf", model, work / "onnx", rec, DECODE_STEPS, generate=True, build_args=build_args)


def check(hf_dir: Path, model, out_dir: Path, rec: dict, decode_steps: int, generate: bool,
          build_args=()) -> list[str]:
    """The parity check of the checkpoint in hf_dir (`model`: the in-memory model it was saved
    from): transformers loads it, `mobius build` packages it into out_dir; then the package
    (check_package), the encoder, the decoder prefill and `decode_steps` steps through both caches
    (check_steps) and, with `generate`, greedy generation (check_greedy). Returns the failures."""
    ref = AutoModelForSeq2SeqLM.from_pretrained(hf_dir, dtype=torch.float32, attn_implementation="eager").eval()
    H.build(hf_dir, out_dir, *build_args)
    failures = check_package(hf_dir, out_dir, rec)
    if failures:
        return failures
    onnx = OnnxSeq2Seq(out_dir)
    failures = check_io(onnx, ref.config)
    if failures:
        return failures
    with reference_fix(ref.config.model_type):
        failures = check_steps(H.float64(ref), H.float64(model), onnx, rec, decode_steps)
        rec["genai"] = "n/a"
        if generate:
            failures += check_greedy(ref, onnx, rec)
    return failures


def check_package(hf_dir: Path, out_dir: Path, rec: dict) -> list[str]:
    """Exactly the GRAPHS' files and a byte-identical copy of each COPIED file hf_dir has; onnx.checker on both graphs."""
    failures = []
    files = H.package_files(out_dir)
    copied = {f for f in COPIED if (hf_dir / f).is_file()}
    want = H.graph_files(GRAPHS, H.layout(out_dir)) | copied
    if files != want:
        failures.append(f"package files {sorted(files)}, expected {sorted(want)}")
    failures += H.copy_problems(hf_dir, out_dir, copied & files)
    for g in ("encoder", "decoder"):
        failures += [f"{g}: {f}" for f in H.check_model(H.graph_path(out_dir, g), rec)]
    return failures


def check_io(onnx: OnnxSeq2Seq, cfg) -> list[str]:
    """The I/O names of the contract (docs/seq2seq.md) for cfg's decoder layers."""
    failures = [f"encoder I/O: {p}" for p in H.io_problems(onnx.encoder, {"input_ids", "attention_mask"},
                                                            {"last_hidden_state"})]
    layers = getattr(cfg, "num_decoder_layers", None) or cfg.decoder_layers
    return failures + [f"decoder I/O: {p}" for p in H.io_problems(onnx.decoder, *decoder_session_io(layers))]


@torch.no_grad()
def check_steps(ref, model, onnx: OnnxSeq2Seq, rec: dict, decode_steps: int) -> list[str]:
    """The encoder's last_hidden_state on the non-padding tokens, a decoder prefill and
    `decode_steps` one-token steps (logits), then both caches after the last step, against `ref`
    (transformers' float64 model, harness.float64; EncoderDecoderCache; the cross-attention cache at the encoder's tokens, not its
    padding). Each step runs twice: with encoder_hidden_states of length 0, and with the encoder's
    output again (Optimum's and transformers.js' call: the filled cross cache wins); the second's
    presents are carried. Sets rec prefill / decode (max|Δ|)."""
    cfg = ref.config
    ids, mask = encoder_batch(cfg.vocab_size)
    t_ids, t_mask = torch.from_numpy(ids), torch.from_numpy(mask)
    deltas = {"encoder": [], "prefill": [], "decode": []}
    # the encoder's own output object (SwitchTransformers' forward also reads its router_logits)
    hf_enc_out = ref.get_encoder()(input_ids=t_ids, attention_mask=t_mask)
    hf_enc = hf_enc_out.last_hidden_state
    # harness self-check: the checkpoint on disk is the model we made
    assert torch.equal(hf_enc, model.get_encoder()(input_ids=t_ids, attention_mask=t_mask).last_hidden_state)
    enc = onnx.encode(ids, mask)
    valid = mask.astype(bool)
    deltas["encoder"].append(H.delta(rec, enc[valid], hf_enc.numpy()[valid]))

    rng = np.random.default_rng(2)
    dec = np.concatenate([np.full((2, 1), cfg.decoder_start_token_id, np.int64),
                          rng.integers(2, cfg.vocab_size, size=(2, DEC_PREFILL - 1), dtype=np.int64)], axis=1)
    if cfg.model_type in PREFILL_BY_TOKEN:
        cache, parts = None, []
        for j in range(dec.shape[1]):
            hf = ref(encoder_outputs=hf_enc_out, attention_mask=t_mask, decoder_input_ids=torch.from_numpy(dec[:, j:j + 1]),
                     past_key_values=cache, use_cache=True)
            cache = hf.past_key_values
            parts.append(hf.logits.numpy())
        hf_prefill = np.concatenate(parts, axis=1)
    else:
        hf = ref(encoder_outputs=hf_enc_out, attention_mask=t_mask, decoder_input_ids=torch.from_numpy(dec),
                 use_cache=True)
        hf_prefill, cache = hf.logits.numpy(), hf.past_key_values
    logits, state = onnx.step(dec, mask, enc, None)
    deltas["prefill"].append(H.delta(rec, logits, hf_prefill))
    for _ in range(decode_steps):
        nxt = rng.integers(2, cfg.vocab_size, size=(2, 1), dtype=np.int64)
        hf = ref(encoder_outputs=hf_enc_out, attention_mask=t_mask, decoder_input_ids=torch.from_numpy(nxt),
                 past_key_values=cache, use_cache=True)
        cache = hf.past_key_values
        logits, _ = onnx.step(nxt, mask, None, state)
        deltas["decode"].append(H.delta(rec, logits, hf.logits.numpy()))
        logits, state = onnx.step(nxt, mask, enc, state)
        deltas["decode"].append(H.delta(rec, logits, hf.logits.numpy()))
    # both caches after the last step; the cross-attention cache at the encoder's tokens only, as
    # its output above (at padding it projects hidden states that every mask hides, and LED's
    # Longformer attention zeroes them where full attention does not)
    for i in range(onnx.layers):
        for part, c in (("decoder", cache.self_attention_cache), ("encoder", cache.cross_attention_cache)):
            for kv, want in (("key", c.layers[i].keys.numpy()), ("value", c.layers[i].values.numpy())):
                got = state[f"present.{i}.{part}.{kv}"]
                if part == "encoder":  # [batch, heads, enc, head_dim] -> [tokens, heads, head_dim]
                    got, want = got.transpose(0, 2, 1, 3)[valid], want.transpose(0, 2, 1, 3)[valid]
                deltas["decode"].append(H.delta(rec, got, want))

    rec["prefill"] = max(deltas["encoder"] + deltas["prefill"])
    rec["decode"] = max(deltas["decode"])
    return [f"{what} max|Δ| {max(d):.3g} > {H.TOL}" for what, d in deltas.items() if not max(d) <= H.TOL]


def check_greedy(ref, onnx: OnnxSeq2Seq, rec: dict) -> list[str]:
    """GEN_NEW-token greedy generation (NO_REPEAT_NGRAM_SIZE) of both rows equal to transformers'
    generate. Sets rec tokens (matched tokens)."""
    cfg = ref.config
    ids, mask = encoder_batch(cfg.vocab_size)
    gen = GenerationConfig(max_new_tokens=GEN_NEW, min_new_tokens=GEN_NEW, do_sample=False, num_beams=1,
                           no_repeat_ngram_size=NO_REPEAT_NGRAM_SIZE,
                           decoder_start_token_id=cfg.decoder_start_token_id, pad_token_id=cfg.pad_token_id,
                           eos_token_id=None, bos_token_id=None)
    with torch.no_grad():
        want = ref.generate(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                            generation_config=gen).numpy()[:, 1:]
    # generate fills the eos_token_id left None from the model's generation_config, and with
    # min_new_tokens = GEN_NEW its MinNewTokensLengthLogitsProcessor never lets it be picked
    eos = ref.generation_config.eos_token_id
    never = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    got = greedy(onnx, ids, mask, cfg.decoder_start_token_id, GEN_NEW, never)
    matched = int((got == want).all(axis=0).cumprod().sum()) if got.shape == want.shape else 0
    rec["tokens"] = f"{matched}/{GEN_NEW}"
    if got.shape != want.shape or not np.array_equal(got, want):
        return [f"greedy generation: {matched}/{GEN_NEW} tokens match transformers' generate "
                f"(mobius {got.tolist()}, transformers {want.tolist()})"]
    return []


def check_f16(row: Row, work: Path) -> list[str]:
    """`--dtype f16`: both graphs pass onnx.checker; every weight initializer holds bit for bit a
    checkpoint tensor converted to float16 (the one of its name, or for a tied weight the tensor
    it is tied to; Linear weights may be stored transposed); every checkpoint tensor the float32
    build reads is read; a greedy run in onnxruntime gives finite logits."""
    hf_dir, out_dir, f32_dir = work / "hf", work / "onnx", work / "onnx-f32"
    write_checkpoint(row, hf_dir)
    H.build(hf_dir, out_dir, "--dtype", "f16")
    H.build(hf_dir, f32_dir)
    failures = f16_initializer_failures(hf_dir, out_dir, f32_dir)
    onnx_f16 = OnnxSeq2Seq(out_dir)
    ids, mask = encoder_batch(256)
    enc = onnx_f16.encode(ids, mask)
    dec = np.zeros((2, 1), np.int64)
    logits, state = onnx_f16.step(dec, mask, enc, None, np.float16)
    logits, _ = onnx_f16.step(dec, mask, None, state, np.float16)
    if not (np.isfinite(enc).all() and np.isfinite(logits).all()):
        failures.append("float16 run: non-finite values")
    return failures


def f16_initializer_failures(hf_dir: Path, out_dir: Path, f32_dir: Path, graphs=("encoder", "decoder")) -> list[str]:
    """The initializer part of check_f16 for the `graphs` of the f16 package in out_dir and the
    float32 one in f32_dir, both built from hf_dir's model.safetensors."""
    failures = []
    source = {k: v.to(torch.float16).view(torch.int16).numpy().view(np.uint16)
              for k, v in load_file(hf_dir / "model.safetensors").items()}
    by_bits = {(v.shape, v.tobytes()): k for k, v in source.items()}
    for g in graphs:
        path = H.graph_path(out_dir, g)
        onnx.checker.check_model(str(path), full_check=True)
        f16 = {t.name: t for t in onnx.load(str(path), load_external_data=False).graph.initializer
               if t.data_location == TensorProto.EXTERNAL}
        f32 = {t.name for t in onnx.load(str(H.graph_path(f32_dir, g)), load_external_data=False).graph.initializer
               if t.data_location == TensorProto.EXTERNAL}
        if set(f16) != f32:
            failures.append(f"{g}: f16 weights {sorted(set(f16) ^ f32)} differ from the float32 build's")
        for name, t in f16.items():
            if t.data_type != TensorProto.FLOAT16:
                failures.append(f"{g}: {name}: data_type {TensorProto.DataType.Name(t.data_type)}")
                continue
            got = numpy_helper.to_array(t, base_dir=str(path.parent)).view(np.uint16)
            want = source.get(name)
            exact = want is not None and (np.array_equal(got, want) or (got.ndim == 2 and np.array_equal(got, want.T)))
            tied = (got.shape, got.tobytes()) in by_bits or (got.ndim == 2 and (got.T.shape, got.T.tobytes()) in by_bits)
            if not (exact or (want is None and tied)):
                failures.append(f"{g}: {name}: not the float16 bits of its checkpoint tensor")
    return failures


# MatMulNBitsQuantizer's defaults (accuracy_level unset, only the nodes it is given), which
# check_int4 compares with: the flags that keep mobius' int4 build to them (README "Quantization
# defaults")
INT4_PINNED = ("--accuracy-level", "0", "--no-quantize-lm-head", "--no-quantize-embeddings")


def weight_matmuls(model) -> tuple[int, list[str]]:
    """(MatMulNBits nodes, names of the float MatMul/Gemm nodes by a 2-D weight initializer)."""
    inits = {i.name: i for i in model.graph.initializer}
    nbits = sum(n.op_type == "MatMulNBits" for n in model.graph.node)
    left = [n.name for n in model.graph.node if n.op_type in ("MatMul", "Gemm") and len(n.input) > 1
            and n.input[1] in inits and len(inits[n.input[1]].dims) == 2]
    return nbits, left


def check_int4(row: Row, work: Path) -> list[str]:
    """`--precision int4` with the defaults before the builder's per-EP ones (INT4_PINNED: accuracy
    level 0, LM head and embeddings in float, as test_quantized.pinned): in both graphs every MatMul
    by a 2-D checkpoint weight but the LM head is a MatMulNBits, and the package's logits (prefill
    and decode steps) equal those of mobius' float build quantized by onnxruntime's
    MatMulNBitsQuantizer on the same nodes (same weights, same kernel), max|Δ| <= harness.TOL."""
    hf_dir, q_dir, f_dir, ref_dir = work / "hf", work / "int4", work / "float", work / "ort-int4"
    write_checkpoint(row, hf_dir)
    failures = int4_reference(hf_dir, q_dir, f_dir, ref_dir)
    if failures:
        return failures
    ids, mask = encoder_batch(256)
    rng = np.random.default_rng(3)
    tokens = [np.zeros((2, 1), np.int64)] + [rng.integers(2, 256, size=(2, 1)) for _ in range(DECODE_STEPS)]
    logits = {}
    for name, d in (("mobius", q_dir), ("onnxruntime", ref_dir)):
        m = OnnxSeq2Seq(d)
        enc, state, out = m.encode(ids, mask), None, []
        for t in tokens:
            lg, state = m.step(t, mask, enc if state is None else None, state)
            out.append(lg)
        logits[name] = np.concatenate(out, axis=1)
    d = H.max_abs(logits["mobius"], logits["onnxruntime"])
    if not d <= H.TOL:
        failures.append(f"int4 logits vs onnxruntime's quantizer on the float build: max|Δ| {d:.3g} > {H.TOL}")
    return failures


def int4_reference(hf_dir: Path, q_dir: Path, f_dir: Path, ref_dir: Path) -> list[str]:
    """The packaging part of check_int4: mobius' int4 build of hf_dir in q_dir (INT4_PINNED), its float
    build in f_dir, and onnxruntime's MatMulNBitsQuantizer applied to the float encoder and decoder
    on the nodes mobius quantized, in ref_dir. Returns the failures of the MatMulNBits count check."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    H.build(hf_dir, q_dir, "--precision", "int4", *INT4_PINNED)
    H.build(hf_dir, f_dir)
    ref_dir.mkdir()
    failures = []
    for g in ("encoder", "decoder"):
        quantized = onnx.load(str(H.graph_path(q_dir, g)))
        nbits, left = weight_matmuls(quantized)
        if nbits == 0 or len(left) > (1 if g == "decoder" else 0):
            failures.append(f"{g}: {nbits} MatMulNBits, float weight MatMuls left: {left}")
        model = onnx.load(str(H.graph_path(f_dir, g)))
        q = MatMulNBitsQuantizer(model, bits=4, block_size=32, is_symmetric=True, nodes_to_exclude=left)
        q.process()
        onnx.save(q.model.model, str(H.graph_path(ref_dir, g)))
    return failures
