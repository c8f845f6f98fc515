"""Parity harness of the audio-feature-extraction task (speech encoders on the raw waveform,
docs/audio.md): tiny random checkpoint -> `mobius build` (model.onnx) -> onnxruntime vs transformers.

Rows are typed (Row: model type, variant, config kwargs, the head class). Each row checks, on a
batch of 2 waveforms whose row 0 is shorter (zero-padded on the right, as the feature extractors
pad):
  - the package's I/O names: input_values (+ attention_mask for the models that take one:
    LayerNorm conv layers) -> last_hidden_state (+ logits for a *ForCTC checkpoint), onnx.checker;
  - last_hidden_state and the CTC logits against transformers (float32, eager), on the frames of
    each row's own audio when the model takes the mask (transformers' padded frames are
    unspecified), on every frame when it does not (then both sides see the same zero-padded batch).
Float32 tolerance: harness.TOL on every compared tensor.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, numpy_helper
from safetensors.torch import load_file, save_file
from transformers import AutoConfig, AutoModel, AutoModelForCTC

import harness as H


@dataclasses.dataclass(frozen=True)
class Row:
    model_type: str
    variant: str
    config: dict  # AutoConfig.for_model kwargs
    ctc: bool = False  # AutoModelForCTC (lm_head -> logits), else AutoModel
    # save the weight-norm tensors under torch's legacy names weight_g / weight_v, as the
    # checkpoints on the Hub have them (transformers renames them on load)
    legacy_weight_norm: bool = False


# The conv front-end: 3 layers, 1600 samples -> 79 frames; an even position-conv kernel (the same
# pad layer drops a frame), 4 groups.
BASE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            conv_dim=(16, 24, 24), conv_kernel=(10, 3, 3), conv_stride=(5, 2, 2),
            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, vocab_size=12,
            layer_norm_eps=1e-5)
LAYER = dict(BASE, feat_extract_norm="layer")
BERT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=12,
            feature_projection_input_dim=16, left_max_position_embeddings=8, right_max_position_embeddings=4,
            conv_depthwise_kernel_size=5)
STABLE = dict(LAYER, do_stable_layer_norm=True)
ROWS = [
    Row("wav2vec2", "group-ctc", dict(BASE), ctc=True),  # wav2vec2-base-960h's layout
    Row("wav2vec2", "layer-stable", dict(STABLE, conv_bias=True)),  # wav2vec2-large-lv60's
    Row("wav2vec2", "layer-post-odd-kernel-legacy", dict(LAYER, num_conv_pos_embeddings=15, hidden_act="gelu_new",
                                                         feat_extract_activation="relu"),
        ctc=True, legacy_weight_norm=True),
    Row("hubert", "group-ctc", dict(BASE), ctc=True),  # hubert-base
    Row("hubert", "stable-no-proj-norm", dict(STABLE, feat_proj_layer_norm=False), ctc=True),  # hubert-large-ft
    Row("data2vec-audio", "ctc", dict(BASE, num_conv_pos_embeddings=2, conv_pos_kernel_size=5), ctc=True),
    Row("unispeech", "layer-stable-ctc", dict(STABLE), ctc=True),
    Row("unispeech-sat", "group", dict(BASE)),
    # WavLM: 16 buckets up to distance 24, so that 79 frames reach the log and the saturated buckets
    Row("wavlm", "group-ctc", dict(BASE, num_buckets=16, max_bucket_distance=24), ctc=True),
    Row("wavlm", "layer-stable", dict(STABLE, num_buckets=16, max_bucket_distance=24)),
    # SEW: 79 frames squeezed by 2 (39 windows, the strided position conv's 40 - 1 frames) and
    # upsampled to 78 + 1 zero frame; by 3 with an odd kernel (26 windows, 27 position frames:
    # cut to 26) and conv_dim[-1] == hidden_size (no feature_projection)
    Row("sew", "group-ctc", dict(BASE), ctc=True),
    Row("sew", "layer-squeeze-3", dict(LAYER, conv_dim=(16, 24, 32), num_conv_pos_embeddings=15, squeeze_factor=3)),
    # SEW-D: 39 squeezed frames against 8 log buckets up to distance 16 (exact below 4, clamped
    # past the table), ConvLayer after layer 0 (its config key hidden_dropout_prob is read by
    # transformers' ConvLayer); separate position projections with raw distances clamped at 12,
    # squeeze 3, no rel LayerNorm, a grouped GELU conv; p2c alone; the default hidden_act gelu_python
    Row("sew-d", "group-ctc", dict(BASE, position_buckets=8, max_relative_positions=16, conv_kernel_size=3,
                                   hidden_dropout_prob=0.0), ctc=True),
    Row("sew-d", "layer-separate-keys-squeeze-3",
        dict(LAYER, conv_dim=(16, 24, 32), num_conv_pos_embeddings=15, squeeze_factor=3, share_att_key=False,
             position_buckets=-1, max_relative_positions=12, norm_rel_ebd="none", conv_kernel_size=5, conv_groups=2,
             conv_act="gelu", hidden_dropout_prob=0.0), ctc=True),
    Row("sew-d", "layer-p2c", dict(LAYER, pos_att_type=["p2c"], position_buckets=8, max_relative_positions=16)),
    # wav2vec2-conformer: each position kind; depthwise kernel 7 (odd, "same" padding)
    Row("wav2vec2-conformer", "relative-ctc", dict(LAYER, conv_depthwise_kernel_size=7), ctc=True),
    Row("wav2vec2-conformer", "rotary", dict(LAYER, conv_depthwise_kernel_size=7, position_embeddings_type="rotary",
                                             rotary_embedding_base=500)),
    Row("wav2vec2-conformer", "no-positions-group", dict(BASE, conv_depthwise_kernel_size=5, position_embeddings_type=None)),
    # wav2vec2-bert on 16-wide feature frames (FRAMES of them): relative_key distances clamped to
    # [-8, 4], a causal depthwise kernel of 5; the other position kinds
    Row("wav2vec2-bert", "relative-key-ctc", dict(BERT), ctc=True),
    Row("wav2vec2-bert", "rotary", dict(BERT, position_embeddings_type="rotary", rotary_embedding_base=500)),
    Row("wav2vec2-bert", "relative", dict(BERT, position_embeddings_type="relative", layer_norm_eps=1e-3)),
]
SAMPLES = 1600
SHORT = 1200  # samples of row 0; the rest is zero padding
FRAMES, SHORT_FRAMES = 40, 29  # input_features models: frames of the batch and of row 0


def types() -> set[str]:
    return {r.model_type for r in ROWS}


def write_checkpoint(row: Row, hf_dir: Path):
    """The tiny model of `row` (write_model), with the weight-norm tensors renamed for
    legacy_weight_norm; returns the in-memory model."""
    model = write_model(AutoConfig.for_model(row.model_type, **row.config), hf_dir, row.ctc)
    if row.legacy_weight_norm:
        path = hf_dir / "model.safetensors"
        tensors = load_file(path)
        renamed = {k.replace(".parametrizations.weight.original0", ".weight_g")
                   .replace(".parametrizations.weight.original1", ".weight_v"): v for k, v in tensors.items()}
        assert renamed.keys() != tensors.keys(), "no weight-norm tensor to rename"
        save_file(renamed, path, metadata={"format": "pt"})
    return model


def write_model(config, hf_dir: Path, ctc: bool = False):
    """AutoModelForCTC (ctc) or AutoModel from `config` (seed 0), every parameter re-randomized
    (harness.rerandomize), saved to hf_dir; returns the in-memory model."""
    torch.manual_seed(0)
    auto = AutoModelForCTC if ctc else AutoModel
    model = auto.from_config(config, dtype=torch.float32, attn_implementation="eager").eval()
    H.rerandomize(model)
    model.save_pretrained(hf_dir)
    return model


def batch(seed: int = 1, feature_size: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two waveforms of SAMPLES samples, row 0 with SHORT samples of audio then zeros, and the
    mask; with feature_size, two [FRAMES, feature_size] feature sequences, row 0 with SHORT_FRAMES
    frames then zeros (as SeamlessM4TFeatureExtractor pads)."""
    rng = np.random.default_rng(seed)
    length, short = (FRAMES, SHORT_FRAMES) if feature_size else (SAMPLES, SHORT)
    values = rng.standard_normal((2, length, feature_size) if feature_size else (2, length)).astype(np.float32)
    mask = np.ones((2, length), np.int64)
    values[0, short:] = 0
    mask[0, short:] = 0
    return values, mask


