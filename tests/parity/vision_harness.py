"""Parity harness of the vision encoders (tasks image-feature-extraction and image-classification),
the CLIP / SigLIP text towers (feature-extraction) and dual models (zero-shot-image-classification),
docs/vision.md: tiny random checkpoint -> `mobius build` (model.onnx) -> onnxruntime vs
transformers.

Rows are typed (Row: model type, variant, config kwargs, the transformers class that writes the
checkpoint: AutoModel for *Model, AutoModelForImageClassification or a named class for heads).
Each row checks, for a batch of BATCH images (and TEXT_BATCH texts, the second right-padded, for
the text and dual models):
  - the package: model.onnx(.data) and the copied config.json, onnx.checker, the I/O names
    (pixel_values -> last_hidden_state [+ pooler_output] [+ logits]; input_ids, attention_mask ->
    last_hidden_state [CLIPTextModelWithProjection, MetaClip2TextModelWithProjection: + text_embeds,
    hidden_states.{i}]; all three ->
    logits_per_image, logits_per_text, text_embeds, image_embeds;
    pixtral: pixel_values, image_sizes -> last_hidden_state [1, Σ patches, hidden]) and the task
    in the metadata;
  - every output the transformers model returns, max|Δ| <= harness.TOL (last_hidden_state of a
    text model, and its hidden_states.{i}, on the non-padding tokens).
Every parameter is re-randomized (harness.rerandomize; then the patch Conv weights at
1/sqrt(fan_in) and LayerScale factors around 1, so that no branch is scaled to nothing).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import torch
import transformers
from transformers import AutoConfig

import harness as H


@dataclasses.dataclass(frozen=True)
class Row:
    model_type: str
    variant: str
    config: dict  # AutoConfig.for_model kwargs
    model_class: str = "AutoModel"  # a transformers class name


BATCH = 2
TEXT_BATCH = 3  # differs from BATCH: a swapped axis of logits_per_image shows
TEXT_LEN = 12
TEXT_PAD = 4  # right padding of text row 1
# 4 x 4 patches of 8 pixels; heads of 16; 2 layers
VIT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, image_size=32,
           patch_size=8, num_channels=3)
CLS = "AutoModelForImageClassification"
LABELS = dict(num_labels=5)
ROWS = [
    Row("siglip_vision_model", "base", dict(VIT)),  # with the attention pooling head
    Row("siglip_vision_model", "no-head", dict(VIT, vision_use_head=False, hidden_act="gelu")),
    Row("clip_vision_model", "base", dict(VIT)),  # quick_gelu
    Row("vit", "base", dict(VIT)),
    # a pooler narrower than the hidden size, another activation; q/k/v without bias
    Row("vit", "pooler-48-relu", dict(VIT, pooler_output_size=48, pooler_act="relu", qkv_bias=False,
                                      num_channels=4)),
    Row("vit", "classification", dict(VIT, **LABELS), CLS),
    Row("deit", "base", dict(VIT)),
    # two classes map deit to AutoModelForImageClassification: architectures picks one
    Row("deit", "classification", dict(VIT, **LABELS, architectures=["DeiTForImageClassification"]), CLS),
    Row("deit", "with-teacher", dict(VIT, **LABELS), "DeiTForImageClassificationWithTeacher"),
    Row("vit_msn", "base", dict(VIT)),
    Row("vit_msn", "classification", dict(VIT, **LABELS), CLS),
    Row("ijepa", "base", dict(VIT)),
    Row("ijepa", "classification", dict(VIT, **LABELS), CLS),
    Row("dinov2", "base", dict(VIT, mlp_ratio=3)),
    Row("dinov2", "classification", dict(VIT, mlp_ratio=3, **LABELS), CLS),
    Row("dinov2_with_registers", "base", dict(VIT, num_register_tokens=3)),
    Row("dinov2_with_registers", "classification", dict(VIT, num_register_tokens=3, **LABELS), CLS),
    # use_swiglu_ffn (DINOv2 giant): Dinov2SwiGLUFFN, 64 * 5 * 2 / 3 = 213 rounded up to 216 wide
    Row("dinov2", "swiglu-ratio-5", dict(VIT, mlp_ratio=5, use_swiglu_ffn=True)),
    Row("dinov2_with_registers", "swiglu-classification", dict(VIT, num_register_tokens=3, mlp_ratio=5,
                                                               use_swiglu_ffn=True, **LABELS), CLS),
    # BEiT: relative position bias per layer, mean pooling (no final norm), layer scale
    Row("beit", "base", dict(VIT, use_relative_position_bias=True)),
    # absolute positions, the shared bias, the class token pooled after the final norm, no layer scale
    Row("beit", "shared-bias-absolute", dict(VIT, use_absolute_position_embeddings=True,
                                             use_shared_relative_position_bias=True, use_mean_pooling=False,
                                             layer_scale_init_value=0.0)),
    Row("beit", "classification", dict(VIT, use_relative_position_bias=True, **LABELS), CLS),
    # 2-D RoPE on the patch tokens only (heads of 16: 4 frequencies per axis), register tokens
    Row("dinov3_vit", "base", dict(VIT, num_register_tokens=2, rope_theta=50.0)),
    Row("dinov3_vit", "gated-mlp-biases", dict(VIT, use_gated_mlp=True, key_bias=True, mlp_bias=False,
                                               hidden_act="silu")),
    Row("data2vec-vision", "base", dict(VIT, use_relative_position_bias=True)),
    Row("data2vec-vision", "classification", dict(VIT, use_relative_position_bias=True, **LABELS), CLS),
]
# the text towers: eos 3 (not 2, which selects the legacy argmax-of-ids pooling of CLIP)
TEXT = dict(vocab_size=99, hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=16, pad_token_id=1, bos_token_id=0, eos_token_id=3)
ROWS += [
    Row("clip_text_model", "base", dict(TEXT)),
    Row("siglip_text_model", "base", dict(TEXT, projection_size=64), "SiglipTextModel"),
    Row("clip", "base", dict(text_config=TEXT, vision_config=VIT, projection_dim=40)),
    # configs before transformers PR #24773: the pooled token is the largest id
    Row("clip", "legacy-eos", dict(text_config=dict(TEXT, eos_token_id=2), vision_config=VIT, projection_dim=40)),
    Row("siglip", "base", dict(text_config=dict(TEXT, projection_size=64), vision_config=VIT)),
    # the dual configs with a classifier on the vision tower alone
    Row("clip", "classification", dict(text_config=TEXT, vision_config=VIT, **LABELS), "CLIPForImageClassification"),
    Row("siglip", "classification", dict(text_config=dict(TEXT, projection_size=64), vision_config=VIT, **LABELS),
        "SiglipForImageClassification"),
]
# CLIP's causal text tower in other families (archs/clip.cpp) and AIMv2's (RMSNorm, SwiGLU; archs/aimv2.cpp)
ROWS += [
    Row("owlvit_text_model", "base", dict(TEXT), "OwlViTTextModel"),
    Row("owlv2_text_model", "base", dict(TEXT), "Owlv2TextModel"),
    Row("groupvit_text_model", "base", dict(TEXT), "GroupViTTextModel"),
    Row("xclip_text_model", "base", dict(TEXT), "XCLIPTextModel"),
    Row("clipseg_text_model", "base", dict(TEXT), "CLIPSegTextModel"),
    Row("metaclip_2_text_model", "base", dict(TEXT), "MetaClip2TextModel"),
    # eos 2 is pooled as itself (CLIP's legacy rule would take the largest id)
    Row("metaclip_2_text_model", "with-projection", dict(TEXT, projection_dim=40, eos_token_id=2),
        "MetaClip2TextModelWithProjection"),
    Row("aimv2_text_model", "base", dict(TEXT), "Aimv2TextModel"),
]
# SigLIP 2 (NaFlex): a 4 x 4 position grid resized per image (antialiased bilinear) to each image's
# patch grid: 3 x 5 (rows shrunk, columns stretched; 15 patches) and 6 x 2 (12 patches, then 3 of
# padding), patches of 4 x 4 pixels
NAFLEX = dict(VIT, patch_size=4, num_patches=16)
NAFLEX_SHAPES = [(3, 5), (6, 2)]
ROWS += [
    Row("siglip2_vision_model", "base", dict(NAFLEX)),  # with the attention pooling head
    # an 8 x 8 grid shrunk on both axes
    Row("siglip2_vision_model", "grid-8-no-head", dict(NAFLEX, num_patches=64, vision_use_head=False)),
    Row("siglip2_text_model", "base", dict(TEXT, projection_size=64), "Siglip2TextModel"),
    Row("siglip2", "base", dict(text_config=dict(TEXT, projection_size=64), vision_config=NAFLEX)),
    Row("siglip2", "classification", dict(text_config=dict(TEXT, projection_size=64), vision_config=NAFLEX, **LABELS),
        "Siglip2ForImageClassification"),
]
# the standalone Pixtral tower: its images of two sizes (height, width) zero-padded into one batch
# with image_sizes; transformers returns their patches as one sequence [1, Σ patches, hidden]
PIXTRAL_SIZES = [(48, 32), (30, 42)]  # 12 x 8 and 7 x 10 patches of 4 (the second with a remainder)
ROWS += [
    Row("pixtral", "two-sizes", dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                     patch_size=4, image_size=64)),
]
# SDXL's text_encoder_2: the projected eos token, the last hidden state and every layer's
ROWS += [
    Row("clip_text_model", "with-projection", dict(TEXT, projection_dim=40), "CLIPTextModelWithProjection"),
]
DUAL = {"clip", "siglip", "siglip2"}


def types() -> set[str]:
    return {r.model_type for r in ROWS}


@torch.no_grad()
def rerandomize(model: torch.nn.Module) -> None:
    """harness.rerandomize, then the patch Conv weights scaled by 1/sqrt(in * kh * kw) (not by
    1/sqrt(in channels): the patch sums 3 x 8 x 8 inputs) and LayerScale factors 1 + 0.1 r."""
    H.rerandomize(model)
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            m.weight.copy_(torch.randn_like(m.weight) * m.weight[0].numel() ** -0.5)
    for name, p in model.named_parameters():
        if name.endswith(("lambda1", "lambda_1", "lambda_2")):
            p.copy_(1.0 + 0.1 * torch.randn_like(p))


def make_model(row: Row, config):
    cls = getattr(transformers, row.model_class)
    if row.model_class.startswith("Auto"):
        return cls.from_config(config, dtype=torch.float32, attn_implementation="eager")
    return cls._from_config(config, dtype=torch.float32, attn_implementation="eager")


def write_checkpoint(row: Row, hf_dir: Path):
    """The tiny model of `row` (seed 0), every parameter re-randomized, saved; returns it."""
    return write_model(row, AutoConfig.for_model(row.model_type, **row.config), hf_dir)


def write_model(row: Row, config, hf_dir: Path):
    """row.model_class from `config` (seed 0), every parameter re-randomized, saved to hf_dir;
    returns the in-memory model."""
    torch.manual_seed(0)
    model = make_model(row, config).eval()
    rerandomize(model)
    model.save_pretrained(hf_dir)
    return model


def base_row(model_type: str) -> Row:
    """The type's first row (its *Model class and tiny sizes): what test_config_fidelity varies."""
    return next(r for r in ROWS if r.model_type == model_type)


