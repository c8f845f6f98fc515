"""A diffusers pipeline folder built with one command (src/driver/pipeline.h) and run end to end:
a tiny Stable-Diffusion-like pipeline made by diffusers itself (UNet2DConditionModel,
AutoencoderKL, CLIPTextModel, DDIMScheduler; fixed seed, every parameter re-randomized,
save_pretrained) is built by `mobius build PIPELINE OUT`, and a 4-step DDIM denoising loop runs in
onnxruntime over the package's text_encoder, unet and vae_decoder graphs, the scheduler written
here in numpy. The final latent equals the one diffusers' StableDiffusionPipeline gives for the
same prompt embeddings and initial latents, and the decoded image AutoencoderKL.decode's, each
within 1e-4 relative to its scale (the largest magnitude of the reference). The package's layout
(Optimum's ORTDiffusionPipeline: one folder per component, each with its config.json;
model_index.json; the scheduler folder copied; mobius_manifest.json) and a component mobius does
not build (skipped, said in the manifest and a warning) are checked too; an SDXL-like pipeline
(text_encoder_2 a CLIPTextModelWithProjection, a text_time UNet) and a ControlNet pipeline (the
unet graph takes the controlnet graph's residuals) the same way; a Wan-like video pipeline (UMT5
text encoder, WanTransformer3DModel, AutoencoderKLWan) with 4 flow-matching Euler steps. About 30 s."""

import json

import numpy as np
import onnxruntime as ort
import pytest
import torch

import harness as H

diffusers = pytest.importorskip("diffusers")

STEPS = 4
SCHEDULER = dict(num_train_timesteps=1000, beta_schedule="scaled_linear", beta_start=0.00085, beta_end=0.012,
                 clip_sample=False, set_alpha_to_one=False, steps_offset=1, timestep_spacing="leading",
                 prediction_type="epsilon")


