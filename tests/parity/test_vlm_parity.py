"""T3 for vision-language models (task image-text-to-text): transformers
AutoModelForImageTextToText (float32, eager) vs the three-graph package mobius builds, one test per
vlm_harness.ROWS row (what each checks: tests/parity/vlm_harness.py). The rows join the printed
parity table."""

import pytest

import harness as H
import phi4mm_harness
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
# and LLaVA-NeXT (its mistral decoder), Qwen3-VL with DeepStack (the levels sliced from inputs_embeds
# and added between the layers)
LOWERED = [pytest.param(V.base_row(t), id=t) for t in ("qwen2_5_vl", "mistral3", "gemma3", "llava_next")] + [
    pytest.param(next(r for r in V.ROWS if (r.model_type, r.variant) == ("qwen3_vl", "deepstack")),
                 id="qwen3_vl-deepstack")]


@pytest.mark.parametrize("row", LOWERED)
def test_vlm_ep_cpu(row, tmp_path_factory):
    """`--ep cpu` lowers the decoder graph (GroupQueryAttention, ...) and the vision tower's
    attention (MultiHeadAttention): the image batch's prefill and decode steps, the greedy tokens
    and onnxruntime-genai's still equal transformers'."""
    rec: dict = {}
    work = tmp_path_factory.mktemp(f"{row.model_type}-ep-cpu")
    failures = V.run(row, work, rec, ("--ep", "cpu"))
    failures += H.attention_lowering_problems(H.graph_path(work / "onnx", "vision"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", LOWERED)
def test_vlm_int4(row, tmp_path_factory):
    failures = V.check_int4(row, tmp_path_factory.mktemp(f"{row.model_type}-int4"))
    assert not failures, "\n".join(failures)


def test_vlm_ep_cpu_phi4_multimodal(tmp_path_factory):
    """`--ep cpu` on Phi-4-multimodal's phi3 decoder (longrope on 3/4 of the head): the image
    batch's features, prefill and decode steps equal transformers' (phi4mm_harness.check)."""
    rec: dict = {}
    failures = V.run(V.base_row("phi4_multimodal"), tmp_path_factory.mktemp("phi4_multimodal-ep-cpu"), rec,
                     ("--ep", "cpu"), full=False)
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


def test_vipllava_feature_layers_alias(tmp_path):
    """VipLLaVA's config.json spelling vision_feature_layers (VipLlavaConfig.attribute_map's alias,
    as older checkpoints do) with other layers than the default: transformers reads them, and the
    image batch's prefill and decode steps equal its (vlm_harness.check)."""
    row = V.base_row("vipllava")
    V.write_model(V.AutoConfig.for_model("vipllava", **dict(row.config, vision_feature_layer=[-1, 3])), tmp_path / "hf")
    cfg = V.json.loads((tmp_path / "hf" / "config.json").read_text())
    cfg["vision_feature_layers"] = cfg.pop("vision_feature_layer")
    (tmp_path / "hf" / "config.json").write_text(V.json.dumps(cfg))
    assert list(V.AutoConfig.from_pretrained(tmp_path / "hf").vision_feature_layer) == [-1, 3]
    failures = V.check(tmp_path, {}, full=False)
    assert not failures, "\n".join(failures)


# LLaVA-NeXT's vision graph on images of many sizes: the tiny pinpoints of the parity rows (a
# pinpoint's exact size, square, smaller than a tile, larger than every pinpoint, tall and wide past
# every pinpoint's ratio: 5 x 60 leaves no grid row after unpadding), and the released checkpoints'
# tiles (336 x 336 in patches of 14, LlavaNextConfig's default pinpoints) with photo-like sizes
NEXT_RELEASED = dict(V.base_row("llava_next").config, image_grid_pinpoints=None,
                     vision_config=dict(V.NEXT_VISION, model_type="clip_vision_model", hidden_size=16,
                                        intermediate_size=32, image_size=336, patch_size=14))


@pytest.mark.parametrize("config,sizes", [
    (V.base_row("llava_next").config, [(16, 32), (32, 32), (17, 16), (8, 8), (64, 64), (100, 20), (5, 60), (33, 47)]),
    (NEXT_RELEASED, [(480, 640), (300, 1024), (900, 200), (336, 336), (1080, 1920)]),
], ids=["tiny-pinpoints", "released-pinpoints"])
def test_llava_next_image_sizes(config, sizes, tmp_path):
    """One batch of images of other sizes and aspect ratios through LlavaNextImageProcessorPil: the
    vision graph's image_features equal transformers' get_image_features, as many rows as
    LlavaNextProcessor expands the images to."""
    ref = V.write_checkpoint(V.Row("llava_next", "sizes", config), tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "onnx")
    feeds, counts = V.llava_next_images(ref.config, sizes)
    with V.torch.no_grad():
        want = V.reference_features(H.float64(ref), feeds)
    got = V.OnnxVLM(tmp_path / "onnx").image_features(feeds)
    assert got.shape == want.shape == (sum(counts), ref.config.text_config.hidden_size), (got.shape, want.shape, counts)
    assert H.max_abs(got, want) <= H.TOL


def test_vlm_int4_phi4_multimodal(tmp_path_factory):
    failures = V.check_int4(V.base_row("phi4_multimodal"), tmp_path_factory.mktemp("phi4_multimodal-int4"))
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
    ("qwen3_vl", lambda c: c["vision_config"].update(depth=-1), "vision_config.depth"),
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
    ("vipllava", lambda c: c.update(vision_feature_layer=[-2, 13]), "vision_feature_layer"),
    ("llava_next", lambda c: c.update(image_grid_pinpoints=[[16, 40]]), "image_grid_pinpoints"),
    ("llava_next", lambda c: c.update(vision_feature_select_strategy="full"), "vision_feature_select_strategy"),
    ("llava_next", lambda c: c["text_config"].update(model_type="gemma"), "model_type"),
    ("phi4_multimodal", lambda c: c["vision_config"].update(crop_size=64), "crop_size"),
    ("phi4_multimodal", lambda c: c["vision_config"].update(feature_layer=-5), "feature_layer"),
    ("phi4_multimodal", lambda c: c["audio_config"].update(ext_pw_out_channel=16), "ext_pw_out_channel"),
    ("phi4_multimodal", lambda c: c["audio_config"].update(time_reduction=6), "time_reduction"),
    ("phi4_multimodal", lambda c: c["rope_parameters"].update(rope_type="linear", factor=2.0), "rope_type"),
], ids=["mrope-section", "no-vision-config", "vision-heads", "vision-depth", "position-grid", "scale-factor",
        "idefics3-text-type", "paddleocr-mrope-section", "paddleocr-vision-rope", "mistral3-feature-layers",
        "mistral3-vision-heads",
        "gemma3-tokens", "gemma3-bidirectional", "gemma3-null-window", "paligemma-projection", "paligemma-gemma2",
        "vipllava-feature-layer", "llava-next-pinpoints", "llava-next-full-clip", "llava-next-text-type",
        "phi4mm-crop-size", "phi4mm-feature-layer", "phi4mm-audio-conv-width", "phi4mm-time-reduction",
        "phi4mm-rope-type"])
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


