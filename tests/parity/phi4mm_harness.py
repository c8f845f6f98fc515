"""Parity of phi4_multimodal (Phi4MultimodalForCausalLM, vision + text; docs/vlm.md), the
vlm_harness row whose reference is not an AutoModelForImageTextToText: its image inputs are
HD crops (image_pixel_values [images, crops, C, S, S], image_attention_mask [images, crops, g, g],
image_sizes [images, 2]), its text fields are at the top level and its image token is
vision_config.image_token_id. vlm_harness.run hands the row to run() here, which checks what
vlm_harness.check checks for the other families:
  - the package (the three graphs, onnx.checker, the I/O names);
  - a batch of 2 (row 1 left-padded) with two images of different crop layouts (2 x 1 and 1 x 3
    sub-crops, padded to 4 crops as the processor pads them, each with masked patches at its
    bottom or right edge as Phi4MultimodalImageProcessor.dynamic_preprocess masks the padding): the
    vision graph's image_features against transformers' Phi4MultimodalImageEmbedding, the
    embedding graph's inputs_embeds, the prefill logits, DECODE_STEPS decode steps;
  - GEN_NEW-token greedy generation equal to transformers' generate on the same batch;
  - a text-only prompt (vlm_harness.check_text_only).
check_genai (test_vlm_parity.test_phi4mm_genai) runs onnxruntime-genai's phi4mm pipeline on a
tiny model of the released crop layout (448 / 14, which its processor assumes).
Float32 tolerance: harness.TOL on every compared tensor.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from transformers import AutoConfig, AutoModelForCausalLM

import harness as H
import vlm_harness as V

# (h, w) of each batch row's HD-resized image in crops, and its padded patch rows (bottom of the
# last crop row) or columns (right of the last crop column), as dynamic_preprocess masks them
LAYOUTS = [dict(crops=(2, 1), rows=2, cols=0), dict(crops=(1, 3), rows=0, cols=5)]


def write_checkpoint(row, hf_dir: Path):
    """The tiny model of `row` (write_model)."""
    return write_model(AutoConfig.for_model(row.model_type, **row.config), hf_dir)


def write_model(config, hf_dir: Path):
    """Phi4MultimodalForCausalLM from `config` (seed 0), every parameter re-randomized, saved with
    vlm_harness' byte-level tokenizer; returns the model."""
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32, attn_implementation="eager").eval()
    H.rerandomize(model)
    model.save_pretrained(hf_dir)
    V.write_tokenizer(hf_dir, V.SPECIAL)
    return model


def image_inputs(config, seed: int = 1) -> tuple[dict, list[int]]:
    """The vision graph's feeds for LAYOUTS (pixel_values, image_attention_mask, image_sizes) and
    each image's token count as Phi4MultimodalImageEmbedding lays them out: uh (uw + 1) sub-grid
    tokens, 1 separator, b (b + 1) global tokens (b = ceil(g / 2) pooled tokens a side)."""
    v = config.vision_config
    s, g = v.crop_size, v.image_size // v.patch_size
    b = (g + 1) // 2
    crops = 1 + max(h * w for h, w in (lay["crops"] for lay in LAYOUTS))
    rng = np.random.default_rng(seed)
    pixels = np.zeros((len(LAYOUTS), crops, v.num_channels, s, s), np.float32)
    mask = np.ones((len(LAYOUTS), crops, g, g), np.float32)
    sizes, tokens = [], []
    for i, lay in enumerate(LAYOUTS):
        h, w = lay["crops"]
        pixels[i, :1 + h * w] = rng.standard_normal((1 + h * w, v.num_channels, s, s))
        big = np.ones((h * g, w * g), np.float32)  # the HD image's patch mask, then cut into crops
        if lay["rows"]:
            big[-lay["rows"]:] = 0
        if lay["cols"]:
            big[:, -lay["cols"]:] = 0
        crop = big.reshape(h, g, w, g).transpose(0, 2, 1, 3)  # [h, w, g, g]
        mask[i, 1:1 + h * w] = crop.reshape(h * w, g, g)
        sizes.append((h * s, w * s))
        # every other patch row (column) of each crop, first column (row) of the tiled grid
        uh, uw = int(crop[:, 0, 0::2, 0].sum()), int(crop[0, :, 0, 0::2].sum())
        tokens.append(uh * (uw + 1) + 1 + b * (b + 1))
    return {"pixel_values": pixels, "image_attention_mask": mask, "image_sizes": np.array(sizes, np.int64)}, tokens