def randomize(module: torch.nn.Module, seed: int) -> None:
    """Every parameter re-drawn (norm weights and biases too), so no default initialization hides a
    weight the graph reads wrongly."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.2)


def tiny_sd_components():
    """The tiny Stable-Diffusion-like UNet, VAE and CLIP text encoder (seed 0, not yet randomized)."""
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    unet = diffusers.UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(16, 32),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=24, attention_head_dim=4, norm_num_groups=8)
    vae = diffusers.AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(16, 32), layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, norm_num_groups=8)
    text_encoder = CLIPTextModel(CLIPTextConfig(vocab_size=100, hidden_size=24, intermediate_size=40,
                                                num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=16,
                                                bos_token_id=0, eos_token_id=2, pad_token_id=1))
    return unet, vae, text_encoder


def tiny_pipeline(path):
    unet, vae, text_encoder = tiny_sd_components()
    for i, m in enumerate((unet, vae, text_encoder)):
        randomize(m, 10 + i)
    pipe = diffusers.StableDiffusionPipeline(
        vae=vae, text_encoder=text_encoder, tokenizer=None, unet=unet,
        scheduler=diffusers.DDIMScheduler(**SCHEDULER), safety_checker=None, feature_extractor=None,
        requires_safety_checker=False)
    pipe.save_pretrained(path)
    return pipe


def ddim_step(eps, t, x, alphas_cumprod, step_ratio):
    """DDIMScheduler.step for SCHEDULER (eta 0, epsilon prediction, no clipping or thresholding)."""
    prev = t - step_ratio
    a_t = alphas_cumprod[t]
    a_prev = alphas_cumprod[prev] if prev >= 0 else alphas_cumprod[0]  # set_alpha_to_one=False
    x0 = (x - np.sqrt(1 - a_t) * eps) / np.sqrt(a_t)
    return np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * eps


def ddim_schedule():
    n = SCHEDULER["num_train_timesteps"]
    betas = np.linspace(SCHEDULER["beta_start"] ** 0.5, SCHEDULER["beta_end"] ** 0.5, n, dtype=np.float64) ** 2
    alphas_cumprod = np.cumprod(1.0 - betas)
    step_ratio = n // STEPS
    timesteps = (np.arange(STEPS) * step_ratio).round()[::-1].astype(np.int64) + SCHEDULER["steps_offset"]
    return alphas_cumprod.astype(np.float32), step_ratio, timesteps


def assert_close(got, want, what):
    scale = float(np.abs(want).max())
    err = float(np.abs(got - want).max())
    print(f"{what}: max |diff| {err:.3g}, scale {scale:.3g}")
    assert err <= 1e-4 * scale, f"{what}: max |diff| {err:.3g} > 1e-4 x scale {scale:.3g}"


def feeds(session, **values):
    """`values` for the session's inputs, each cast to the input's type; an attention_mask of ones."""
    out = {}
    for i in session.get_inputs():
        if i.name == "attention_mask":
            out[i.name] = np.ones_like(values["input_ids"])
            continue
        v = values[i.name]
        out[i.name] = v.astype(np.int64 if i.type == "tensor(int64)" else np.float32)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("sd")
    pipe = tiny_pipeline(root / "pipe")
    r = H.run_mobius("build", root / "pipe", root / "out")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr  # every tensor read (the vae's by one graph or the other)
    return pipe, root / "pipe", root / "out"


def test_package_layout(built):
    _, src, out = built
    files = H.package_files(out)
    for comp in ("unet", "vae_encoder", "vae_decoder", "text_encoder"):
        assert {f"{comp}/model.onnx", f"{comp}/model.onnx_data", f"{comp}/config.json"} <= files, files
    assert (out / "unet/config.json").read_bytes() == (src / "unet/config.json").read_bytes()
    assert (out / "vae_decoder/config.json").read_bytes() == (src / "vae/config.json").read_bytes()
    assert (out / "model_index.json").read_bytes() == (src / "model_index.json").read_bytes()
    assert (out / "scheduler/scheduler_config.json").read_bytes() == (src / "scheduler/scheduler_config.json").read_bytes()
    manifest = json.loads((out / "mobius_manifest.json").read_text())["components"]
    assert manifest["unet"]["built"] == ["unet"] and manifest["vae"]["built"] == ["vae_encoder", "vae_decoder"]
    assert manifest["scheduler"] == {"copied": ["scheduler_config.json"]}
    assert manifest["tokenizer"] == {"absent": True}
    r = H.run_mobius("build", src, out, "--force")  # a previous pipeline package: replaced
    assert r.returncode == 0, r.stderr
    (out / "backup").mkdir()  # a user's folder with a copy of a graph: --force keeps its hands off
    (out / "backup/model.onnx").write_bytes((out / "unet/model.onnx").read_bytes())
    r = H.run_mobius("build", src, out, "--force")
    assert r.returncode == 1 and "only a previous mobius package" in r.stderr, r.stderr
    assert (out / "backup/model.onnx").is_file()


def test_four_step_ddim_loop_equals_diffusers(built):
    pipe, _, out = built
    rng = np.random.default_rng(0)
    input_ids = rng.integers(3, 100, size=(1, 7)).astype(np.int64)
    latents = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)

    with torch.no_grad():
        text_out = pipe.text_encoder(torch.from_numpy(input_ids))
        embeds = text_out[0]
        want = pipe(prompt_embeds=embeds, latents=torch.from_numpy(latents), num_inference_steps=STEPS,
                    guidance_scale=1.0, output_type="latent").images.numpy()
        want_image = pipe.vae.decode(torch.from_numpy(want) / pipe.vae.config.scaling_factor).sample.numpy()

    session = lambda c: ort.InferenceSession(str(out / c / "model.onnx"), providers=["CPUExecutionProvider"])  # noqa: E731
    text, unet, vae = session("text_encoder"), session("unet"), session("vae_decoder")
    # input_ids alone, as the pipelines call a CLIP text encoder (Optimum's ORTTextEncoder feeds only that)
    assert [i.name for i in text.get_inputs()] == ["input_ids"], text.get_inputs()
    hidden, pooled = text.run(["last_hidden_state", "pooler_output"], feeds(text, input_ids=input_ids))
    assert_close(hidden, embeds.numpy(), "text_encoder last_hidden_state")
    assert_close(pooled, text_out.pooler_output.numpy(), "text_encoder pooler_output")
    alphas_cumprod, step_ratio, timesteps = ddim_schedule()
    x = latents
    for t in timesteps:
        eps = unet.run(["out_sample"], feeds(unet, sample=x, timestep=np.array([t]), encoder_hidden_states=hidden))[0]
        x = ddim_step(eps, int(t), x, alphas_cumprod, step_ratio).astype(np.float32)
    assert_close(x, want, "final latent")
    image = vae.run(["sample"], feeds(vae, latent_sample=x / pipe.vae.config.scaling_factor))[0]
    assert_close(image, want_image, "decoded image")


def test_unknown_component_is_skipped_and_said(built, tmp_path):
    _, src, _ = built
    import shutil

    pipe = tmp_path / "pipe"
    shutil.copytree(src, pipe)
    index = json.loads((pipe / "model_index.json").read_text())
    index["image_encoder"] = ["diffusers", "SomeNewEncoder"]
    (pipe / "image_encoder").mkdir()
    (pipe / "image_encoder/config.json").write_text(json.dumps({"_class_name": "SomeNewEncoder"}))
    (pipe / "model_index.json").write_text(json.dumps(index))
    r = H.run_mobius("build", pipe, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "pipeline component 'image_encoder' skipped: diffusers class 'SomeNewEncoder' is not supported yet" in r.stderr
    manifest = json.loads((tmp_path / "out/mobius_manifest.json").read_text())["components"]
    assert manifest["image_encoder"] == {"skipped": "diffusers class 'SomeNewEncoder' is not supported yet"}
    assert not (tmp_path / "out/image_encoder").exists()
    # a component config out of range is refused by its file and field, nothing written
    config = json.loads((pipe / "unet/config.json").read_text())
    config["layers_per_block"] = -1
    (pipe / "unet/config.json").write_text(json.dumps(config))
    r = H.run_mobius("build", pipe, tmp_path / "bad")
    assert r.returncode == 1 and "unet/config.json" in r.stderr and "layers_per_block" in r.stderr, r.stderr
    assert not (tmp_path / "bad").exists()


# SDXL-like: two text encoders (CLIPTextModel, CLIPTextModelWithProjection as text_encoder_2), a
# text_time UNet (the pooled text_embeds and the six size / crop ids added to the time embedding)
def tiny_sdxl_pipeline(path):
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    torch.manual_seed(0)
    text = dict(vocab_size=100, intermediate_size=40, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=16, bos_token_id=0, eos_token_id=2, pad_token_id=1)
    text_encoder = CLIPTextModel(CLIPTextConfig(hidden_size=24, **text))
    text_encoder_2 = CLIPTextModelWithProjection(CLIPTextConfig(hidden_size=16, projection_dim=12, **text))
    unet = diffusers.UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(16, 32),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=24 + 16, attention_head_dim=4, norm_num_groups=8, use_linear_projection=True,
        addition_embed_type="text_time", addition_time_embed_dim=4, projection_class_embeddings_input_dim=6 * 4 + 12)
    vae = diffusers.AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(16, 32), layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, norm_num_groups=8)
    for i, m in enumerate((unet, vae, text_encoder, text_encoder_2)):
        randomize(m, 20 + i)
    pipe = diffusers.StableDiffusionXLPipeline(
        vae=vae, text_encoder=text_encoder, text_encoder_2=text_encoder_2, tokenizer=None, tokenizer_2=None, unet=unet,
        scheduler=diffusers.DDIMScheduler(**SCHEDULER))
    pipe.save_pretrained(path)
    return pipe


def test_sdxl_pipeline_four_step_ddim_loop(tmp_path):
    """The SDXL-like pipeline builds with one command (text_encoder_2 is CLIPTextModelWithProjection:
    text_embeds, last_hidden_state and hidden_states.{i}); its text_encoder_2 gives the pooled
    embedding and the penultimate hidden state StableDiffusionXLPipeline.encode_prompt takes, and a
    4-step DDIM loop over the unet graph (text_embeds, time_ids) gives the pipeline's final latent.
    text_encoder (CLIPTextModel in a pipeline) gives its penultimate hidden state too."""
    pipe = tiny_sdxl_pipeline(tmp_path / "pipe")
    r = H.run_mobius("build", tmp_path / "pipe", tmp_path / "out")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    out = tmp_path / "out"
    manifest = json.loads((out / "mobius_manifest.json").read_text())["components"]
    assert manifest["text_encoder_2"] == {"built": ["text_encoder_2"], "class": "CLIPTextModelWithProjection"}, manifest

    rng = np.random.default_rng(0)
    input_ids = rng.integers(3, 100, size=(1, 7)).astype(np.int64)
    latents = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    size = 8 * pipe.vae_scale_factor
    with torch.no_grad():
        ids = torch.from_numpy(input_ids)
        first = pipe.text_encoder(ids, output_hidden_states=True).hidden_states[-2]
        second = pipe.text_encoder_2(ids, output_hidden_states=True)
        embeds = torch.cat([first, second.hidden_states[-2]], dim=-1)
        want = pipe(prompt_embeds=embeds, pooled_prompt_embeds=second.text_embeds, latents=torch.from_numpy(latents),
                    num_inference_steps=STEPS, guidance_scale=1.0, height=size, width=size,
                    output_type="latent").images.numpy()

    session = lambda c: ort.InferenceSession(str(out / c / "model.onnx"), providers=["CPUExecutionProvider"])  # noqa: E731
    text, text_2, unet = session("text_encoder"), session("text_encoder_2"), session("unet")
    assert [i.name for i in text_2.get_inputs()] == ["input_ids"], text_2.get_inputs()
    layers = pipe.text_encoder.config.num_hidden_layers
    first_penultimate = text.run([f"hidden_states.{layers - 1}"], feeds(text, input_ids=input_ids))[0]
    assert_close(first_penultimate, first.numpy(), "text_encoder penultimate hidden state")
    layers = pipe.text_encoder_2.config.num_hidden_layers
    pooled, penultimate = text_2.run(["text_embeds", f"hidden_states.{layers - 1}"], feeds(text_2, input_ids=input_ids))
    assert_close(pooled, second.text_embeds.numpy(), "text_encoder_2 text_embeds")
    assert_close(penultimate, second.hidden_states[-2].numpy(), "text_encoder_2 penultimate hidden state")
    hidden = np.concatenate([first_penultimate, penultimate], axis=-1)
    time_ids = np.array([[size, size, 0, 0, size, size]], dtype=np.float32)  # original size, crop, target size
    alphas_cumprod, step_ratio, timesteps = ddim_schedule()
    x = latents
    for t in timesteps:
        eps = unet.run(["out_sample"], feeds(unet, sample=x, timestep=np.array([t]), encoder_hidden_states=hidden,
                                             text_embeds=pooled, time_ids=time_ids))[0]
        x = ddim_step(eps, int(t), x, alphas_cumprod, step_ratio).astype(np.float32)
    assert_close(x, want, "final latent")


def built_conditioned_pipeline(tmp_path, pipeline, key, make_component, seed, **scale):
    """The tiny SD pipeline of class `pipeline` with the component make_component(unet) under `key`
    (a ControlNetModel, a T2IAdapter; every model re-randomized from `seed`), saved and built with
    one command (its manifest names the component built), and the pipeline's own final latent after
    STEPS DDIM steps on a 16 x 16 control image at `scale` (its *_conditioning_scale keyword).
    Returns (package dir, prompt embeddings, initial latents, image, final latent)."""
    unet, vae, text_encoder = tiny_sd_components()
    component = make_component(unet)
    for i, m in enumerate((unet, component, vae, text_encoder)):
        randomize(m, seed + i)
    pipe = pipeline(vae=vae, text_encoder=text_encoder, tokenizer=None, unet=unet,
                    scheduler=diffusers.DDIMScheduler(**SCHEDULER), safety_checker=None, feature_extractor=None,
                    requires_safety_checker=False, **{key: component})
    pipe.save_pretrained(tmp_path / "pipe")
    r = H.run_mobius("build", tmp_path / "pipe", tmp_path / "out")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    out = tmp_path / "out"
    manifest = json.loads((out / "mobius_manifest.json").read_text())["components"]
    assert manifest[key] == {"built": [key], "class": type(component).__name__}, manifest

    rng = np.random.default_rng(seed)
    input_ids = rng.integers(3, 100, size=(1, 7)).astype(np.int64)
    latents = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    image = rng.uniform(0, 1, size=(1, 3, 16, 16)).astype(np.float32)
    with torch.no_grad():
        embeds = pipe.text_encoder(torch.from_numpy(input_ids))[0]
        want = pipe(prompt_embeds=embeds, image=torch.from_numpy(image), latents=torch.from_numpy(latents),
                    num_inference_steps=STEPS, guidance_scale=1.0, height=16, width=16, output_type="latent",
                    **scale).images.numpy()
    return out, embeds, latents, image, want


def test_controlnet_pipeline_four_step_ddim_loop(tmp_path):
    """A StableDiffusionControlNetPipeline (the UNet's ControlNetModel.from_unet copy, its
    conditioning embedding halving a 16 x 16 image to the 8 x 8 latent) builds with one command:
    the controlnet graph, and a unet graph that also takes the ControlNet's residuals
    (down_block_additional_residuals.{i}, mid_block_additional_residual, the controlnet graph's
    down_block_res_samples.{i} and mid_block_res_sample). A 4-step DDIM loop running both graphs
    (conditioning scale 0.7) gives the pipeline's final latent."""
    scale = 0.7
    out, embeds, latents, image, want = built_conditioned_pipeline(
        tmp_path, diffusers.StableDiffusionControlNetPipeline, "controlnet",
        lambda unet: diffusers.ControlNetModel.from_unet(unet, conditioning_embedding_out_channels=(8, 16)), 30,
        controlnet_conditioning_scale=scale)
    session = lambda c: ort.InferenceSession(str(out / c / "model.onnx"), providers=["CPUExecutionProvider"])  # noqa: E731
    control, unet = session("controlnet"), session("unet")
    names = [o.name for o in control.get_outputs()]
    assert {i.name for i in unet.get_inputs()} >= {n.replace("down_block_res_samples", "down_block_additional_residuals")
                                                   .replace("mid_block_res_sample", "mid_block_additional_residual")
                                                   for n in names}, unet.get_inputs()
    alphas_cumprod, step_ratio, timesteps = ddim_schedule()
    x = latents
    for t in timesteps:
        res = control.run(names, feeds(control, sample=x, timestep=np.array([t]), encoder_hidden_states=embeds.numpy(),
                                       controlnet_cond=image, conditioning_scale=np.array(scale)))
        residuals = {n.replace("down_block_res_samples", "down_block_additional_residuals")
                     .replace("mid_block_res_sample", "mid_block_additional_residual"): v for n, v in zip(names, res)}
        eps = unet.run(["out_sample"], feeds(unet, sample=x, timestep=np.array([t]), encoder_hidden_states=embeds.numpy(),
                                             **residuals))[0]
        x = ddim_step(eps, int(t), x, alphas_cumprod, step_ratio).astype(np.float32)
    assert_close(x, want, "final latent")


