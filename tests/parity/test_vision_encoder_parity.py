"""T3 for vision encoders (tasks image-feature-extraction and image-classification): transformers
(float32, eager) vs the model.onnx mobius builds, one test per vision_harness.ROWS row (what each
checks: tests/parity/vision_harness.py). The rows join the printed parity table."""

import pytest

import harness as H
import seq2seq_harness as S
import vision_harness as V

FIRST = len(H.rows()) + len(H.encoder_rows()) + len(S.ROWS)
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(V.ROWS)]


@pytest.mark.parametrize("index,row", ROWS)
def test_vision_encoder_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = V.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


# --ep cpu (the CPU lowering passes over a vision graph) and --precision int4 on two Linear-heavy
# towers: ViT (cls token, pooler) and SigLIP (attention-pooling head)
EXTRA_ROWS = [r for r in V.ROWS if (r.model_type, r.variant) in {("vit", "base"), ("siglip_vision_model", "base"),
                                                                 ("siglip2_vision_model", "base")}]


@pytest.mark.parametrize("row", EXTRA_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in EXTRA_ROWS])
def test_vision_ep_cpu(row, tmp_path_factory):
    rec = {}
    work = tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-cpu")
    failures = V.run(row, work, rec, ("--ep", "cpu"))
    failures += H.attention_lowering_problems(H.graph_path(work / "onnx", "model"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", EXTRA_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in EXTRA_ROWS])
def test_vision_int4(row, tmp_path_factory):
    failures = V.check_int4(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-int4"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("model_type,fields,needle", [
    ("vit", dict(image_size=[32, 32]), "image_size"),             # transformers allows [h, w]: refused here
    ("vit", dict(patch_size=5), "patch_size"),                    # does not divide image_size
    ("siglip2_vision_model", dict(num_patches=15), "num_patches"),  # the position table is not a square grid
    ("clip", dict(text_config=dict(V.TEXT, hidden_act="nope")), "text_config.hidden_act"),
    # sizes whose graphs would not fit: more than 1024 patches per side, a BEiT relative position
    # index over more than 64 x 64 patches, DINOv3 RoPE tables over 2^26 entries
    ("vit", dict(image_size=2050, patch_size=2), "patch_size"),
    ("beit", dict(image_size=1040, patch_size=16), "patch_size"),
    ("dinov3_vit", dict(image_size=4096, patch_size=4, hidden_size=128, num_attention_heads=1), "image_size"),
])
def test_vision_config_refused_in_one_line(model_type, fields, needle, tmp_path):
    """A config mobius cannot build: one `mobius: error:` line naming the field, exit 1, nothing written."""
    import json

    base = V.base_row(model_type).config
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text(json.dumps({"model_type": model_type, **base, **fields}))
    r = H.run_mobius("build", "--config", tmp_path / "hf", tmp_path / "out", "--no-weights")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:"), r.stderr
    assert needle in lines[0] and "config.json" in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def test_other_image_size_refused_at_the_input(tmp_path_factory):
    """Only the config's image_size: onnxruntime refuses another size at pixel_values (static dims)."""
    import numpy as np

    row = V.base_row("vit")
    work = tmp_path_factory.mktemp("vit-size")
    V.write_checkpoint(row, work / "hf")
    sess = H.ort_session(H.build(work / "hf", work / "onnx"))
    size = row.config["image_size"]
    sess.run(None, {"pixel_values": np.zeros((1, 3, size, size), np.float32)})  # the config's size runs
    with pytest.raises(Exception, match="pixel_values"):
        sess.run(None, {"pixel_values": np.zeros((1, 3, size + row.config["patch_size"], size), np.float32)})