def prompt_batch(image_token: int, tokens: list[int]):
    """input_ids and attention_mask [2, S]: row r = text, its image's tokens, text; row 1
    left-padded."""
    rng = np.random.default_rng(1)
    rows = [list(rng.integers(3, 240, size=5 - 2 * r)) + [image_token] * n + list(rng.integers(3, 240, size=4))
            for r, n in enumerate(tokens)]
    seq = max(len(x) for x in rows) + V.PAD
    ids = np.zeros((2, seq), np.int64)
    mask = np.zeros((2, seq), np.int64)
    for r, x in enumerate(rows):
        ids[r, seq - len(x):] = x
        mask[r, seq - len(x):] = 1
    return ids, mask


GRAPHS = ("vision", "speech", "embedding", "decoder")
SPEECH_INPUTS = ("audio_embeds", "audio_attention_mask", "audio_sizes", "audio_projection_mode")
# real log-mel frames of the two audios of the batch: the first padded; over 4000 frames the
# encoder's 500-step chunks (unfold_tensor) engage
AUDIO_FRAMES = [(37, 64), (4003, 4100)]
AUDIO_MODES = {"speech": 2, "vision": 3}  # transformers' audio_projection_mode -> onnxruntime-genai's


def audio_inputs(config, frames: tuple[int, int], seed: int = 4) -> dict:
    """The speech graph's feeds for two audios of `frames` real frames (random log-mel features,
    padding frames 0 and masked), audio_sizes ceil(frames / time_reduction)."""
    a = config.audio_config
    rng = np.random.default_rng(seed)
    feats = np.zeros((len(frames), max(frames), a.input_size), np.float32)
    mask = np.zeros((len(frames), max(frames)), bool)
    for i, n in enumerate(frames):
        feats[i, :n] = rng.standard_normal((n, a.input_size))
        mask[i, :n] = True
    sizes = np.array([-(-n // a.time_reduction) for n in frames], np.int64)
    return {"audio_embeds": feats, "audio_attention_mask": mask, "audio_sizes": sizes,
            "audio_projection_mode": np.array([AUDIO_MODES["speech"]], np.int64)}


def unfold_tensor(tensor, max_seq_len):
    """transformers 5.23's modeling_phi4_multimodal.unfold_tensor with its last .view a .reshape:
    as written it fails ("view size is not compatible with input tensor's size and stride") on
    every sequence of more than one 500-step chunk, for hidden states wider than 1, so transformers
    cannot encode an audio of more than 4000 frames (40 s); the reshape gives the chunks its
    permutation means (REFERENCE_FIX, reference_audio)."""
    _, _, d = tensor.shape
    tensor = tensor.transpose(-1, -2)
    tensor = torch.nn.functional.unfold(tensor[..., None, :], kernel_size=(1, max_seq_len), stride=(1, max_seq_len))
    new_bsz, _, slen = tensor.shape
    tensor = tensor.view(new_bsz, -1, max_seq_len, slen).permute(0, 3, 2, 1)
    return tensor.reshape(-1, max_seq_len, d).contiguous()


def reference_audio(ref, feeds: dict, mode: str) -> np.ndarray:
    """transformers' audio features: Phi4MultimodalAudioEmbedding on a prompt of audio tokens only
    over zero embeddings."""
    import transformers.models.phi4_multimodal.modeling_phi4_multimodal as M  # noqa: PLC0415

    total = int(feeds["audio_sizes"].sum())
    ids = torch.full((1, total), ref.config.audio_config.audio_token_id)
    zeros = torch.zeros((1, total, ref.config.hidden_size))
    M.unfold_tensor = unfold_tensor  # REFERENCE_FIX (a reshape for a view)
    return ref.model.embed_tokens_extend.audio_embed(
        ids, zeros, audio_input_features=torch.from_numpy(feeds["audio_embeds"]),
        audio_embed_sizes=torch.from_numpy(feeds["audio_sizes"]),
        audio_attention_mask=torch.from_numpy(feeds["audio_attention_mask"]), audio_projection_mode=mode)[0].numpy()


def check_audio(ref, rec: dict, vlm, speech, prefill: list, decode: list) -> list[str]:
    """The speech graph against Phi4MultimodalAudioEmbedding (both projections; a short padded
    batch and a long one in 500-step chunks), then a prompt of text and audio tokens (batch of 1):
    inputs_embeds, prefill logits against transformers' forward with audio_input_features, and one
    decode step."""
    failures: list[str] = []
    for frames in AUDIO_FRAMES:
        feeds = audio_inputs(ref.config, frames)
        for mode, code in AUDIO_MODES.items():
            feeds["audio_projection_mode"] = np.array([code], np.int64)
            got = speech.run(["audio_features"], feeds)[0]
            V.compare(rec, failures, f"audio_features {frames} {mode}", got, reference_audio(ref, feeds, mode), prefill)
    feeds = audio_inputs(ref.config, AUDIO_FRAMES[0])
    audio = speech.run(["audio_features"], feeds)[0]
    rng = np.random.default_rng(5)
    token = ref.config.audio_config.audio_token_id
    ids = np.concatenate([rng.integers(3, 240, size=4), [token] * int(feeds["audio_sizes"].sum()),
                          rng.integers(3, 240, size=3)])[None].astype(np.int64)
    mask = np.ones_like(ids)
    pos = np.arange(ids.shape[1])[None]
    t = torch.from_numpy
    out = ref(input_ids=t(ids), attention_mask=t(mask), position_ids=t(pos), use_cache=True,
              audio_input_features=t(feeds["audio_embeds"]), audio_embed_sizes=t(feeds["audio_sizes"]),
              audio_attention_mask=t(feeds["audio_attention_mask"]))
    embeds = vlm.embed(ids, None, audio)
    emb_ref = ref.model.embed_tokens(t(ids)).masked_scatter(t(ids == token)[..., None],
                                                            t(reference_audio(ref, feeds, "speech"))).numpy()
    V.compare(rec, failures, "audio prompt inputs_embeds", embeds, emb_ref, prefill)
    logits, state = vlm.step(embeds, mask, pos, None, ids)
    V.compare(rec, failures, "audio prompt prefill logits", logits, out.logits.numpy(), prefill)
    nxt = out.logits[:, -1].argmax(-1, keepdim=True)
    mask2 = np.ones((1, ids.shape[1] + 1), np.int64)
    pos2 = V.step_positions(pos, 0)
    out2 = ref(input_ids=nxt, attention_mask=t(mask2), position_ids=t(pos2), past_key_values=out.past_key_values,
               use_cache=True)
    logits2, _ = vlm.step(vlm.embed(nxt.numpy()), mask2, pos2, state, nxt.numpy())
    V.compare(rec, failures, "audio prompt decode logits", logits2, out2.logits.numpy(), decode)
    return failures


def hf_kwargs(feeds: dict) -> dict:
    return {"image_pixel_values": torch.from_numpy(feeds["pixel_values"]),
            "image_attention_mask": torch.from_numpy(feeds["image_attention_mask"]),
            "image_sizes": torch.from_numpy(feeds["image_sizes"])}


def reference_features(ref, feeds: dict, total: int) -> np.ndarray:
    """transformers' image features: Phi4MultimodalImageEmbedding on a prompt of `total` image
    tokens over zero embeddings (index_put writes every row)."""
    image_embed = ref.model.embed_tokens_extend.image_embed
    ids = torch.full((1, total), ref.config.vision_config.image_token_id)
    zeros = torch.zeros((1, total, ref.config.hidden_size))
    kw = hf_kwargs(feeds)
    return image_embed(ids, zeros, image_pixel_values=kw["image_pixel_values"], image_sizes=kw["image_sizes"],
                       image_attention_mask=kw["image_attention_mask"])[0].numpy()


def prefill(config) -> None:
    """transformers' forward on the image batch (test_config_fidelity: does transformers run this
    config?)."""
    model = AutoModelForCausalLM.from_config(config).eval()
    feeds, tokens = image_inputs(config)
    ids, mask = prompt_batch(config.vision_config.image_token_id, tokens)
    model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), **hf_kwargs(feeds))


def run(row, work: Path, rec: dict, build_args=(), full: bool = True) -> list[str]:
    write_checkpoint(row, work / "hf")
    return check(work, rec, build_args, full)


def check(work: Path, rec: dict, build_args=(), full: bool = True, ref=None) -> list[str]:
    """run()'s checks of the checkpoint in work / "hf", packaged into work / "onnx" (mobius build
    with `build_args`), against `ref` (default: the checkpoint in transformers); without `full`
    only the package, the image batch's features, prefill and decode steps."""
    if ref is None:
        ref = AutoModelForCausalLM.from_pretrained(work / "hf", dtype=torch.float32,
                                                   attn_implementation="eager").eval()
    H.build(work / "hf", work / "onnx", *build_args)
    failures = V.check_package(work / "onnx", rec, GRAPHS)
    if failures:
        return failures
    vlm = V.OnnxVLM(work / "onnx")
    speech = H.ort_session(H.graph_path(work / "onnx", "speech"))
    cfg = ref.config
    ref64 = H.float64(ref)  # the reference of every compared tensor; `ref` of the greedy tokens
    layers = cfg.num_hidden_layers
    past = {f"past_key_values.{i}.{k}" for i in range(layers) for k in ("key", "value")}
    present = {f"present.{i}.{k}" for i in range(layers) for k in ("key", "value")}
    feeds, tokens = image_inputs(cfg)
    if not build_args:
        failures = (H.io_problems(vlm.vision, set(feeds), {"image_features"})
                    + H.io_problems(speech, set(SPEECH_INPUTS), {"audio_features"})
                    + (H.io_problems(vlm.embedding, {"input_ids", "image_features", "audio_features"},
                                     {"inputs_embeds"}) if vlm.genai else
                       H.io_problems(vlm.embedding, {"input_ids"}, {"inputs_embeds"},
                                     {"image_features", "audio_features"}))
                    + H.io_problems(vlm.decoder, {"inputs_embeds", "attention_mask", "position_ids"} | past,
                                    {"logits"} | present))
    if failures:
        return failures
    image_token, audio_token = cfg.vision_config.image_token_id, cfg.audio_config.audio_token_id
    ids, mask = prompt_batch(image_token, tokens)
    t = torch.from_numpy
    pos = np.where(mask == 1, mask.cumsum(-1) - 1, 1)
    prefill, decode = [], []
    with torch.no_grad():
        feats_ref = reference_features(ref64, feeds, sum(tokens))
        feats = vlm.vision.run(["image_features"], feeds)[0]  # all images in one run, as onnxruntime-genai
        V.compare(rec, failures, "image_features", feats, feats_ref, prefill)
        if failures:
            return failures
        emb_ref = ref64.model.embed_tokens(t(ids))
        emb_ref = emb_ref.masked_scatter(t(ids == image_token)[..., None], t(feats_ref)).numpy()
        embeds = vlm.embed(ids, feats)
        V.compare(rec, failures, "inputs_embeds", embeds, emb_ref, prefill)
        out = ref64(input_ids=t(ids), attention_mask=t(mask), position_ids=t(pos), use_cache=True, **hf_kwargs(feeds))
        logits, state = vlm.step(embeds, mask, pos, None, ids)
        valid = mask.astype(bool)
        V.compare(rec, failures, "prefill logits", logits[valid], out.logits.numpy()[valid], prefill)
        cache, step_mask = out.past_key_values, mask
        for k in range(V.DECODE_STEPS):
            nxt = out.logits[:, -1].argmax(-1, keepdim=True).numpy() if k == 0 else nxt_logits.argmax(-1)[:, -1:]
            step_mask = np.concatenate([step_mask, np.ones((2, 1), np.int64)], axis=1)
            step_pos = V.step_positions(pos, k)
            out = ref64(input_ids=t(nxt), attention_mask=t(step_mask), position_ids=t(step_pos),
                      past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            nxt_logits, state = vlm.step(vlm.embed(nxt), step_mask, step_pos, state, nxt)
            V.compare(rec, failures, f"decode step {k} logits", nxt_logits, out.logits.numpy(), decode)
        failures += check_audio(ref64, rec, vlm, speech, prefill, decode)
        rec["prefill"], rec["decode"] = max(prefill), max(decode)
        if not full:
            return failures
        gen = ref.generate(input_ids=t(ids), attention_mask=t(mask), **hf_kwargs(feeds), max_new_tokens=V.GEN_NEW,
                           min_new_tokens=V.GEN_NEW, do_sample=False, num_beams=1, no_repeat_ngram_size=1,
                           suppress_tokens=[audio_token]).numpy()[:, ids.shape[1]:]
    seqs, gen_mask = ids.copy(), mask.copy()
    logits, state = vlm.step(embeds, mask, pos, None, ids)
    for k in range(V.GEN_NEW):
        scores = V.ngram_ban(logits[:, -1], seqs, cfg.eos_token_id)
        scores[:, audio_token] = -np.inf  # no audio features to put there (suppress_tokens)
        nxt = scores.argmax(-1)[:, None].astype(np.int64)
        seqs = np.concatenate([seqs, nxt], axis=1)
        if k == V.GEN_NEW - 1:
            break
        gen_mask = np.concatenate([gen_mask, np.ones((2, 1), np.int64)], axis=1)
        logits, state = vlm.step(vlm.embed(nxt), gen_mask, V.step_positions(pos, k), state, nxt)
    got = seqs[:, ids.shape[1]:]
    matched = int((got == gen).all(axis=0).cumprod().sum())
    rec["tokens"] = f"{matched}/{V.GEN_NEW}"
    if matched != V.GEN_NEW:
        failures.append(f"greedy: onnx {got.tolist()} != transformers {gen.tolist()}")
    failures += V.check_text_only(ref64, rec, vlm, prefill, decode)
    rec["prefill"], rec["decode"] = max(prefill), max(decode)
    rec["genai"] = "n/a"
    return failures


# onnxruntime-genai's phi4mm pipeline: its processor (onnxruntime-extensions' Phi4VisionProcessor)
# counts 256 + 16 global tokens an image and 14-pixel patches, and writes image tokens as 200010:
# the tiny model has the released 448 / 14 crops (one tower layer of two, width 32) and a vocabulary
# of 200064 (tied embeddings)
GENAI_CONFIG = dict(
    V.LLAVA_TEXT, vocab_size=200064, pad_token_id=0, tie_word_embeddings=True, rope_parameters=V.PHI4_ROPE,
    original_max_position_embeddings=4096, max_position_embeddings=16384,
    vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                       image_size=448, crop_size=448, patch_size=14),
    audio_config=dict(V.PHI4_AUDIO, audio_token_id=200011))
IMAGE_TOKEN, AUDIO_TOKEN = 200010, 200011  # <|endoftext10|>, <|endoftext11|>: og's phi_multimodal_processor.cpp
GENAI_PROMPT = "Describe <|image_1|> now."
GENAI_AUDIO_PROMPT = "Transcribe <|audio_1|> now."


def write_genai_tokenizer(hf_dir: Path) -> None:
    """vlm_harness' byte-level tokenizer with <|endoftext10|> at 200010 (the id onnxruntime-genai
    gives the expanded image tokens) and <|endoftext11|> at 200011 (audio)."""
    import json  # noqa: PLC0415

    V.write_tokenizer(hf_dir, [])
    path = hf_dir / "tokenizer.json"
    tok = json.loads(path.read_text())
    special = {"<|endoftext10|>": IMAGE_TOKEN, "<|endoftext11|>": IMAGE_TOKEN + 1}
    tok["model"]["vocab"].update(special)
    tok["added_tokens"] = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True} for t, i in special.items()]
    path.write_text(json.dumps(tok))
    cfg_path = hf_dir / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["added_tokens_decoder"] = {str(i): {"content": t, "special": True, "lstrip": False, "rstrip": False,
                                            "normalized": False, "single_word": False} for t, i in special.items()}
    cfg_path.write_text(json.dumps(cfg))