def load_reference(row: Row, hf_dir: Path):
    cls = getattr(transformers, row.model_class)
    return cls.from_pretrained(hf_dir, dtype=torch.float32, attn_implementation="eager").eval()


def is_text(row: Row) -> bool:
    return row.model_type.endswith("_text_model")


def is_dual(row: Row) -> bool:
    """CLIPModel / SiglipModel (not their image classifiers, which read only images)."""
    return row.model_type in DUAL and "ImageClassification" not in row.model_class


def is_naflex(row: Row) -> bool:
    """SigLIP 2's vision inputs (its text tower's are as SigLIP's)."""
    return row.model_type in ("siglip2", "siglip2_vision_model")


def naflex_inputs(config, rng) -> dict:
    """SigLIP 2's patch sequences (Siglip2ImageProcessor's layout): pixel_values [BATCH,
    max patches, C * p * p] (each image's NAFLEX_SHAPES[i] patches row-major, then zeros),
    pixel_attention_mask [BATCH, max patches] (1 = a patch), spatial_shapes [BATCH, 2]."""
    length = max(h * w for h, w in NAFLEX_SHAPES)
    pixels = np.zeros((BATCH, length, config.num_channels * config.patch_size ** 2), np.float32)
    mask = np.zeros((BATCH, length), np.int64)
    for i, (h, w) in enumerate(NAFLEX_SHAPES):
        pixels[i, :h * w] = rng.standard_normal((h * w, pixels.shape[2]))
        mask[i, :h * w] = 1
    return {"pixel_values": pixels, "pixel_attention_mask": mask, "spatial_shapes": np.array(NAFLEX_SHAPES, np.int64)}