def test_adapter_pipeline_four_step_ddim_loop(tmp_path):
    """A StableDiffusionAdapterPipeline (a full_adapter T2IAdapter whose two maps fit the UNet's two
    down blocks: 8 x 8 after the CrossAttnDownBlock2D's attention, 4 x 4 after the last
    DownBlock2D) builds with one command: the adapter graph, and a unet graph that also takes
    down_intrablock_additional_residuals.{k}. A 4-step DDIM loop feeding the adapter's maps times
    adapter_conditioning_scale 0.6, as the pipeline does, gives the pipeline's final latent."""
    scale = 0.6
    out, embeds, latents, image, want = built_conditioned_pipeline(
        tmp_path, diffusers.StableDiffusionAdapterPipeline, "adapter",
        lambda unet: diffusers.T2IAdapter(in_channels=3, channels=[16, 32], num_res_blocks=1, downscale_factor=2,
                                          adapter_type="full_adapter"), 40, adapter_conditioning_scale=scale)
    session = lambda c: ort.InferenceSession(str(out / c / "model.onnx"), providers=["CPUExecutionProvider"])  # noqa: E731
    adapter_graph, unet_graph = session("adapter"), session("unet")
    states = adapter_graph.run(None, {"sample": image})
    residuals = {f"down_intrablock_additional_residuals.{k}": s * np.float32(scale) for k, s in enumerate(states)}
    assert {i.name for i in unet_graph.get_inputs()} >= set(residuals), unet_graph.get_inputs()
    alphas_cumprod, step_ratio, timesteps = ddim_schedule()
    x = latents
    for t in timesteps:
        eps = unet_graph.run(["out_sample"], feeds(unet_graph, sample=x, timestep=np.array([t]),
                                                   encoder_hidden_states=embeds.numpy(), **residuals))[0]
        x = ddim_step(eps, int(t), x, alphas_cumprod, step_ratio).astype(np.float32)
    assert_close(x, want, "final latent")


