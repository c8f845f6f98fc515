"""Parity harness of the image-text-to-text task: tiny random AutoModelForImageTextToText
checkpoint -> `mobius build` (vision.onnx, embedding.onnx, decoder.onnx; docs/vlm.md) ->
onnxruntime vs transformers.

Rows are typed (Row: model type, variant, config kwargs). Each row checks:
  - the package: exactly the three graphs and their data files, onnx.checker, the I/O names;
  - an image + text batch of 2 (two images of different sizes, row 1 left-padded): the vision
    graph's image_features against transformers' get_image_features, the embedding graph's
    inputs_embeds against the token embeddings with the features scattered in, the decoder's
    prefill logits (positions from transformers' get_rope_index) against transformers' forward
    on the same pixel_values, and DECODE_STEPS one-token steps through the cache;
  - GEN_NEW-token greedy generation equal to transformers' generate on the same batch
    (no_repeat_ngram_size 1 on both sides, as seq2seq_harness: tiny random models otherwise
    repeat one token);
  - a text-only prompt holding the image token (embedding graph fed 0 image_features rows):
    prefill and one decode step whose token is the image token;
  - onnxruntime-genai's multimodal pipeline (og.MultiModalProcessor on a PNG and a prompt, with
    the package's genai_config.json, vision_processor.json and tokenizer) generating
    transformers' greedy tokens from the same processed inputs (check_genai; the Qwen types and
    gemma3).
LLaVA-NeXT's images come from transformers' LlavaNextImageProcessorPil (anyres tiles, image_sizes)
and their token counts from LlavaNextProcessor (llava_next_images).
Gemma 3's decoder also reads input_ids (its image tokens attend to each other in both directions)
and transformers gets token_type_ids 1 at the image tokens; PaliGemma's prompt is its prefix
(token_type_ids 0, bidirectional at the first step) and its positions are 1-based.
Float32 tolerance: harness.TOL on every compared tensor.
"""

from __future__ import annotations

import dataclasses
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import onnx
import torch
from transformers import AutoConfig, AutoModelForImageTextToText

import harness as H


@dataclasses.dataclass(frozen=True)
class Row:
    model_type: str
    variant: str
    config: dict  # AutoConfig.for_model kwargs


# a byte-level tokenizer (write_tokenizer): the 256 bytes, then the special tokens (Qwen's, then
# Pixtral's, which onnxruntime-genai's mistral3 processor looks up by name)
SPECIAL = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>", "[IMG]", "[IMG_BREAK]", "[IMG_END]",
           "[INST]"]
VISION_START, VISION_END, IMAGE, VIDEO, IMG, IMG_BREAK, IMG_END, INST = range(256, 264)
GEMMA_SPECIAL = ["<start_of_image>", "<end_of_image>", "<image_soft_token>", "<pad>"] + SPECIAL[4:]  # the Gemma
# families' begin of image, end of image, image token, as onnxruntime-genai's gemma3 processor spells them
VOCAB = 264
# head_dim 16: mrope_section sums to 8; the vision tower: 2 heads of 16, patch 4, merge 2
TEXT = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, bos_token_id=1, eos_token_id=2,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0, mrope_section=[2, 3, 3]))
QWEN_IDS = dict(image_token_id=IMAGE, video_token_id=VIDEO, vision_start_token_id=VISION_START,
                vision_end_token_id=VISION_END)