def pixtral_inputs(config, rng) -> dict:
    """Pixtral's batch (PixtralImageProcessor's layout): pixel_values [BATCH, C, max height,
    max width], each image of PIXTRAL_SIZES top-left, zeros around it; image_sizes [BATCH, 2]."""
    pixels = np.zeros((BATCH, config.num_channels, *np.max(PIXTRAL_SIZES, axis=0)), np.float32)
    for i, (h, w) in enumerate(PIXTRAL_SIZES):
        pixels[i, :, :h, :w] = rng.standard_normal((config.num_channels, h, w))
    return {"pixel_values": pixels, "image_sizes": np.array(PIXTRAL_SIZES, np.int64)}


def inputs(row: Row, config, seed: int = 1) -> dict:
    """The model's inputs by the package's input names: pixel_values [BATCH, C, S, S] (images;
    Pixtral: pixtral_inputs), input_ids / attention_mask [TEXT_BATCH, TEXT_LEN] (texts: random ids above eos, each row
    ending in eos, row 1 right-padded with pad_token_id)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    vision = config.vision_config if row.model_type in DUAL else config
    if is_naflex(row):
        feeds = naflex_inputs(vision, rng)
    elif row.model_type == "pixtral":
        feeds = pixtral_inputs(vision, rng)
    elif not is_text(row):
        size = vision.image_size
        feeds["pixel_values"] = rng.standard_normal((BATCH, vision.num_channels, size, size)).astype(np.float32)
    if is_text(row) or is_dual(row):
        text = config.text_config if row.model_type in DUAL else config
        ids = rng.integers(4, text.vocab_size, size=(TEXT_BATCH, TEXT_LEN)).astype(np.int64)
        mask = np.ones_like(ids)
        mask[1, TEXT_LEN - TEXT_PAD:] = 0
        ids[mask == 0] = text.pad_token_id
        ids[0, -1] = ids[1, TEXT_LEN - TEXT_PAD - 1] = ids[2, -1] = text.eos_token_id
        feeds.update(input_ids=ids, attention_mask=mask)
    return feeds


@torch.no_grad()
def reference_outputs(model, feeds: dict) -> dict:
    """The outputs the transformers model returns, by the package's output names."""
    out = model(**{k: torch.from_numpy(v) for k, v in feeds.items()})
    if "pixel_values" not in feeds and hasattr(out, "text_embeds"):  # CLIP's / MetaCLIP 2's *TextModelWithProjection
        out = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}, output_hidden_states=True)
        got = {"text_embeds": out.text_embeds, "last_hidden_state": out.last_hidden_state}
        got.update({f"hidden_states.{i}": h for i, h in enumerate(out.hidden_states)})
        return {n: v.numpy() for n, v in got.items()}
    if "input_ids" in feeds:
        names = ("last_hidden_state",) if "pixel_values" not in feeds else \
            ("logits_per_image", "logits_per_text", "text_embeds", "image_embeds")
        return {n: getattr(out, n).numpy() for n in names}
    names = ("logits",) if hasattr(out, "logits") else ("last_hidden_state", "pooler_output")
    got = {n: getattr(out, n) for n in names if getattr(out, n, None) is not None}
    if "logits" in got:  # a classifier: its backbone's sequence output too (NaFlex: all three image inputs)
        got["last_hidden_state"] = base_model(model)(**{k: torch.from_numpy(v) for k, v in feeds.items()}).last_hidden_state
    return {n: v.numpy() for n, v in got.items()}