def adapter_xl_folder(path, adapter_channels):
    """A folder as StableDiffusionXLAdapterPipeline lays its UNet and adapter out (model_index.json,
    unet/, adapter/): an SDXL-shaped UNet (DownBlock2D with its downsampler, CrossAttnDownBlock2D with
    its own, a last CrossAttnDownBlock2D; 8 x 8 latent -> 4 x 4 -> 2 x 2) and a full_adapter_xl
    T2IAdapter on a 16 x 16 image (downscale 4: maps of 4, 4, 2 and 2 pixels, the fourth for the mid
    block). Returns the two models (re-randomized)."""
    torch.manual_seed(0)
    unet = diffusers.UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(16, 32, 32),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=24, attention_head_dim=4, norm_num_groups=8, use_linear_projection=True)
    adapter = diffusers.T2IAdapter(in_channels=3, channels=adapter_channels, num_res_blocks=1, downscale_factor=4,
                                   adapter_type="full_adapter_xl")
    for i, m in enumerate((unet, adapter)):
        randomize(m, 50 + i)
    unet.save_pretrained(path / "unet")
    adapter.save_pretrained(path / "adapter")
    (path / "model_index.json").write_text(json.dumps({
        "_class_name": "StableDiffusionXLAdapterPipeline", "_diffusers_version": diffusers.__version__,
        "adapter": ["diffusers", "T2IAdapter"], "unet": ["diffusers", "UNet2DConditionModel"]}))
    return unet, adapter