def test_phi4mm_genai(tmp_path):
    """onnxruntime-genai 0.18's phi4mm pipeline (og.MultiModalProcessor on a PNG with an
    <|image_1|> prompt and on a WAV with an <|audio_1|> prompt; the package's genai_config.json,
    vision_processor.json and speech_processor.json) on a tiny model of the released 448 / 14 crop
    layout: its prompt logits and 24 greedy tokens equal transformers' (phi4mm_harness.check_genai)."""
    failures = phi4mm_harness.check_genai(tmp_path, {})
    assert not failures, "\n".join(failures)


# the decoder's projections, which Phi-4-multimodal's vision-lora adapts
PHI4_LORA_TARGETS = r"model\.layers\.\d+\.((self_attn\.(qkv_proj|o_proj))|(mlp\.(gate_up|down)_proj))"


def test_phi4mm_vision_lora(tmp_path):
    """The released checkpoint's LoRA is a PEFT adapter (vision-lora/, speech-lora/) that
    transformers' Phi4MultimodalForCausalLM does not apply by itself: `--lora vision-lora` merges
    one like it (its target_modules, A and B re-randomized) into the decoder, and the package
    equals transformers + peft's merged model (image features, prefill, decode steps;
    phi4mm_harness.check)."""
    import torch  # noqa: PLC0415
    from peft import LoraConfig, PeftModel, get_peft_model  # noqa: PLC0415
    from transformers import AutoModelForCausalLM  # noqa: PLC0415

    hf, adapter = tmp_path / "hf", tmp_path / "vision-lora"
    phi4mm_harness.write_checkpoint(V.base_row("phi4_multimodal"), hf)
    load = lambda: AutoModelForCausalLM.from_pretrained(hf, dtype=torch.float32,  # noqa: E731
                                                        attn_implementation="eager")
    torch.manual_seed(1)
    lora = get_peft_model(load(), LoraConfig(r=4, lora_alpha=8, target_modules=PHI4_LORA_TARGETS))
    with torch.no_grad():
        for name, p in lora.named_parameters():
            if "lora_" in name:
                p.copy_(torch.randn_like(p) * (0.3 if "lora_B" in name else p.shape[1] ** -0.5))
    lora.save_pretrained(adapter)
    merged = PeftModel.from_pretrained(load(), adapter).merge_and_unload().eval()
    qkv = "model.layers.0.self_attn.qkv_proj.weight"
    assert (merged.state_dict()[qkv] - load().state_dict()[qkv]).abs().max() > 1e-2  # the adapter changes it
    failures = phi4mm_harness.check(tmp_path, {}, ("--lora", str(adapter)), full=False, ref=merged)
    assert not failures, "\n".join(failures)