ROWS = [
    # windows of 16 / 2 / 4 = 2 merged patches a side; block 1 attends the whole frame, 0 and 2
    # within windows (the 10 x 6 grid: 5 x 3 merged patches, so partial windows too)
    Row("qwen2_5_vl", "window", dict(QWEN_IDS, text_config=TEXT, vision_config=dict(
        depth=3, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=4, window_size=16,
        out_hidden_size=64, fullatt_block_indexes=[1]))),
    Row("qwen2_vl", "base", dict(QWEN_IDS, text_config=TEXT, vision_config=dict(
        depth=2, embed_dim=32, mlp_ratio=2, num_heads=2, patch_size=4, hidden_size=64))),
    # a 4 x 4 learned position grid resampled to the 10 x 6 and 6 x 8 images; no DeepStack
    Row("qwen3_vl", "base", dict(QWEN_IDS, text_config=dict(TEXT, head_dim=16), vision_config=dict(
        depth=2, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=4, out_hidden_size=64,
        num_position_embeddings=16, deepstack_visual_indexes=[]))),
    # DeepStack: blocks 2 and 0 feed 2 levels, added after decoder layers 0 and 1 (in block order:
    # block 0's merger deepstack_merger_list.1 first); layer 2 gets none
    Row("qwen3_vl", "deepstack", dict(QWEN_IDS, text_config=dict(TEXT, head_dim=16, num_hidden_layers=3),
                                      vision_config=dict(
        depth=3, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=4, out_hidden_size=64,
        num_position_embeddings=16, deepstack_visual_indexes=[2, 0]))),
    # Qwen3-VL-MoE: 4 experts (top 2) in layer 0, a dense MLP in layer 1 (mlp_only_layers); one
    # DeepStack level from block 0
    Row("qwen3_vl_moe", "deepstack", dict(QWEN_IDS, text_config=dict(
        TEXT, head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, mlp_only_layers=[1]),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=4,
                           out_hidden_size=64, num_position_embeddings=16, deepstack_visual_indexes=[0]))),
]
# LLaVA: a CLIP tower (32 x 32 images, patch 8: 16 patches and the class token), features of its
# second-to-last layer without the class token; a SigLIP tower with two concatenated layers
LLAVA_TEXT = {k: v for k, v in TEXT.items() if k != "rope_parameters"}
ROWS += [
    Row("llava", "clip", dict(image_token_id=IMAGE, text_config=dict(LLAVA_TEXT, model_type="llama"), vision_config=dict(
        model_type="clip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=3,
        num_attention_heads=2, image_size=32, patch_size=8))),
    Row("llava", "siglip-layers-full", dict(
        image_token_id=IMAGE, vision_feature_layer=[-1, 1], vision_feature_select_strategy="full",
        text_config=dict(LLAVA_TEXT, model_type="qwen2"), vision_config=dict(
            model_type="siglip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, image_size=32, patch_size=8))),
]
# VipLLaVA: a CLIP tower of 12 layers, so that the default vision_feature_layer [-2, -5, -8, -11, 6]
# applies (five layers concatenated, through the projector's LayerNorm)
ROWS += [
    Row("vipllava", "clip-default-layers", dict(
        image_token_id=IMAGE, text_config=dict(LLAVA_TEXT, model_type="llama"), vision_config=dict(
            model_type="clip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=12,
            num_attention_heads=2, image_size=32, patch_size=8))),
]
# LLaVA-NeXT: tiles of 16 x 16 in patches of 4 (4 x 4 patches a tile), pinpoints of 1 x 2, 2 x 1, 2 x 2
# and 3 x 1 tiles. LLAVA_NEXT_SIZES (height, width): the first image takes 1 x 2 tiles (equal
# effective resolution with 2 x 2, less waste) whose 4 x 8 feature grid is unpadded to rows 1-2;
# the second 2 x 2 tiles, unpadded to columns 2-5; pixel_values padded to 5 tiles, as the
# processor batches them. A CLIP tower (strategy default) with a mistral decoder (llava-v1.6-mistral's
# layout), and a SigLIP tower (full, two layers) with a qwen2 decoder
NEXT_PINPOINTS = [[16, 32], [32, 16], [32, 32], [48, 16]]
NEXT_VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=16,
                   patch_size=4)
LLAVA_NEXT_SIZES = [(12, 44), (40, 24)]
ROWS += [
    Row("llava_next", "clip-mistral", dict(image_token_id=IMAGE, image_grid_pinpoints=NEXT_PINPOINTS,
                                           text_config=dict(LLAVA_TEXT, model_type="mistral"),
                                           vision_config=dict(NEXT_VISION, model_type="clip_vision_model"))),
    Row("llava_next", "siglip-layers-full", dict(
        image_token_id=IMAGE, image_grid_pinpoints=NEXT_PINPOINTS, vision_feature_layer=[-1, 1],
        vision_feature_select_strategy="full", text_config=dict(LLAVA_TEXT, model_type="qwen2"),
        vision_config=dict(NEXT_VISION, model_type="siglip_vision_model"))),
]
# Idefics3 / SmolVLM: a SigLIP-like tower over 48 x 48 images of 8 x 8 patches (6 a side), pixel
# shuffle by 2 (9 image tokens an image); llama decoder
IDEFICS_VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                      image_size=48, patch_size=8)
ROWS += [
    Row("idefics3", "base", dict(image_token_id=IMAGE, scale_factor=2, text_config=dict(LLAVA_TEXT, model_type="llama"),
                                 vision_config=IDEFICS_VISION)),
    # 25 patches a side, where torch.arange's float32 boundaries differ from the rounded i / 25 (the
    # unpadded images' positions depend on it); scale_factor 5: 25 image tokens of 25 patches each
    Row("smolvlm", "side25-scale5", dict(image_token_id=IMAGE, scale_factor=5,
                                         text_config=dict(LLAVA_TEXT, model_type="llama"),
                                         vision_config=dict(IDEFICS_VISION, num_hidden_layers=3, image_size=200))),
]
# PaddleOCR-VL: a SigLIP-like tower (patch 4, a 4 x 4 learned position grid resampled to the 10 x 6
# and 6 x 8 images, 2-D RoPE), merge 2; the ERNIE 4.5 decoder with biases and M-RoPE
ROWS += [
    Row("paddleocr_vl", "base", dict(QWEN_IDS, text_config=dict(TEXT, head_dim=16, use_bias=True), vision_config=dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=16,
        patch_size=4, spatial_merge_size=2))),
]
# Gemma 3: a SigLIP tower over 64 x 64 images in patches of 2 (32 x 32 patches) pooled in 2 x 2
# squares to the 256 tokens per image onnxruntime-genai's gemma3 processor inserts; a sliding
# layer (window 8, shorter than the 256 image tokens, which still see the whole image ahead) and
# a full one. PaliGemma: a gemma decoder, 32 x 32 images in patches of 8.
GEMMA_TEXT = dict(LLAVA_TEXT, head_dim=16)
SIGLIP = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, vision_use_head=False)
ROWS += [
    Row("gemma3", "sliding-full", dict(
        image_token_index=IMAGE, boi_token_index=VISION_START, eoi_token_index=VISION_END, mm_tokens_per_image=256,
        text_config=dict(GEMMA_TEXT, sliding_window=8, layer_types=["sliding_attention", "full_attention"]),
        vision_config=dict(SIGLIP, image_size=64, patch_size=2))),
    Row("paligemma", "base", dict(image_token_index=IMAGE, projection_dim=64,
                                  text_config=dict(GEMMA_TEXT, model_type="gemma"),
                                  vision_config=dict(SIGLIP, image_size=32, patch_size=8))),
]
GRIDS = [(1, 10, 6), (1, 6, 8)]  # one image per batch row (t, h, w patches)
# Idefics3 / SmolVLM: batch row 0 has two images (the tiles of a split image), row 1 one image
# padded to the tower's size: its real pixels are the top-left 36 x 44 (5 x 6 patches)
IDEFICS_IMAGES = [2, 1]
IDEFICS_REAL = (36, 44)
# Mistral 3: a Pixtral tower (patch 4, merge 2: 8 x 8 pixels per image token), the mistral decoder
ROWS += [
    Row("mistral3", "base", dict(image_token_id=IMG, text_config=dict(LLAVA_TEXT, model_type="mistral"), vision_config=dict(
        model_type="pixtral", hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        patch_size=4, image_size=64))),
    # Ministral 3's decoder (yarn RoPE with the llama-4 query scale), the features of the first layer
    Row("mistral3", "ministral3-layer-1", dict(image_token_id=IMG, vision_feature_layer=1,
                                               text_config=dict(LLAVA_TEXT, model_type="ministral3"),
                                               vision_config=dict(model_type="pixtral", hidden_size=32,
                                                                  intermediate_size=64, num_hidden_layers=2,
                                                                  num_attention_heads=2, patch_size=4, image_size=64))),
]
# Phi-4-multimodal (vision + text; its own checks: phi4mm_harness): the phi3 decoder with longrope
# on 3/4 of the head (short factors: the prompts stay under original_max_position_embeddings), a
# SigLIP-like tower over 32 x 32 crops in patches of 4 (8 x 8 patches, 4 x 4 tokens a crop after
# the 2 x 2 compression), features of layer 2 of 3 (feature_layer -2); a tiny audio encoder
# (its speech graph: a short padded batch of two audios and a long one in 500-step chunks; a
# symmetric relative bias)
PHI4_AUDIO = dict(hidden_size=32, intermediate_size=64, num_blocks=2, num_attention_heads=2, ext_pw_out_channel=32,
                  depthwise_separable_out_channel=32, nemo_conv_channels=32, audio_token_id=VIDEO)
PHI4_ROPE = dict(rope_type="longrope", rope_theta=10000.0, partial_rotary_factor=0.75,
                 short_factor=[1.0, 1.1, 1.3, 1.7, 2.0, 2.5], long_factor=[1.5, 2.0, 3.0, 4.0, 6.0, 8.0])
ROWS += [
    Row("phi4_multimodal", "base", dict(
        LLAVA_TEXT, pad_token_id=0, rope_parameters=PHI4_ROPE,
        original_max_position_embeddings=4096, max_position_embeddings=16384,
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=2,
                           image_size=32, crop_size=32, patch_size=4, image_token_id=IMAGE),
        audio_config=dict(PHI4_AUDIO, bias_symmetric=True))),
    # 7 x 7 patches a crop: the grid reflection-padded to 8 x 8 before the 2 x 2 compression, the
    # useful rows and columns counted on every other patch of each crop; the features of layer 1;
    # the audio encoder's streaming mask (chunks of 4 steps, 1 chunk to the left) and its relative
    # bias clamped at distance 6
    Row("phi4_multimodal", "odd-grid-layer-1", dict(
        LLAVA_TEXT, pad_token_id=0, rope_parameters=PHI4_ROPE, original_max_position_embeddings=4096,
        max_position_embeddings=16384,
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=28, crop_size=28, patch_size=4, image_token_id=IMAGE, feature_layer=1),
        audio_config=dict(PHI4_AUDIO, chunk_size=4, left_chunk=1, bias_max_distance=6))),
]
PIXTRAL_SIZES = [(48, 32), (32, 40)]  # Mistral 3: (height, width) of each batch row's image
PAD = 5  # left padding of batch row 1
DECODE_STEPS = 2
GEN_NEW = 24
TEXT_ONLY_LEN = 12


def types() -> set[str]:
    return {r.model_type for r in ROWS}


def base_row(model_type: str) -> Row:
    """The first row of `model_type` (test_config_fidelity's base sizes)."""
    return next(r for r in ROWS if r.model_type == model_type)