def test_adapter_xl_maps_in_the_down_and_mid_blocks(tmp_path):
    """T2I-Adapter-XL's four maps: the first added after the DownBlock2D's downsampler (the skip it
    leaves holds it too: diffusers adds in place), the second and third after the cross-attention
    blocks' attentions, the fourth after the mid block (its shape is the mid block's). The unet graph
    fed the adapter graph's maps equals UNet2DConditionModel.forward with
    down_intrablock_additional_residuals; a copy of the folder whose adapter's first map has other
    channels is refused by name."""
    unet, adapter = adapter_xl_folder(tmp_path / "pipe", [16, 32, 32, 32])
    r = H.run_mobius("build", tmp_path / "pipe", tmp_path / "out")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    session = lambda c: ort.InferenceSession(str(tmp_path / "out" / c / "model.onnx"),  # noqa: E731
                                             providers=["CPUExecutionProvider"])
    adapter_graph, unet_graph = session("adapter"), session("unet")
    rng = np.random.default_rng(3)
    image = rng.uniform(0, 1, size=(2, 3, 16, 16)).astype(np.float32)
    sample = rng.standard_normal((2, 4, 8, 8)).astype(np.float32)
    states_in = rng.standard_normal((2, 5, 24)).astype(np.float32)
    states = adapter_graph.run(None, {"sample": image})
    assert len([i for i in unet_graph.get_inputs() if i.name.startswith("down_intrablock")]) == 4
    got = unet_graph.run(["out_sample"], feeds(unet_graph, sample=sample, timestep=np.array([500.0]),
                                               encoder_hidden_states=states_in,
                                               **{f"down_intrablock_additional_residuals.{k}": s
                                                  for k, s in enumerate(states)}))[0]
    with torch.no_grad():
        maps = adapter(torch.from_numpy(image))
        for k, s in enumerate(states):
            assert_close(s, maps[k].numpy(), f"adapter_state.{k}")
        want = unet(torch.from_numpy(sample), 500, torch.from_numpy(states_in),
                    down_intrablock_additional_residuals=list(maps)).sample.numpy()
    assert_close(got, want, "out_sample")

    adapter_xl_folder(tmp_path / "bad", [8, 32, 32, 32])
    r = H.run_mobius("build", tmp_path / "bad", tmp_path / "bad-out")
    assert r.returncode != 0 and not (tmp_path / "bad-out").exists()
    assert "unet/config.json" in r.stderr and "block_out_channels" in r.stderr and "T2IAdapter" in r.stderr, r.stderr