def base_model(model):
    """The backbone of a classifier (CLIP's and SigLIP's: their vision_model)."""
    return getattr(model, "vision_model", None) or getattr(model, model.base_model_prefix)


def run(row: Row, work: Path, rec: dict, build_args=()) -> list[str]:
    """Fills rec["prefill"] with the max|Δ| over every output; returns the failed checks."""
    model = write_checkpoint(row, work / "hf")
    return check(row, work / "hf", model, work / "onnx", rec, build_args)


def check(row: Row, hf_dir: Path, model, out_dir: Path, rec: dict, build_args=()) -> list[str]:
    """The parity check of the checkpoint in hf_dir (`model`: the in-memory model it was saved
    from): transformers loads it, `mobius build BUILD_ARGS` packages it into out_dir; the package,
    the I/O names, the task and every output (module docstring). Sets rec["prefill"]."""
    ref = load_reference(row, hf_dir)
    feeds = inputs(row, ref.config)
    # harness self-check: the checkpoint on disk is the model we made
    mine, theirs = reference_outputs(model, feeds), reference_outputs(ref, feeds)
    assert all(np.array_equal(mine[k], theirs[k]) for k in theirs), "reloaded checkpoint differs from the in-memory model"
    want = reference_outputs(H.float64(ref), feeds)  # the reference: transformers in float64

    path = H.build(hf_dir, out_dir, *build_args)
    failures = H.check_model(path, rec)
    files = H.package_files(out_dir)
    if files != H.graph_files(("model",), H.layout(out_dir)) | {"config.json"}:
        failures.append(f"package files {sorted(files)}")
    task = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}.get("task")
    expected_task = ("image-classification" if "logits" in want else "feature-extraction" if is_text(row)
                     else "zero-shot-image-classification" if is_dual(row) else "image-feature-extraction")
    if task != expected_task:
        failures.append(f"metadata task {task!r}, expected {expected_task!r}")
    sess = H.ort_session(path)
    problems = H.io_problems(sess, set(feeds), set(want))
    if problems:
        return failures + [f"I/O contract: {p}" for p in problems]
    names = sorted(want)
    got = dict(zip(names, sess.run(names, feeds)))
    if is_text(row):  # the non-padding tokens
        valid = feeds["attention_mask"].astype(bool)
        for n in names:
            if n == "last_hidden_state" or n.startswith("hidden_states."):
                got[n], want[n] = got[n][valid], want[n][valid]
    deltas = {}
    for n in names:
        if got[n].shape != want[n].shape:
            failures.append(f"{n}: shape {got[n].shape}, expected {want[n].shape}")
            continue
        deltas[n] = H.delta(rec, got[n], want[n])
    rec["prefill"] = max(deltas.values()) if deltas else None
    failures += [f"{n} max|Δ| {d:.3g} > {H.TOL}" for n, d in deltas.items() if not d <= H.TOL]
    return failures