def write_checkpoint(row: Row, hf_dir: Path):
    """The tiny model of `row` (write_model)."""
    return write_model(AutoConfig.for_model(row.model_type, **row.config), hf_dir)


def write_model(config, hf_dir: Path):
    """AutoModelForImageTextToText from `config` (seed 0), every parameter re-randomized
    (harness.rerandomize), saved to hf_dir with a tokenizer (write_tokenizer); returns the model."""
    if config.model_type == "phi4_multimodal":  # an AutoModelForCausalLM
        import phi4mm_harness  # noqa: PLC0415

        return phi4mm_harness.write_model(config, hf_dir)
    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_config(config, dtype=torch.float32, attn_implementation="eager").eval()
    H.rerandomize(model)
    model.save_pretrained(hf_dir)
    write_tokenizer(hf_dir, GEMMA_SPECIAL if is_gemma(config) else SPECIAL)
    return model


def write_tokenizer(hf_dir: Path, special: list[str]) -> None:
    """A byte-level BPE tokenizer without merges (Qwen2's pre-tokenizer and decoder): ids 0-255 are
    the bytes, `special` follow; tokenizer.json and tokenizer_config.json (Qwen2Tokenizer)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: PLC0415

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    byte_chars = {c: ord(c) if ord(c) < 256 else None for c in alphabet}
    # bytes_to_unicode: printable bytes map to themselves, the others to 256 + n in byte order
    others = sorted(b for b in range(256) if chr(b) not in byte_chars or byte_chars[chr(b)] is None)
    vocab = {chr(b): b for b in range(256) if chr(b) in alphabet}
    vocab.update({chr(256 + n): b for n, b in enumerate(others)})
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(special)
    tok.save(str(hf_dir / "tokenizer.json"))
    added = {str(256 + i): {"content": t, "special": True, "lstrip": False, "rstrip": False, "normalized": False,
                            "single_word": False} for i, t in enumerate(special)}
    (hf_dir / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "Qwen2Tokenizer", "added_tokens_decoder": added, "model_max_length": 1024}))


def is_qwen(config) -> bool:
    return config.model_type.startswith("qwen")


def is_mrope(config) -> bool:
    """Qwen-VL and PaddleOCR-VL: flattened patches with image_grid_thw, M-RoPE positions [3, B, S]."""
    return is_qwen(config) or config.model_type == "paddleocr_vl"


def is_idefics(config) -> bool:
    return config.model_type in ("idefics3", "smolvlm")


def is_mistral3(config) -> bool:
    return config.model_type == "mistral3"


def is_llava_next(config) -> bool:
    return config.model_type == "llava_next"


def is_gemma(config) -> bool:
    return config.model_type in ("gemma3", "paligemma")


def has_genai(config) -> bool:
    """onnxruntime-genai 0.18 runs the package (its multimodal model types)."""
    return is_qwen(config) or config.model_type == "gemma3"


def token_types(config, ids: np.ndarray) -> dict:
    """transformers' token_type_ids for a prompt of the Gemma families (gemma3: 1 at the image
    tokens; paligemma: 0, the whole prompt is the prefix), as their processors make them."""
    if config.model_type == "gemma3":
        return {"token_type_ids": torch.from_numpy((ids == config.image_token_id).astype(np.int64))}
    if config.model_type == "paligemma":
        return {"token_type_ids": torch.zeros(ids.shape, dtype=torch.int64)}
    return {}


def image_tokens(config) -> list[int]:
    """The image tokens of each batch row's image."""
    v = config.vision_config
    if is_mrope(config):
        return [t * h * w // v.spatial_merge_size ** 2 for t, h, w in GRIDS]
    if is_idefics(config):
        return [n * (v.image_size // v.patch_size // config.scale_factor) ** 2 for n in IDEFICS_IMAGES]
    if is_mistral3(config):
        return [(h // (v.patch_size * config.spatial_merge_size)) * (w // (v.patch_size * config.spatial_merge_size))
                for h, w in PIXTRAL_SIZES]
    if config.model_type == "gemma3":
        return [config.mm_tokens_per_image] * 2
    if is_llava_next(config):
        return llava_next_images(config)[1]
    patches = (v.image_size // v.patch_size) ** 2
    if config.model_type == "paligemma":
        return [patches] * 2
    full = getattr(config, "vision_feature_select_strategy", "default") == "full"  # VipLLaVA: no strategy
    return [patches + (full and v.model_type == "clip_vision_model")] * 2


def llava_next_images(config, sizes=tuple(LLAVA_NEXT_SIZES)) -> tuple[dict, list[int]]:
    """LLaVA-NeXT's vision feeds and each image's tokens, from transformers: random RGB images of
    `sizes` (height, width) through LlavaNextImageProcessorPil (anyres tiles of the tower's size
    over the config's image_grid_pinpoints: pixel_values [images, max tiles, C, S, S]
    zero-padded, image_sizes [images, 2]) and the tokens LlavaNextProcessor expands each image's
    <|image_pad|> to (the class token counted as num_additional_image_tokens 1 for CLIP, as the
    released processors)."""
    import tempfile  # noqa: PLC0415

    from transformers import AutoTokenizer, LlavaNextProcessor  # noqa: PLC0415
    from transformers.models.llava_next.image_processing_pil_llava_next import LlavaNextImageProcessorPil  # noqa: PLC0415

    v = config.vision_config
    rng = np.random.default_rng(4)
    images = [rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8) for h, w in sizes]
    side = {"height": v.image_size, "width": v.image_size}
    proc = LlavaNextImageProcessorPil(size={"shortest_edge": v.image_size}, crop_size=side,
                                      image_grid_pinpoints=config.image_grid_pinpoints)
    out = proc(images, return_tensors="np")
    feeds = {"pixel_values": out["pixel_values"].astype(np.float32), "image_sizes": out["image_sizes"].astype(np.int64)}
    with tempfile.TemporaryDirectory() as d:
        write_tokenizer(Path(d), SPECIAL)
        tok = AutoTokenizer.from_pretrained(d)
    text = LlavaNextProcessor(image_processor=proc, tokenizer=tok, patch_size=v.patch_size,
                              vision_feature_select_strategy=config.vision_feature_select_strategy,
                              num_additional_image_tokens=int(v.model_type == "clip_vision_model"),
                              image_token=SPECIAL[IMAGE - 256])
    counts = [int((np.array(text(text="a<|image_pad|>b", images=[im])["input_ids"]) == IMAGE).sum()) for im in images]
    return feeds, counts


def images_per_row(config) -> list[int]:
    """Images of each batch row: Gemma 3's first row has two (each a block of its own: its tokens
    see the other image's causally only), the other rows and families one."""
    return [2, 1] if config.model_type == "gemma3" else [1, 1]


def image_batch(config, seed: int = 1):
    """input_ids, attention_mask, mm_token_type_ids [2, S]; the vision graph's feeds (Qwen:
    pixel_values [patches, patch_dim], image_grid_thw [2, 3]; Mistral 3: pixel_values [2, C, H, W]
    zero-padded, image_sizes [2, 2], as its processor batches them; the others: pixel_values
    [images, C, S, S]). Row r: text, then per image of the row (images_per_row) <vision_start>,
    the image's tokens, <vision_end>, text."""
    rng = np.random.default_rng(seed)
    rows = []
    for r, n in enumerate(image_tokens(config)):
        text = lambda n: list(rng.integers(3, 240, size=n))  # noqa: E731
        row = text(5 - 2 * r)
        for _ in range(images_per_row(config)[r]):
            row += [VISION_START] + [config.image_token_id] * n + [VISION_END] + text(4)
        rows.append(row)
    seq = max(len(x) for x in rows) + PAD
    ids = np.zeros((2, seq), np.int64)
    mask = np.zeros((2, seq), np.int64)
    for r, x in enumerate(rows):
        ids[r, seq - len(x):] = x
        mask[r, seq - len(x):] = 1
    v = config.vision_config
    if is_mrope(config):
        # Qwen: [patches, C * temporal * patch^2]; PaddleOCR-VL: [patches, C, patch, patch]
        patch = ((v.in_channels * v.temporal_patch_size * v.patch_size ** 2,) if is_qwen(config)
                 else (v.num_channels, v.patch_size, v.patch_size))
        pixels = rng.standard_normal((sum(t * h * w for t, h, w in GRIDS), *patch)).astype(np.float32)
        feeds = {"pixel_values": pixels, "image_grid_thw": np.array(GRIDS, np.int64)}
    elif is_idefics(config):  # the images of both rows in order; the padding pixels are 0, as the processor's
        s = v.image_size
        real = np.ones((sum(IDEFICS_IMAGES), s, s), np.int64)
        real[-1, IDEFICS_REAL[0]:] = 0
        real[-1, :, IDEFICS_REAL[1]:] = 0
        pixels = (rng.standard_normal((len(real), v.num_channels, s, s)) * real[:, None]).astype(np.float32)
        feeds = {"pixel_values": pixels, "pixel_attention_mask": real}
    elif is_llava_next(config):
        feeds = llava_next_images(config)[0]
    elif is_mistral3(config):
        pixels = np.zeros((2, v.num_channels, *np.max(PIXTRAL_SIZES, axis=0)), np.float32)
        for i, (h, w) in enumerate(PIXTRAL_SIZES):
            pixels[i, :, :h, :w] = rng.standard_normal((v.num_channels, h, w))
        feeds = {"pixel_values": pixels, "image_sizes": np.array(PIXTRAL_SIZES, np.int64)}
    else:
        images = sum(images_per_row(config))
        feeds = {"pixel_values": rng.standard_normal((images, v.num_channels, v.image_size, v.image_size)).astype(np.float32)}
    return ids, mask, (ids == config.image_token_id).astype(np.int64), feeds


def hf_image_kwargs(config, feeds: dict, types_, ids) -> dict:
    """transformers' image arguments for the feeds (Qwen: + mm_token_type_ids, which its position
    computation needs; the Gemma families: + token_type_ids)."""
    if is_idefics(config):
        return idefics_inputs(feeds)
    kw = {k: torch.from_numpy(v) for k, v in feeds.items()}
    if is_mrope(config):
        kw["mm_token_type_ids"] = torch.from_numpy(types_)
    return kw | token_types(config, ids)


def idefics_inputs(feeds: dict) -> dict:
    """transformers' Idefics3 / SmolVLM image arguments: the images grouped per batch row,
    [batch, max_images, ...], a row's missing images all zero (pixels and mask), as the processor
    pads them."""
    out = {}
    for name, x in feeds.items():
        padded = np.zeros((len(IDEFICS_IMAGES), max(IDEFICS_IMAGES), *x.shape[1:]), x.dtype)
        starts = np.cumsum([0] + IDEFICS_IMAGES)
        for r, n in enumerate(IDEFICS_IMAGES):
            padded[r, :n] = x[starts[r]:starts[r] + n]
        out[name] = torch.from_numpy(padded)
    return out


def reference_features(ref, feeds: dict) -> np.ndarray:
    kw = {k: torch.from_numpy(v) for k, v in feeds.items()}
    if is_idefics(ref.config):
        kw = idefics_inputs(feeds)
    elif is_mistral3(ref.config):
        kw["vision_feature_layer"] = ref.config.vision_feature_layer
    elif ref.config.model_type in ("llava", "llava_next"):
        kw = dict(kw, vision_feature_layer=ref.config.vision_feature_layer,
                  vision_feature_select_strategy=ref.config.vision_feature_select_strategy)
    elif ref.config.model_type == "vipllava":
        kw["vision_feature_layer"] = ref.config.vision_feature_layer
    out = ref.model.get_image_features(**kw)
    feats = torch.cat(list(out.pooler_output)).reshape(-1, ref.config.text_config.hidden_size)
    # Qwen3-VL's DeepStack levels the decoder uses, concatenated after them (docs/vlm.md)
    levels = (getattr(out, "deepstack_features", None) or [])[:ref.config.text_config.num_hidden_layers]
    return torch.cat([feats] + [torch.cat(list(level)) for level in levels], dim=-1).numpy()


def prefill_positions(ref, ids, mask, types_, feeds: dict) -> np.ndarray:
    """Qwen: transformers' get_rope_index [3, B, S]; the others: the tokens' index among the row's
    unpadded tokens (padding 1), as transformers' generate derives them from attention_mask, plus
    1 for PaliGemma (1-based)."""
    if is_mrope(ref.config):
        return ref.model.get_rope_index(torch.from_numpy(ids), torch.from_numpy(types_),
                                        image_grid_thw=torch.from_numpy(feeds["image_grid_thw"]),
                                        attention_mask=torch.from_numpy(mask))[0].numpy()
    return np.where(mask == 1, mask.cumsum(-1) - 1, 1) + first_position(ref.config)


def first_position(config) -> int:
    return 1 if config.model_type == "paligemma" else 0


def step_positions(pos: np.ndarray, k: int) -> np.ndarray:
    """Decode step k's positions: each row's last prompt position + 1 + k (all three M-RoPE rows)."""
    last = pos.max(axis=-1, keepdims=True)
    if pos.ndim == 3:
        last = last.max(axis=0, keepdims=True).repeat(3, axis=0)
    return last + 1 + k


NO_ROWS = np.zeros((0, 0), np.float32)  # OnnxVLM.embed: zero feature rows (sized to the graph's hidden)


class OnnxVLM:
    def __init__(self, out_dir: Path):
        self.vision = H.ort_session(H.graph_path(out_dir, "vision"))
        self.embedding = H.ort_session(H.graph_path(out_dir, "embedding"))
        self.decoder = H.ort_session(H.graph_path(out_dir, "decoder"))
        self.vision_inputs = {i.name for i in self.vision.get_inputs()}
        # a package onnxruntime-genai runs (ImageTextToText::genai_multimodal: genai_config.json
        # written): the embedding graph's feature inputs are required (genai 0.18 binds no
        # optional input); else optional (transformers.js calls embed_tokens with input_ids alone)
        self.genai = (out_dir / "genai_config.json").is_file()
        inputs = {i.name: i.shape for i in self.decoder.get_inputs()}
        self.hidden = inputs["inputs_embeds"][2]
        self.reads_ids = "input_ids" in inputs  # Gemma 3's decoder
        self.reads_positions = "position_ids" in inputs  # not when --ep cpu rotates inside GroupQueryAttention
        self.past = {n: s for n, s in inputs.items() if n.startswith("past_key_values.")}
        self.outputs = [o.name for o in self.decoder.get_outputs()]

    def image_features(self, feeds: dict) -> np.ndarray:
        """The vision graph's image_features; with image_sizes that the graph does not read
        (Mistral 3) one run per image, on the image cut out of the padded batch, as
        onnxruntime-genai's PixtralVisionState does."""
        if set(feeds) <= self.vision_inputs:
            return self.vision.run(["image_features"], feeds)[0]
        return np.concatenate([self.vision.run(["image_features"], {"pixel_values": feeds["pixel_values"][i:i + 1, :, :h, :w]})[0]
                               for i, (h, w) in enumerate(feeds["image_sizes"])])

    def embed(self, ids, features=None, audio=None) -> np.ndarray:
        """inputs_embeds of ids with image_features `features` (and, for an embedding graph that
        reads them, Phi-4-multimodal's audio_features `audio`); None: the input left out where it is
        optional, as transformers.js calls the graph (its default: no rows), else zero rows;
        NO_ROWS: zero rows, as onnxruntime-genai feeds them."""
        required = {i.name for i in self.embedding.get_inputs()}
        declared = required | {i.name for i in self.embedding.get_overridable_initializers()}
        feeds = {"input_ids": ids}
        for name, x in (("image_features", features), ("audio_features", audio)):
            if x is NO_ROWS or (x is None and name in required):
                x = np.zeros((0, self.hidden), np.float32)
            if x is not None and name in declared:
                feeds[name] = x
        return self.embedding.run(["inputs_embeds"], feeds)[0]

    def step(self, embeds, mask, pos, state, ids):
        """Returns (logits, state); state None = empty caches; ids: the tokens of embeds."""
        b = embeds.shape[0]
        if state is None:
            state = {"present." + n[len("past_key_values."):]: np.zeros((b, s[1], 0, s[3]), np.float32)
                     for n, s in self.past.items()}
        feeds = {"inputs_embeds": embeds, "attention_mask": mask}
        if self.reads_positions:
            feeds["position_ids"] = pos
        if self.reads_ids:
            feeds["input_ids"] = ids
        for name, v in state.items():
            feeds["past_key_values." + name[len("present."):]] = v
        got = dict(zip(self.outputs, self.decoder.run(self.outputs, feeds)))
        return got["logits"], {k: v for k, v in got.items() if k != "logits"}


def check_package(out_dir: Path, rec: dict, graphs=("vision", "embedding", "decoder")) -> list[str]:
    files = {f for f in H.package_files(out_dir) if f.endswith((".onnx", ".onnx.data", ".onnx_data"))}
    want = H.graph_files(graphs, H.layout(out_dir))
    if files != want:
        return [f"package files {sorted(files)}, expected {sorted(want)}"]
    for name in graphs:
        try:
            onnx.checker.check_model(str(H.graph_path(out_dir, name)), full_check=True)
        except Exception as e:  # noqa: BLE001 - reported
            rec["checker"] = "fail"
            return [f"onnx.checker {name}: {str(e).splitlines()[0]}"]
    rec["checker"] = "pass"
    return []


def check_io(onnx_vlm: OnnxVLM, config, vision_inputs: set) -> list[str]:
    layers = config.text_config.num_hidden_layers
    past = {f"past_key_values.{i}.{k}" for i in range(layers) for k in ("key", "value")}
    present = {f"present.{i}.{k}" for i in range(layers) for k in ("key", "value")}
    ids = {"input_ids"} if config.model_type == "gemma3" else set()
    return (H.io_problems(onnx_vlm.vision, vision_inputs, {"image_features"})
            + (H.io_problems(onnx_vlm.embedding, {"input_ids", "image_features"}, {"inputs_embeds"})
               if onnx_vlm.genai else
               H.io_problems(onnx_vlm.embedding, {"input_ids"}, {"inputs_embeds"}, {"image_features"}))
            + H.io_problems(onnx_vlm.decoder, {"inputs_embeds", "attention_mask", "position_ids"} | past | ids,
                            {"logits"} | present))


def compare(rec: dict, failures: list, what: str, got, want, deltas: list) -> None:
    """Appends max|got - want| (want: the float64 reference's) to `deltas` (harness.delta: the
    scale into rec) and a failure when it is above harness.TOL."""
    d = H.delta(rec, got, want)
    deltas.append(d)
    if not d <= H.TOL:
        failures.append(f"{what}: max|Δ| {d:.3g} > {H.TOL}")


def ngram_ban(scores: np.ndarray, seqs: np.ndarray, eos: int) -> np.ndarray:
    """transformers' NoRepeatNGramLogitsProcessor with size 1 (every token of the row so far
    banned) and MinNewTokensLengthLogitsProcessor (eos banned: min_new_tokens = GEN_NEW)."""
    scores = scores.copy()
    np.put_along_axis(scores, seqs, -np.inf, axis=1)
    scores[:, eos] = -np.inf
    return scores


def run(row: Row, work: Path, rec: dict, build_args=(), full: bool = True) -> list[str]:
    """Fills `rec` (prefill = the vision, embedding and prefill max|Δ|, decode = the steps',
    tokens = matched greedy tokens); returns the failed checks. `build_args` go to mobius build;
    without `full` only the package, the image batch's prefill and decode steps are checked."""
    if row.model_type == "phi4_multimodal":  # its own inputs and reference class
        import phi4mm_harness  # noqa: PLC0415

        return phi4mm_harness.run(row, work, rec, build_args, full)
    write_checkpoint(row, work / "hf")
    return check(work, rec, build_args, full)


def check(work: Path, rec: dict, build_args=(), full: bool = True) -> list[str]:
    """run()'s checks of the checkpoint in work / "hf", packaged into work / "onnx"."""
    if json.loads((work / "hf" / "config.json").read_text())["model_type"] == "phi4_multimodal":
        import phi4mm_harness  # noqa: PLC0415

        return phi4mm_harness.check(work, rec, build_args, full)
    ref = AutoModelForImageTextToText.from_pretrained(work / "hf", dtype=torch.float32,
                                                      attn_implementation="eager").eval()
    ref64 = H.float64(ref)  # the reference of every compared tensor; `ref` of the greedy tokens
    H.build(work / "hf", work / "onnx", *build_args)
    failures = check_package(work / "onnx", rec)
    if failures:
        return failures
    vlm = OnnxVLM(work / "onnx")
    ids, mask, types_, feeds = image_batch(ref.config)
    if not build_args:
        failures = check_io(vlm, ref.config, set(feeds) - ({"image_sizes"} if is_mistral3(ref.config) else set()))
    if failures:
        return failures
    t = torch.from_numpy
    image_kw = hf_image_kwargs(ref.config, feeds, types_, ids)
    pos = prefill_positions(ref, ids, mask, types_, feeds)
    # Qwen derives its M-RoPE positions itself; LLaVA's forward counts padding, so they are given
    pos_kw = {} if is_mrope(ref.config) else {"position_ids": t(pos)}
    prefill, decode = [], []
    with torch.no_grad():
        feats_ref = reference_features(ref64, feeds)
        feats = vlm.image_features(feeds)
        compare(rec, failures, "image_features", feats, feats_ref, prefill)
        emb_ref = ref64.model.get_input_embeddings()(t(ids))
        # with DeepStack levels: zeros past the token embeddings, the features' width at the images
        emb_ref = torch.nn.functional.pad(emb_ref, (0, feats_ref.shape[1] - emb_ref.shape[-1]))
        emb_ref = emb_ref.masked_scatter(t(ids == ref.config.image_token_id)[..., None], t(feats_ref)).numpy()
        embeds = vlm.embed(ids, feats)
        compare(rec, failures, "inputs_embeds", embeds, emb_ref, prefill)
        out = ref64(input_ids=t(ids), attention_mask=t(mask), use_cache=True, **image_kw, **pos_kw)
        logits, state = vlm.step(embeds, mask, pos, None, ids)
        valid = mask.astype(bool)
        compare(rec, failures, "prefill logits", logits[valid], out.logits.numpy()[valid], prefill)
        cache = out.past_key_values
        step_mask = mask
        for k in range(DECODE_STEPS):
            nxt = out.logits[:, -1].argmax(-1, keepdim=True).numpy() if k == 0 else nxt_logits.argmax(-1)[:, -1:]
            step_mask = np.concatenate([step_mask, np.ones((2, 1), np.int64)], axis=1)
            step_pos = step_positions(pos, k)
            out = ref64(input_ids=t(nxt), attention_mask=t(step_mask), position_ids=t(step_pos),
                      past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            nxt_logits, state = vlm.step(vlm.embed(nxt), step_mask, step_pos, state, nxt)
            compare(rec, failures, f"decode step {k} logits", nxt_logits, out.logits.numpy(), decode)
        rec["prefill"], rec["decode"] = max(prefill), max(decode)
        if not full:
            return failures
        # greedy generation on the same batch
        gen = ref.generate(input_ids=t(ids), attention_mask=t(mask), **image_kw, max_new_tokens=GEN_NEW,
                           min_new_tokens=GEN_NEW, do_sample=False, num_beams=1,
                           no_repeat_ngram_size=1).numpy()[:, ids.shape[1]:]
    seqs, gen_mask = ids.copy(), mask.copy()
    logits, state = vlm.step(embeds, mask, pos, None, ids)
    for k in range(GEN_NEW):
        nxt = ngram_ban(logits[:, -1], seqs, ref.config.text_config.eos_token_id).argmax(-1)[:, None].astype(np.int64)
        seqs = np.concatenate([seqs, nxt], axis=1)
        if k == GEN_NEW - 1:
            break
        gen_mask = np.concatenate([gen_mask, np.ones((2, 1), np.int64)], axis=1)
        logits, state = vlm.step(vlm.embed(nxt), gen_mask, step_positions(pos, k), state, nxt)
    got = seqs[:, ids.shape[1]:]
    matched = int((got == gen).all(axis=0).cumprod().sum())
    rec["tokens"] = f"{matched}/{GEN_NEW}"
    if matched != GEN_NEW:
        failures.append(f"greedy: onnx {got.tolist()} != transformers {gen.tolist()}")
    failures += check_text_only(ref64, rec, vlm, prefill, decode)
    rec["prefill"], rec["decode"] = max(prefill), max(decode)
    if is_mistral3(ref.config):
        return failures + check_genai_mistral3(ref, ref64, work / "onnx", work / "image.png", rec)
    if not has_genai(ref.config):  # onnxruntime-genai 0.18 has no llava (nor llava_next, vipllava), idefics3, smolvlm,
        # paddleocr_vl or paligemma type
        rec["genai"] = "n/a"
        return failures + ([] if not (work / "onnx" / "genai_config.json").exists()
                           else ["genai_config.json written for a type onnxruntime-genai does not run"])
    return failures + check_genai(ref, ref64, work / "onnx", work / "image.png", rec)


def write_png(path: Path, rgb: np.ndarray) -> None:
    """An 8-bit RGB PNG of rgb [height, width, 3] (PNG spec: signature, IHDR, one IDAT of
    filter-0 scanlines, IEND)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


GENAI_PROMPT = "Describe <|vision_start|><|image_pad|><|vision_end|> now."
GEMMA3_GENAI_PROMPT = "Describe <start_of_image> now."



def og_generate(og, model, inputs, prompt_len: int) -> tuple[np.ndarray, list[int]]:
    """onnxruntime-genai on processed `inputs`: the prompt's logits and the greedy continuation
    (GEN_NEW tokens at most; fewer when it stops at eos)."""
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=prompt_len + GEN_NEW)
    gen = og.Generator(model, params)
    gen.set_inputs(inputs)
    gen.generate_next_token()
    logits = np.array(gen.get_output("logits"))
    while not gen.is_done():
        gen.generate_next_token()
    return logits, [int(x) for x in gen.get_sequence(0)[prompt_len:]]


def check_genai(ref, ref64, out_dir: Path, png: Path, rec: dict) -> list[str]:
    """onnxruntime-genai's multimodal pipeline on the package as written (genai_config.json,
    vision_processor.json, tokenizer): a 64 x 48 RGB PNG and GENAI_PROMPT (gemma3:
    GEMMA3_GENAI_PROMPT) through og.MultiModalProcessor, then greedy generation; transformers'
    generate on the processor's input_ids, pixel_values and image_grid_thw (gemma3: token_type_ids
    1 at the image tokens) must give the same tokens; for the Qwen types og's prompt logits must
    also equal transformers' forward (max|Δ| <= harness.TOL: Qwen3-VL's DeepStack levels ride in
    og's buffers, docs/vlm.md)."""
    import onnxruntime_genai as og  # noqa: PLC0415

    write_png(png, np.random.default_rng(3).integers(0, 256, size=(48, 64, 3), dtype=np.uint8))
    model = og.Model(str(out_dir))
    proc = model.create_multimodal_processor()
    if ref.config.model_type == "gemma3":
        return check_genai_gemma3(ref, og, model, proc(GEMMA3_GENAI_PROMPT, images=og.Images.open(str(png))), rec)
    inputs = proc(GENAI_PROMPT, images=og.Images.open(str(png)))
    ids, pixels, grid = (np.array(inputs[k].as_numpy()) for k in ("input_ids", "pixel_values", "image_grid_thw"))
    prompt_logits, got = og_generate(og, model, inputs, ids.shape[1])
    ids = torch.from_numpy(ids.astype(np.int64))
    image_kw = dict(pixel_values=torch.from_numpy(pixels), image_grid_thw=torch.from_numpy(grid.astype(np.int64)),
                    mm_token_type_ids=(ids == IMAGE).long())
    with torch.no_grad():
        want_logits = ref64(input_ids=ids, attention_mask=torch.ones_like(ids), **image_kw).logits.numpy()
        want = ref.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **image_kw, max_new_tokens=GEN_NEW,
                            do_sample=False, num_beams=1,
                            eos_token_id=ref.config.text_config.eos_token_id)[0, ids.shape[1]:].tolist()
    if int((ids == IMAGE).sum()) != int(grid.prod() // 4):
        return [f"genai: {int((ids == IMAGE).sum())} image tokens for the grid {grid.tolist()}"]
    d = H.delta(rec, prompt_logits, want_logits)
    failures = [] if d <= H.TOL else [f"genai prompt logits: max|Δ| {d:.3g} > {H.TOL}"]
    got, want = until_eos(got, ref), until_eos(want, ref)
    rec["genai"] = f"{len(got)}/{len(want)}" if got == want else "differ"
    return failures + ([] if got == want else [f"genai: onnxruntime-genai {got} != transformers {want}"])


MISTRAL3_PROMPT = "[INST]Compare [IMG] and [IMG] now."


def check_genai_mistral3(ref, ref64, out_dir: Path, png: Path, rec: dict) -> list[str]:
    """check_genai for Mistral 3, on two images of different sizes (48 x 64 and 32 x 24 pixels):
    og.MultiModalProcessor expands each [IMG] to the image's rows of [IMG] tokens, each row ending
    [IMG_BREAK] (the last [IMG_END]), and gives pixel_values [2, 3, 48, 64] zero-padded with
    image_sizes (onnxruntime-genai runs the vision graph once per image, cut out of the batch).
    Its prompt logits must equal transformers' forward on the processor's input_ids,
    pixel_values and image_sizes (max|Δ| <= harness.TOL), and its greedy tokens transformers'
    generate."""
    import onnxruntime_genai as og  # noqa: PLC0415

    rng = np.random.default_rng(3)
    pngs = [png.with_name(f"image{i}.png") for i in range(2)]
    for path, (h, w) in zip(pngs, [(48, 64), (32, 24)]):
        write_png(path, rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8))
    model = og.Model(str(out_dir))
    proc = model.create_multimodal_processor()
    inputs = proc(MISTRAL3_PROMPT, images=og.Images.open(*map(str, pngs)))
    ids, pixels, sizes = (np.array(inputs[k].as_numpy()) for k in ("input_ids", "pixel_values", "image_sizes"))
    factor = ref.config.vision_config.patch_size * ref.config.spatial_merge_size
    if int((ids == IMG).sum()) != int((sizes[:, 0] // factor * (sizes[:, 1] // factor)).sum()):
        return [f"genai: {int((ids == IMG).sum())} image tokens for the image sizes {sizes.tolist()}"]
    prompt_logits, got = og_generate(og, model, inputs, ids.shape[1])
    ids = torch.from_numpy(ids.astype(np.int64))
    image_kw = dict(pixel_values=torch.from_numpy(pixels), image_sizes=torch.from_numpy(sizes.astype(np.int64)))
    with torch.no_grad():
        want_logits = ref64(input_ids=ids, attention_mask=torch.ones_like(ids), **image_kw).logits.numpy()
        want = ref.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **image_kw, max_new_tokens=GEN_NEW,
                            do_sample=False, num_beams=1,
                            eos_token_id=ref.config.text_config.eos_token_id)[0, ids.shape[1]:].tolist()
    failures = []
    d = H.delta(rec, prompt_logits, want_logits)
    if not d <= H.TOL:
        failures.append(f"genai prompt logits: max|Δ| {d:.3g} > {H.TOL}")
    got, want = until_eos(got, ref), until_eos(want, ref)
    rec["genai"] = f"{len(got)}/{len(want)}" if got == want else "differ"
    return failures + ([] if got == want else [f"genai: onnxruntime-genai {got} != transformers {want}"])


def until_eos(tokens: list[int], ref) -> list[int]:
    """The generated tokens before the first eos: onnxruntime-genai 0.18 ends a sequence at eos
    without appending it (seen on the qwen3_vl deepstack row), transformers' generate appends it."""
    eos = ref.config.text_config.eos_token_id
    return tokens[:tokens.index(eos)] if eos in tokens else tokens


def check_genai_gemma3(ref, og, model, inputs, rec: dict) -> list[str]:
    """check_genai for gemma3: the processor's 256 image tokens, then og's tokens against
    transformers' generate with token_type_ids 1 at the image tokens (as Gemma3Processor)."""
    ids, pixels = (np.array(inputs[k].as_numpy()) for k in ("input_ids", "pixel_values"))
    _, got = og_generate(og, model, inputs, ids.shape[1])
    ids = torch.from_numpy(ids.astype(np.int64))
    if int((ids == IMAGE).sum()) != ref.config.mm_tokens_per_image:
        return [f"genai: {int((ids == IMAGE).sum())} image tokens, expected {ref.config.mm_tokens_per_image}"]
    with torch.no_grad():
        want = ref.generate(input_ids=ids, attention_mask=torch.ones_like(ids), pixel_values=torch.from_numpy(pixels),
                            token_type_ids=(ids == IMAGE).long(), max_new_tokens=GEN_NEW, do_sample=False,
                            num_beams=1, eos_token_id=ref.config.text_config.eos_token_id)[0, ids.shape[1]:].tolist()
    got, want = until_eos(got, ref), until_eos(want, ref)
    rec["genai"] = f"{len(got)}/{len(want)}" if got == want else "differ"
    return [] if got == want else [f"genai: onnxruntime-genai {got} != transformers {want}"]


PAN_AND_SCAN_WIDTH = 160  # a (image_size x 160) image: pan-and-scan cuts it into 3 crops
PAN_AND_SCAN = dict(do_pan_and_scan=True, pan_and_scan_min_crop_size=32)


def check_pan_and_scan(work: Path, rec: dict) -> list[str]:
    """Gemma 3 with pan-and-scan: transformers' Gemma3Processor (do_pan_and_scan) on a wide image
    gives pixel_values of the resized image and its crops, and the prompt a `<start_of_image>`
    block of mm_tokens_per_image tokens for each ("Here is the original image ... and here are some
    crops ..."). The package takes them as that many images: the vision graph's image_features,
    the embedding, the decoder's prefill logits and DECODE_STEPS steps against transformers'
    forward on the processor's input_ids, pixel_values and token_type_ids (max|Δ| <= harness.TOL;
    rec["prefill"], rec["decode"]). onnxruntime-genai 0.18's gemma3 processor makes no crops
    (docs/vlm.md), so onnxruntime runs the graphs."""
    from transformers import AutoTokenizer, Gemma3ImageProcessor, Gemma3Processor  # noqa: PLC0415

    ref = H.float64(write_checkpoint(base_row("gemma3"), work / "hf"))
    # the special tokens Gemma3Processor reads from the tokenizer (GemmaTokenizer's extra ones)
    tok_config = work / "hf" / "tokenizer_config.json"
    tok = json.loads(tok_config.read_text())
    tok["extra_special_tokens"] = dict(zip(("boi_token", "eoi_token", "image_token"), GEMMA_SPECIAL))
    tok_config.write_text(json.dumps(tok))
    size = ref.config.vision_config.image_size
    proc = Gemma3Processor(image_processor=Gemma3ImageProcessor(size={"height": size, "width": size}),
                           tokenizer=AutoTokenizer.from_pretrained(work / "hf"),
                           image_seq_length=ref.config.mm_tokens_per_image)
    image = np.random.default_rng(3).integers(0, 256, size=(size, PAN_AND_SCAN_WIDTH, 3), dtype=np.uint8)
    inputs = proc(text="Describe <start_of_image> now.", images=image, return_tensors="pt", **PAN_AND_SCAN)
    images = inputs["pixel_values"].shape[0]
    if images != 4 or int((inputs["input_ids"] == IMAGE).sum()) != 4 * ref.config.mm_tokens_per_image:
        return [f"pan-and-scan: {images} images, expected the image and 3 crops"]
    H.build(work / "hf", work / "onnx")
    vlm = OnnxVLM(work / "onnx")
    ids, mask = (inputs[k].numpy().astype(np.int64) for k in ("input_ids", "attention_mask"))
    pos = np.arange(ids.shape[1])[None]
    failures: list[str] = []
    prefill, decode = [], []
    t = torch.from_numpy
    with torch.no_grad():
        kw = {k: inputs[k] for k in ("input_ids", "attention_mask", "pixel_values", "token_type_ids")}
        feats_ref = reference_features(ref, {"pixel_values": inputs["pixel_values"].numpy()})
        feats = vlm.image_features({"pixel_values": inputs["pixel_values"].numpy()})
        compare(rec, failures, "pan-and-scan image_features", feats, feats_ref, prefill)
        out = ref(**kw, use_cache=True)
        logits, state = vlm.step(vlm.embed(ids, feats), mask, pos, None, ids)
        compare(rec, failures, "pan-and-scan prefill logits", logits, out.logits.numpy(), prefill)
        step_mask = mask
        for k in range(DECODE_STEPS):
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            step_mask = np.concatenate([step_mask, np.ones((1, 1), np.int64)], axis=1)
            step_pos = step_positions(pos, k)
            out = ref(input_ids=nxt, attention_mask=t(step_mask), position_ids=t(step_pos),
                      past_key_values=out.past_key_values, use_cache=True)
            logits, state = vlm.step(vlm.embed(nxt.numpy()), step_mask, step_pos, state, nxt.numpy())
            compare(rec, failures, f"pan-and-scan decode step {k} logits", logits, out.logits.numpy(), decode)
    rec["prefill"], rec["decode"] = max(prefill), max(decode)
    return failures


def placeholder_tokens(config) -> list[int]:
    """The tokens the embedding graph scatters features at: the image token (and
    Phi-4-multimodal's audio token)."""
    if config.model_type == "phi4_multimodal":
        return [config.vision_config.image_token_id, config.audio_config.audio_token_id]
    return [config.image_token_id]


def check_text_only(ref, rec: dict, vlm: OnnxVLM, prefill: list, decode: list) -> list[str]:
    """A text-only prompt of one row (the embedding fed 0 feature rows, as onnxruntime-genai feeds
    it) that holds the image token (a run of two, and Phi-4-multimodal's audio token) with no
    images: prefill, then one decode step whose token is the image token (the feature inputs left
    out, as transformers.js calls it). transformers embeds them from the table without pixel_values
    (docs/vlm.md); positions as transformers' for a text-only prompt (0..S-1 in all three rows)."""
    failures: list[str] = []
    ids = np.random.default_rng(2).integers(3, 240, size=(1, TEXT_ONLY_LEN)).astype(np.int64)
    tokens = placeholder_tokens(ref.config)
    ids[0, 3:5] = tokens[0]
    ids[0, 7:8] = tokens[-1]
    mask = np.ones_like(ids)
    pos = np.arange(TEXT_ONLY_LEN)[None] + first_position(ref.config)
    if is_mrope(ref.config):
        pos = np.broadcast_to(pos[None], (3, 1, TEXT_ONLY_LEN)).copy()
    with torch.no_grad():
        pos_kw = {} if is_mrope(ref.config) else {"position_ids": torch.from_numpy(pos)}
        out = ref(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), use_cache=True,
                  **pos_kw, **token_types(ref.config, ids))
        logits, state = vlm.step(vlm.embed(ids, NO_ROWS, NO_ROWS), mask, pos, None, ids)
        compare(rec, failures, "text-only prefill logits (image tokens, no images)", logits, out.logits.numpy(), prefill)
        nxt = torch.full((1, 1), tokens[0], dtype=torch.int64)
        mask2 = np.ones((1, TEXT_ONLY_LEN + 1), np.int64)
        pos2 = step_positions(pos, 0)
        out2 = ref(input_ids=nxt, attention_mask=torch.from_numpy(mask2), position_ids=torch.from_numpy(pos2),
                   past_key_values=out.past_key_values, use_cache=True)
        logits2, _ = vlm.step(vlm.embed(nxt.numpy()), mask2, pos2, state, nxt.numpy())
        compare(rec, failures, "text-only decode logits (the image token)", logits2, out2.logits.numpy(), decode)
    return failures


def check_int4(row: Row, work: Path) -> list[str]:
    """`--precision int4` (seq2seq_harness.INT4_PINNED: accuracy level 0, LM head and embeddings
    in float): in the decoder graph every MatMul by a 2-D checkpoint weight but the LM head is a
    MatMulNBits, in the vision graph every one, the embedding graph is unchanged; the image
    features and the decoder's logits (prefill of the image batch, DECODE_STEPS steps) equal those
    of mobius' float graphs quantized by onnxruntime's MatMulNBitsQuantizer on the same nodes,
    max|Δ| <= harness.TOL."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer  # noqa: PLC0415

    import seq2seq_harness as S  # noqa: PLC0415

    hf_dir, q_dir, f_dir = work / "hf", work / "int4", work / "float"
    ref = write_checkpoint(row, hf_dir)
    H.build(hf_dir, q_dir, "--precision", "int4", *S.INT4_PINNED)
    H.build(hf_dir, f_dir)
    failures = []
    if S.weight_matmuls(onnx.load(str(H.graph_path(q_dir, "embedding"))))[0]:
        failures.append("embedding: quantized")
    vision_nbits, vision_left = S.weight_matmuls(onnx.load(str(H.graph_path(q_dir, "vision"))))
    if vision_nbits == 0 or vision_left:
        failures.append(f"vision: {vision_nbits} MatMulNBits, float weight MatMuls left: {vision_left}")
    nbits, left = S.weight_matmuls(onnx.load(str(H.graph_path(q_dir, "decoder"))))
    if nbits == 0 or len(left) > 1:
        failures.append(f"decoder: {nbits} MatMulNBits, float weight MatMuls left: {left}")
    if failures:
        return failures
    for graph, exclude in (("vision", []), ("decoder", left)):
        q = MatMulNBitsQuantizer(onnx.load(str(H.graph_path(f_dir, graph))), bits=4, block_size=32, is_symmetric=True,
                                 nodes_to_exclude=exclude)
        q.process()
        onnx.save(q.model.model, str(work / f"ort-int4-{graph}.onnx"), save_as_external_data=True,
                  location=f"ort-int4-{graph}.onnx.data")
    ref_path = work / "ort-int4-decoder.onnx"
    vlm = OnnxVLM(f_dir)
    if ref.config.model_type == "phi4_multimodal":  # its HD crops (phi4mm_harness)
        import phi4mm_harness  # noqa: PLC0415

        feeds, tokens = phi4mm_harness.image_inputs(ref.config)
        ids, mask = phi4mm_harness.prompt_batch(ref.config.vision_config.image_token_id, tokens)
        pos = np.where(mask == 1, mask.cumsum(-1) - 1, 1)
        image_features = lambda: vlm.vision.run(["image_features"], feeds)[0]  # noqa: E731
    else:
        ids, mask, types_, feeds = image_batch(ref.config)
        pos = prefill_positions(ref, ids, mask, types_, feeds)
        image_features = lambda: vlm.image_features(feeds)  # noqa: E731
    features = {}
    for name, path in (("mobius", H.graph_path(q_dir, "vision")), ("onnxruntime", work / "ort-int4-vision.onnx")):
        vlm.vision = H.ort_session(path)
        features[name] = image_features()
    d = H.max_abs(features["mobius"], features["onnxruntime"])
    if not d <= H.TOL:
        return [f"int4 image features vs onnxruntime's quantizer: max|Δ| {d:.3g} > {H.TOL}"]
    embeds = vlm.embed(ids, features["mobius"])
    rng = np.random.default_rng(3)
    steps = [rng.integers(3, 240, size=(2, 1)) for _ in range(DECODE_STEPS)]
    logits = {}
    for name, path in (("mobius", H.graph_path(q_dir, "decoder")), ("onnxruntime", ref_path)):
        vlm.decoder = H.ort_session(path)
        lg, state = vlm.step(embeds, mask, pos, None, ids)
        out, m = [lg], mask
        for k, tok in enumerate(steps):
            m = np.concatenate([m, np.ones((2, 1), np.int64)], axis=1)
            lg, state = vlm.step(vlm.embed(tok), m, step_positions(pos, k), state, tok)
            out.append(lg)
        logits[name] = np.concatenate(out, axis=1)
    d = H.max_abs(logits["mobius"], logits["onnxruntime"])
    return [] if d <= H.TOL else [f"int4 decoder logits vs onnxruntime's quantizer: max|Δ| {d:.3g} > {H.TOL}"]