# Wan-like (WanPipeline, Wan 2.1 T2V): a UMT5EncoderModel text encoder (built as the t5 encoder
# alone), WanTransformer3DModel and AutoencoderKLWan, with FlowMatchEulerDiscreteScheduler (the
# scheduler class WanPipeline declares; Wan's own checkpoints ship UniPCMultistepScheduler with
# flow prediction) at Wan's flow shift 3
WAN_SHIFT = 3.0


def tiny_wan_pipeline(path):
    from transformers import UMT5Config, UMT5EncoderModel

    torch.manual_seed(0)
    text_encoder = UMT5EncoderModel(UMT5Config(vocab_size=100, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_heads=4,
                                               relative_attention_num_buckets=8, relative_attention_max_distance=16,
                                               feed_forward_proj="gated-gelu", pad_token_id=0, eos_token_id=1,
                                               decoder_start_token_id=0)).eval()
    transformer = diffusers.WanTransformer3DModel(
        patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=12, in_channels=4, out_channels=4,
        text_dim=16, freq_dim=16, ffn_dim=32, num_layers=2)
    vae = diffusers.AutoencoderKLWan(  # two temporal and spatial downsamplings: scale factors 4 and 4
        base_dim=8, z_dim=4, dim_mult=[1, 2, 2], num_res_blocks=1, temperal_downsample=[True, True],
        latents_mean=[0.1, -0.2, 0.3, 0.0], latents_std=[1.5, 2.0, 0.5, 1.0], scale_factor_temporal=4,
        scale_factor_spatial=4)
    for i, m in enumerate((transformer, vae, text_encoder)):
        randomize(m, 20 + i)
    pipe = diffusers.WanPipeline(tokenizer=None, text_encoder=text_encoder, vae=vae, transformer=transformer,
                                 scheduler=diffusers.FlowMatchEulerDiscreteScheduler(shift=WAN_SHIFT))
    pipe.save_pretrained(path)
    return pipe