def input_name(model) -> str:
    return model.main_input_name  # input_values, or input_features (wav2vec2-bert)


def model_batch(model) -> tuple[np.ndarray, np.ndarray]:
    """batch() for the model's input."""
    features = input_name(model) == "input_features"
    return batch(feature_size=model.config.feature_projection_input_dim if features else 0)


def takes_mask(model) -> bool:
    """Whether the model's conv layers use LayerNorm (the checkpoints whose feature extractor
    returns an attention mask), or it reads feature frames: when mobius' graph takes attention_mask."""
    return model.config.model_type in ("data2vec-audio", "wav2vec2-bert") or model.config.feat_extract_norm == "layer"


@torch.no_grad()
def hf_run(model, values, mask) -> dict:
    """last_hidden_state (of the base model inside a CTC model: its hidden_states[-1] is the last
    layer's output, before a final LayerNorm or SEW's upsampling) and the CTC logits."""
    kw = {"attention_mask": torch.as_tensor(mask)} if mask is not None else {}
    kw[input_name(model)] = torch.as_tensor(values)
    base = getattr(model, model.base_model_prefix, model)
    res = {"last_hidden_state": base(**kw).last_hidden_state.numpy()}
    if base is not model:
        res["logits"] = model(**kw).logits.numpy()
    return res