def check_int4(row: Row, work: Path) -> list[str]:
    """`--precision int4` with seq2seq_harness.INT4_PINNED (accuracy level 0, as
    MatMulNBitsQuantizer's defaults): every MatMul by a 2-D checkpoint weight is a MatMulNBits, and
    the outputs equal those of mobius' float build quantized by onnxruntime's MatMulNBitsQuantizer
    (same weights, same kernel), max|Δ| <= harness.TOL."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    import seq2seq_harness as S

    hf_dir, q_dir, f_dir = work / "hf", work / "int4", work / "float"
    model = write_checkpoint(row, hf_dir)
    H.build(hf_dir, q_dir, "--precision", "int4", *S.INT4_PINNED)
    H.build(hf_dir, f_dir)
    quantized = onnx.load(str(H.graph_path(q_dir, "model")))
    nbits, left = S.weight_matmuls(quantized)
    if nbits == 0 or left:
        return [f"{nbits} MatMulNBits, float weight MatMuls left: {left}"]
    q = MatMulNBitsQuantizer(onnx.load(str(H.graph_path(f_dir, "model"))), bits=4, block_size=32, is_symmetric=True)
    q.process()
    ref_path = work / "ort-int4.onnx"
    onnx.save(q.model.model, str(ref_path))
    feeds = inputs(row, model.config)
    names = [o.name for o in H.ort_session(H.graph_path(q_dir, "model")).get_outputs()]
    got = H.ort_session(H.graph_path(q_dir, "model")).run(names, feeds)
    want = H.ort_session(ref_path).run(names, feeds)
    failures = []
    for n, g, w in zip(names, got, want):
        d = H.max_abs(g, w)
        if not d <= H.TOL:
            failures.append(f"int4 {n} vs onnxruntime's quantizer on the float build: max|Δ| {d:.3g} > {H.TOL}")
    return failures