def flow_match_euler_schedule(steps, n=1000, shift=WAN_SHIFT):
    """FlowMatchEulerDiscreteScheduler.set_timesteps (static shift, no dynamic shifting): timesteps
    from sigma_max to sigma_min (the shifted training sigmas' ends) in `steps`, shifted again, and
    the sigmas with a final 0."""
    shifted = lambda s: shift * s / (1 + (shift - 1) * s)  # noqa: E731
    sigma_max, sigma_min = shifted(1.0), shifted(1.0 / n)
    sigmas = shifted(np.linspace(sigma_max * n, sigma_min * n, steps) / n).astype(np.float32)
    return sigmas * n, np.append(sigmas, np.float32(0.0))


def test_wan_pipeline_flow_match_loop(tmp_path):
    """The Wan-like pipeline builds with one command (text_encoder: the UMT5 encoder alone; vae: both
    graphs); 4 flow-matching Euler steps run in onnxruntime over its text_encoder, transformer and
    vae_decoder graphs, the scheduler in numpy: the final latent equals WanPipeline's for the same
    prompt embeddings and initial latents, and the decoded video (latents * latents_std +
    latents_mean) AutoencoderKLWan.decode's, within 1e-4 of their scales."""
    pipe = tiny_wan_pipeline(tmp_path / "pipe")
    r = H.run_mobius("build", tmp_path / "pipe", tmp_path / "out")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    manifest = json.loads((tmp_path / "out/mobius_manifest.json").read_text())["components"]
    assert manifest["text_encoder"]["built"] == ["text_encoder"], manifest
    assert manifest["transformer"]["built"] == ["transformer"] and manifest["vae"]["built"] == ["vae_encoder",
                                                                                               "vae_decoder"]
    session = lambda c: ort.InferenceSession(str(tmp_path / "out" / c / "model.onnx"),  # noqa: E731
                                             providers=["CPUExecutionProvider"])
    text, transformer, vae = session("text_encoder"), session("transformer"), session("vae_decoder")
    rng = np.random.default_rng(5)
    input_ids = rng.integers(2, 100, size=(1, 6)).astype(np.int64)
    latents = rng.standard_normal((1, 4, 3, 4, 8)).astype(np.float32)  # 9 frames of 16 x 32 (WanPipeline: multiples of 16)
    with torch.no_grad():
        embeds = pipe.text_encoder(torch.from_numpy(input_ids)).last_hidden_state
        want = pipe(prompt_embeds=embeds, latents=torch.from_numpy(latents), height=16, width=32, num_frames=9,
                    num_inference_steps=STEPS, guidance_scale=1.0, output_type="latent").frames.numpy()
        c = pipe.vae.config
        mean, std = (torch.tensor(v).view(1, c.z_dim, 1, 1, 1) for v in (c.latents_mean, c.latents_std))
        want_video = pipe.vae.decode(torch.from_numpy(want) * std + mean).sample.numpy()
    hidden = text.run(["last_hidden_state"], feeds(text, input_ids=input_ids))[0]
    assert_close(hidden, embeds.numpy(), "text_encoder last_hidden_state")
    timesteps, sigmas = flow_match_euler_schedule(STEPS)
    np.testing.assert_allclose(timesteps, pipe.scheduler.timesteps.numpy(), rtol=1e-6)  # the schedule as diffusers'
    x = latents
    for i, t in enumerate(timesteps):
        v = transformer.run(["out_hidden_states"], feeds(transformer, hidden_states=x, timestep=np.array([t]),
                                                         encoder_hidden_states=hidden))[0]
        x = (x + (sigmas[i + 1] - sigmas[i]) * v).astype(np.float32)
    assert_close(x, want, "final latent")
    z = x * np.array(c.latents_std, np.float32).reshape(1, -1, 1, 1, 1) + np.array(c.latents_mean, np.float32).reshape(
        1, -1, 1, 1, 1)
    video = vae.run(["sample"], feeds(vae, latent_sample=z))[0]
    assert_close(video, want_video, "decoded video")
