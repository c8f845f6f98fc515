"""T3 for vision-language models (task image-text-to-text): transformers
AutoModelForImageTextToText (float32, eager) vs the three-graph package mobius builds, one test per
vlm_harness.ROWS row (what each checks: tests/parity/vlm_harness.py). The rows join the printed
parity table."""

import pytest

import harness as H
import seq2seq_harness as S
import vision_harness
import vlm_harness as V

FIRST = len(H.rows()) + len(H.encoder_rows()) + len(S.ROWS) + len(vision_harness.ROWS)
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(V.ROWS)]


@pytest.mark.parametrize("index,row", ROWS)
def test_vlm_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = V.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


# Qwen2.5-VL, Mistral 3, Gemma 3 (its image-block mask through GroupQueryAttention's attention bias)
# and Qwen3-VL with DeepStack (the levels sliced from inputs_embeds and added between the layers)
LOWERED = [pytest.param(V.base_row(t), id=t) for t in ("qwen2_5_vl", "mistral3", "gemma3")] + [
    pytest.param(next(r for r in V.ROWS if (r.model_type, r.variant) == ("qwen3_vl", "deepstack")),
                 id="qwen3_vl-deepstack")]


@pytest.mark.parametrize("row", LOWERED)
def test_vlm_ep_cpu(row, tmp_path_factory):
    """`--ep cpu` lowers the decoder graph (GroupQueryAttention, ...): the image batch's prefill and
    decode steps still equal transformers'."""
    rec: dict = {}
    failures = V.run(row, tmp_path_factory.mktemp(f"{row.model_type}-ep-cpu"), rec, ("--ep", "cpu"), full=False)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", LOWERED)
def test_vlm_int4(row, tmp_path_factory):
    failures = V.check_int4(row, tmp_path_factory.mktemp(f"{row.model_type}-int4"))
    assert not failures, "\n".join(failures)


def test_vlm_ep_cpu_paddleocr_vl(tmp_path_factory):
    """`--ep cpu` on PaddleOCR-VL's decoder (biases, M-RoPE): the image batch's prefill and decode
    steps equal transformers'."""
    rec: dict = {}
    failures = V.run(V.base_row("paddleocr_vl"), tmp_path_factory.mktemp("paddleocr_vl-ep-cpu"), rec, ("--ep", "cpu"),
                     full=False)
    assert not failures, "\n".join(failures)


def test_paddleocr_vl_flat_config(tmp_path):
    """PaddleOCR-VL's config.json as the Hub has it: the text fields at the top level (rope_scaling,
    rope_theta), which PaddleOCRVLConfig pops into text_config: the image batch's prefill and decode
    steps equal transformers' (vlm_harness.check)."""
    cfg = V.AutoConfig.for_model("paddleocr_vl", **V.base_row("paddleocr_vl").config).to_dict()
    text = {k: v for k, v in cfg.pop("text_config").items() if k not in ("model_type", "architectures", "dtype")}
    flat = {**text, **cfg, "rope_theta": text["rope_parameters"]["rope_theta"]}
    flat["rope_scaling"] = flat.pop("rope_parameters")
    config = H.transformers.CONFIG_MAPPING["paddleocr_vl"].from_dict(V.json.loads(V.json.dumps(flat)))
    assert config.text_config.hidden_size == text["hidden_size"]  # transformers reads the flat fields
    V.write_model(config, tmp_path / "hf")
    (tmp_path / "hf" / "config.json").write_text(V.json.dumps(flat))
    failures = V.check(tmp_path, {}, full=False)
    assert not failures, "\n".join(failures)


def test_gemma3_pan_and_scan(tmp_path):
    """Gemma 3's pan-and-scan crops (vlm_harness.check_pan_and_scan): a wide image, cut by
    Gemma3Processor into the resized image and 3 crops, through the package equals transformers'
    forward: image_features, prefill logits and decode steps."""
    rec: dict = {}
    failures = V.check_pan_and_scan(tmp_path, rec)
    assert not failures, "\n".join(failures)


def test_vlm_int4_smolvlm(tmp_path_factory):
    failures = V.check_int4(V.base_row("smolvlm"), tmp_path_factory.mktemp("smolvlm-int4"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("model_type,edit,needle", [
    ("qwen2_5_vl", lambda c: c["text_config"]["rope_parameters"].update(mrope_section=[2, 3, 4]), "mrope_section"),
    ("qwen2_5_vl", lambda c: c.pop("vision_config"), "vision_config"),
    ("qwen2_vl", lambda c: c["vision_config"].update(num_heads=3), "num_heads"),
    ("qwen3_vl", lambda c: c["vision_config"].update(num_position_embeddings=15), "num_position_embeddings"),
    ("smolvlm", lambda c: c.update(scale_factor=4), "scale_factor"),
    ("idefics3", lambda c: c["text_config"].update(model_type="qwen2"), "model_type"),
    ("paddleocr_vl", lambda c: c["text_config"]["rope_parameters"].update(mrope_section=[2, 3, 4]), "mrope_section"),
    ("paddleocr_vl", lambda c: c["vision_config"]["rope_parameters"].update(rope_type="default"), "rope_type"),
    ("mistral3", lambda c: c.update(vision_feature_layer=[-1, -2]), "vision_feature_layer"),
    ("mistral3", lambda c: c["vision_config"].update(num_attention_heads=3), "num_attention_heads"),
    ("gemma3", lambda c: c.update(mm_tokens_per_image=200), "mm_tokens_per_image"),
    ("gemma3", lambda c: c["text_config"].update(use_bidirectional_attention=True), "use_bidirectional_attention"),
    ("gemma3", lambda c: c["text_config"].update(sliding_window=None), "sliding_window"),
    ("paligemma", lambda c: c.update(projection_dim=32), "projection_dim"),
    ("paligemma", lambda c: c["text_config"].update(model_type="gemma2"), "model_type"),
], ids=["mrope-section", "no-vision-config", "vision-heads", "position-grid", "scale-factor",
        "idefics3-text-type", "paddleocr-mrope-section", "paddleocr-vision-rope", "mistral3-feature-layers",
        "mistral3-vision-heads",
        "gemma3-tokens", "gemma3-bidirectional", "gemma3-null-window", "paligemma-projection", "paligemma-gemma2"])
def test_vlm_config_errors(model_type, edit, needle, tmp_path):
    """A config.json the family cannot build: one `mobius: error:` line naming config.json and the
    field, exit 1, nothing written."""
    row = next(r for r in V.ROWS if r.model_type == model_type)
    config = V.AutoConfig.for_model(row.model_type, **row.config).to_dict()
    edit(config)
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text(V.json.dumps(config))
    r = H.run_mobius("build", "--config", tmp_path / "hf", tmp_path / "out", "--no-weights")
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:"), r.stderr
    assert "config.json" in lines[0] and needle in lines[0], lines[0]
    assert not (tmp_path / "out").exists()