def compare(row: Row, work: Path, rec: dict, build_args=()) -> list[str]:
    """Builds `row` (with `build_args`) and compares it with transformers; fills rec["prefill"]
    with the largest max|Δ| of the compared outputs; returns the failures."""
    model = write_checkpoint(row, work / "hf")
    return check(work / "hf", model, work / "onnx", rec, build_args)


def check(hf_dir: Path, model, out_dir: Path, rec: dict, build_args=()) -> list[str]:
    """mobius builds hf_dir into out_dir; its outputs against transformers' model loaded from
    hf_dir (`model`: the in-memory one that was saved there); fills rec["prefill"]; returns the
    failures."""
    ctc = "ForCTC" in type(model).__name__
    ref = (AutoModelForCTC if ctc else AutoModel).from_pretrained(
        hf_dir, dtype=torch.float32, attn_implementation="eager").eval()
    values, mask = model_batch(ref)
    masked = takes_mask(ref)
    feed_mask = mask if masked else None
    # harness self-check: the checkpoint on disk is the model we made
    own = hf_run(model, values, feed_mask)
    assert all(np.array_equal(v, own[k]) for k, v in hf_run(ref, values, feed_mask).items()), \
        "reloaded checkpoint differs from the in-memory model"
    hf = hf_run(H.float64(ref), values, feed_mask)  # the reference: transformers in float64

    path = H.build(hf_dir, out_dir, *build_args)
    failures = H.check_model(path, rec)
    sess = H.ort_session(path)
    inputs = {input_name(ref)} | ({"attention_mask"} if masked else set())
    outputs = {"last_hidden_state"} | ({"logits"} if ctc else set())
    problems = H.io_problems(sess, inputs, outputs)
    if problems:
        return failures + [f"I/O contract: {p}" for p in problems]
    feeds = {input_name(ref): values} | ({"attention_mask": mask} if masked else {})
    got = dict(zip(sorted(outputs), sess.run(sorted(outputs), feeds)))

    frames = hf["last_hidden_state"].shape[1]
    valid = np.ones((2, frames), bool)
    if masked and input_name(ref) == "input_features":  # the mask is per frame
        valid = mask.astype(bool)
    elif masked:  # the frames of each row's own audio (transformers' feature-vector mask)
        lengths = ref._get_feat_extract_output_lengths(torch.as_tensor(mask.sum(-1))).numpy()
        valid = np.arange(frames)[None, :] < lengths[:, None]
        assert not valid[0].all() and valid[1].all(), "row 0 must have padded frames"
    worst = 0.0
    for name in sorted(outputs):
        if got[name].shape != hf[name].shape:
            failures.append(f"{name} shape {got[name].shape}, expected {hf[name].shape}")
            continue
        d = H.delta(rec, got[name][valid], hf[name][valid])
        worst = max(worst, d)
        if not d <= H.TOL:
            failures.append(f"{name} max|Δ| {d:.3g} > {H.TOL}")
    rec["prefill"] = worst
    return failures


def check_f16(row: Row, work: Path) -> list[str]:
    """`--dtype f16`: onnx.checker; every initializer named after a checkpoint tensor holds its
    float16 bits (Linear weights may be stored transposed); every tensor the float32 build reads
    is read; onnxruntime runs the padded batch to finite outputs."""
    hf_dir, out_dir = work / "hf", work / "onnx"
    write_checkpoint(row, hf_dir)
    path = H.build(hf_dir, out_dir, "--dtype", "f16")
    f32 = H.build(hf_dir, work / "onnx-f32")
    onnx.checker.check_model(str(path), full_check=True)
    failures = []
    source = {k: v.to(torch.float16).view(torch.int16).numpy().view(np.uint16)
              for k, v in load_file(hf_dir / "model.safetensors").items() if v.is_floating_point()}
    inits = {t.name: t for t in onnx.load(str(path), load_external_data=False).graph.initializer
             if t.data_location == TensorProto.EXTERNAL}
    read = {t.name for t in onnx.load(str(f32), load_external_data=False).graph.initializer
            if t.data_location == TensorProto.EXTERNAL}
    if set(inits) != read:
        failures.append(f"f16 weights {sorted(set(inits) ^ read)} differ from the float32 build's")
    for name, t in inits.items():
        got = numpy_helper.to_array(t, base_dir=str(path.parent)).view(np.uint16)
        want = source.get(name)
        if t.data_type != TensorProto.FLOAT16 or want is None or not (
                np.array_equal(got, want) or (got.ndim == 2 and np.array_equal(got, want.T))):
            failures.append(f"{name}: not the float16 bits of its checkpoint tensor")
    sess = H.ort_session(path)
    values, mask = batch()
    feeds = {"input_values": values.astype(np.float16)}
    if "attention_mask" in {i.name for i in sess.get_inputs()}:
        feeds["attention_mask"] = mask
    if not all(np.isfinite(o).all() for o in sess.run(None, feeds)):
        failures.append("float16 run: non-finite values")
    return failures