def write_wav(path: Path, seconds: float = 1.3, rate: int = 16000) -> None:
    """A 16-bit mono WAV: a 440 Hz tone with noise (seed 0)."""
    import wave  # noqa: PLC0415

    t = np.arange(int(seconds * rate)) / rate
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.random.default_rng(0).standard_normal(t.size)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((x * 32767).astype(np.int16).tobytes())


def compare_og(ref, ref64, ids: np.ndarray, kw: dict, og_logits, og_tokens, what: str, rec: dict) -> list[str]:
    """transformers' forward and generate on the processor's input_ids and tensors `kw` against
    onnxruntime-genai's prompt logits (max|Δ| <= harness.TOL) and tokens."""
    t = torch.from_numpy(ids)
    with torch.no_grad():
        want_logits = ref64(input_ids=t, attention_mask=torch.ones_like(t), **kw).logits.numpy()
        want = ref.generate(input_ids=t, attention_mask=torch.ones_like(t), **kw, max_new_tokens=V.GEN_NEW,
                            do_sample=False, num_beams=1, eos_token_id=ref.config.eos_token_id)[0, ids.shape[1]:].tolist()
    failures = []
    d = H.delta(rec, og_logits, want_logits)
    rec[f"{what} prompt logits"] = d
    if not d <= H.TOL:
        failures.append(f"genai {what} prompt logits: max|Δ| {d:.3g} > {H.TOL}")
    if og_tokens != want:
        failures.append(f"genai {what}: onnxruntime-genai {og_tokens} != transformers {want}")
    return failures