def test_tower_layers_past_the_features_are_not_reported_unused(tmp_path):
    """LLaVA's tower runs up to its deepest feature layer: the later layers are parameters the model
    declares and does not need, so the build does not warn of them."""
    row = V.base_row("llava")
    ref = V.write_checkpoint(row, tmp_path / "hf")
    layers = ref.config.vision_config.num_hidden_layers
    assert ref.config.vision_feature_layer in (-2, layers - 1)  # the last layer is past the features
    r = H.run_mobius("build", "--config", tmp_path / "hf", tmp_path / "out", "--runtime", "none")
    assert r.returncode == 0, r.stderr
    assert f"vision_tower.encoder.layers.{layers - 1}." not in r.stderr, r.stderr


# The head options of the text types (Gemma's final_logit_softcapping, Cohere's logit_scale,
# Granite's logits_scaling) set in every multimodal type's text config: each multimodal class
# applies the head steps of its own transformers forward, not its text type's causal LM
# (Gemma3ForConditionalGeneration: none; PaliGemmaForConditionalGeneration: the text config's
# final_logit_softcapping; the others: none).
HEAD_OPTIONS = dict(final_logit_softcapping=2.0, logit_scale=0.25, logits_scaling=4.0)


def with_head_options(row: V.Row) -> V.Row:
    config = dict(row.config)
    if "text_config" in config:
        config["text_config"] = dict(config["text_config"], **HEAD_OPTIONS)
    else:  # phi4_multimodal: the text fields at the top level
        config.update(HEAD_OPTIONS)
    return V.Row(row.model_type, "head-options", config)


@pytest.mark.parametrize("model_type", sorted(V.types()))
def test_vlm_head_options(model_type, tmp_path_factory):
    """The image batch's prefill and decode steps equal transformers' with HEAD_OPTIONS in the text
    config (a cap of 2 moves the tiny models' logits far beyond harness.TOL)."""
    rec: dict = {}
    failures = V.run(with_head_options(V.base_row(model_type)), tmp_path_factory.mktemp(f"{model_type}-head"), rec,
                     full=False)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("model_type", ["gemma3", "paligemma"])
def test_gemma_image_token_outside_vocabulary(model_type, tmp_path):
    """Gemma3Model and PaliGemmaModel embed an image_token_index outside the text vocabulary as
    token 0: a text-only prompt holding it and a decode step on it equal transformers'
    (vlm_harness.check_text_only), where the embedding's table lookup would be out of range."""
    row = V.base_row(model_type)
    config = V.AutoConfig.for_model(model_type, **dict(row.config, image_token_index=V.VOCAB))
    V.write_model(config, tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "onnx")
    ref = V.AutoModelForImageTextToText.from_pretrained(tmp_path / "hf", dtype=V.torch.float32,
                                                        attn_implementation="eager").eval()
    assert ref.config.image_token_id >= ref.config.text_config.vocab_size
    failures = V.check_text_only(H.float64(ref), {}, V.OnnxVLM(tmp_path / "onnx"), [], [])
    assert not failures, "\n".join(failures)