def check_genai(work: Path, rec: dict, build_args=()) -> list[str]:
    """onnxruntime-genai's multimodal pipeline on the package as written (genai_config.json type
    phi4mm, vision_processor.json, speech_processor.json, tokenizer): a 64 x 48 RGB PNG with
    GENAI_PROMPT, and a 1.3 s 16 kHz WAV with GENAI_AUDIO_PROMPT, through og.MultiModalProcessor
    (each expanded to its num_img_tokens x 200010 / audio_sizes x 200011), then greedy generation;
    transformers' forward on the processor's tensors (input_ids, pixel_values, image_attention_mask,
    image_sizes; audio_embeds, audio_sizes, audio_attention_mask) must give the pipeline's prompt
    logits (max|Δ| <= harness.TOL), and its generate the pipeline's tokens. (The processor's
    log-mel frames are not transformers' Phi4MultimodalFeatureExtractor's bit for bit: the
    comparison starts from the processor's tensors, as for the image.) `build_args` go to mobius build."""
    import onnxruntime_genai as og  # noqa: PLC0415

    config = AutoConfig.for_model("phi4_multimodal", **GENAI_CONFIG)
    write_model(config, work / "hf")
    write_genai_tokenizer(work / "hf")
    ref = AutoModelForCausalLM.from_pretrained(work / "hf", dtype=torch.float32, attn_implementation="eager").eval()
    ref64 = H.float64(ref)  # the reference of both prompts' logits; `ref` of the tokens
    H.build(work / "hf", work / "onnx", *build_args)
    png = work / "image.png"
    V.write_png(png, np.random.default_rng(3).integers(0, 256, size=(48, 64, 3), dtype=np.uint8))
    model = og.Model(str(work / "onnx"))
    proc = model.create_multimodal_processor()
    inputs = proc(GENAI_PROMPT, images=og.Images.open(str(png)))
    ids = np.array(inputs["input_ids"].as_numpy()).astype(np.int64)
    image = {k: torch.from_numpy(np.array(inputs[k].as_numpy()))
             for k in ("pixel_values", "image_attention_mask", "image_sizes")}
    tokens = int(np.array(inputs["num_image_tokens"].as_numpy()).sum())
    if int((ids == IMAGE_TOKEN).sum()) != tokens:
        return [f"genai: {int((ids == IMAGE_TOKEN).sum())} image tokens, the processor counts {tokens}"]
    kw = dict(image_pixel_values=image["pixel_values"], image_attention_mask=image["image_attention_mask"],
              image_sizes=image["image_sizes"].long())
    failures = compare_og(ref, ref64, ids, kw, *V.og_generate(og, model, inputs, ids.shape[1]), "image", rec)
    wav = work / "audio.wav"
    write_wav(wav)
    inputs = proc(GENAI_AUDIO_PROMPT, audios=og.Audios.open(str(wav)))
    ids = np.array(inputs["input_ids"].as_numpy()).astype(np.int64)
    audio = {k: torch.from_numpy(np.array(inputs[k].as_numpy()))
             for k in ("audio_embeds", "audio_sizes", "audio_attention_mask")}
    if int((ids == AUDIO_TOKEN).sum()) != int(audio["audio_sizes"].sum()):
        return failures + [f"genai: {int((ids == AUDIO_TOKEN).sum())} audio tokens, audio_sizes "
                           f"{audio['audio_sizes'].tolist()}"]
    kw = dict(audio_input_features=audio["audio_embeds"], audio_embed_sizes=audio["audio_sizes"].long(),
              audio_attention_mask=audio["audio_attention_mask"])
    return failures + compare_og(ref, ref64, ids, kw, *V.og_generate(og, model, inputs, ids.shape[1]), "audio", rec)
