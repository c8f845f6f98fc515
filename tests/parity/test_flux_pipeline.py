"""A Flux-like diffusers pipeline folder built with one command (src/driver/pipeline.h) and run end to
end: a tiny FluxPipeline made by diffusers itself (FluxTransformer2DModel with guidance,
AutoencoderKL, CLIPTextModel, T5EncoderModel, FlowMatchEulerDiscreteScheduler with dynamic shifting;
fixed seed, every parameter re-randomized, save_pretrained) is built by `mobius build PIPELINE OUT`
into Optimum's ORTFluxPipeline layout (transformer/, text_encoder/, text_encoder_2/, vae_encoder/,
vae_decoder/, each with its config.json; model_index.json; the scheduler folder copied). A 4-step
flow-matching Euler loop runs in onnxruntime over the package's text_encoder, text_encoder_2,
transformer and vae_decoder graphs, the scheduler written here in numpy (FluxPipeline's sigmas
linspace(1, 1/4, 4), shifted by mu = calculate_shift(image tokens)). The final (packed) latent equals
the one FluxPipeline gives for the same token ids and initial latents, and the decoded image
AutoencoderKL.decode's of the unpacked, unscaled latent, each within 1e-4 relative to its scale (the
largest magnitude of the reference). The pooled CLIP embedding is text_encoder's pooler_output
(a pipeline's CLIPTextModel gives it, as ORTFluxPipeline reads it), here eos_token_id 2's rule: the
state at the largest id."""

import json
import math

import numpy as np
import onnxruntime as ort
import pytest
import torch

import harness as H
from test_diffusion_pipeline import assert_close, feeds, randomize

diffusers = pytest.importorskip("diffusers")

STEPS = 4
SCHEDULER = dict(num_train_timesteps=1000, shift=3.0, use_dynamic_shifting=True, base_shift=0.5, max_shift=1.15,
                 base_image_seq_len=256, max_image_seq_len=4096)
HEIGHT = WIDTH = 16  # pixels: an 8 x 8 latent (vae_scale_factor 2), 4 x 4 packed tokens
LATENT_CHANNELS = 4
GUIDANCE = 3.5


def tiny_pipeline(path):
    from transformers import CLIPTextConfig, CLIPTextModel, T5Config, T5EncoderModel

    torch.manual_seed(0)
    transformer = diffusers.FluxTransformer2DModel(
        patch_size=1, in_channels=4 * LATENT_CHANNELS, num_layers=1, num_single_layers=2, attention_head_dim=8,
        num_attention_heads=2, joint_attention_dim=20, pooled_projection_dim=24, guidance_embeds=True,
        axes_dims_rope=(2, 2, 4))
    vae = diffusers.AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=LATENT_CHANNELS, block_out_channels=(16, 32), layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, norm_num_groups=8,
        use_quant_conv=False, use_post_quant_conv=False, scaling_factor=0.3611, shift_factor=0.1159)
    text_encoder = CLIPTextModel(CLIPTextConfig(vocab_size=100, hidden_size=24, intermediate_size=40,
                                                num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=16,
                                                bos_token_id=0, eos_token_id=2, pad_token_id=1))
    text_encoder_2 = T5EncoderModel(T5Config(vocab_size=100, d_model=20, d_kv=5, d_ff=32, num_layers=2, num_heads=4,
                                             relative_attention_num_buckets=8, relative_attention_max_distance=16,
                                             feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                                             pad_token_id=0, eos_token_id=1, decoder_start_token_id=0))
    for i, m in enumerate((transformer, vae, text_encoder, text_encoder_2)):
        randomize(m, 20 + i)
        m.eval()  # T5's dropout_rate 0.1 (a model made by its constructor is in training mode)
    pipe = diffusers.FluxPipeline(
        scheduler=diffusers.FlowMatchEulerDiscreteScheduler(**SCHEDULER), vae=vae, text_encoder=text_encoder,
        tokenizer=None, text_encoder_2=text_encoder_2, tokenizer_2=None, transformer=transformer)
    pipe.save_pretrained(path)
    return pipe


def flow_match_sigmas(image_seq_len: int) -> np.ndarray:
    """FluxPipeline's sigmas through FlowMatchEulerDiscreteScheduler.set_timesteps (dynamic shifting,
    exponential time shift by mu), with the terminal 0 appended, in float32 as the scheduler keeps them."""
    sigmas = np.linspace(1.0, 1 / STEPS, STEPS).astype(np.float32)
    m = (SCHEDULER["max_shift"] - SCHEDULER["base_shift"]) / (SCHEDULER["max_image_seq_len"] - SCHEDULER["base_image_seq_len"])
    mu = image_seq_len * m + SCHEDULER["base_shift"] - m * SCHEDULER["base_image_seq_len"]
    shifted = math.exp(mu) / (math.exp(mu) + (1 / sigmas - 1))  # float32, as the scheduler's time_shift
    return np.append(shifted.astype(np.float32), np.float32(0.0))


def image_ids(h: int, w: int) -> np.ndarray:
    """FluxPipeline._prepare_latent_image_ids of the packed grid: [0, row, column] per token."""
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return np.stack([np.zeros(h * w), rows.ravel(), cols.ravel()], axis=1).astype(np.float32)


def unpack(latents: np.ndarray, h: int, w: int) -> np.ndarray:
    """FluxPipeline._unpack_latents: [batch, (h/2)(w/2), c*4] -> [batch, c, h, w]."""
    b, _, ch = latents.shape
    x = latents.reshape(b, h // 2, w // 2, ch // 4, 2, 2).transpose(0, 3, 1, 4, 2, 5)
    return x.reshape(b, ch // 4, h, w)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("flux")
    pipe = tiny_pipeline(root / "pipe")
    r = H.run_mobius("build", root / "pipe", root / "out")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr  # every tensor read
    return pipe, root / "pipe", root / "out"


def test_package_layout(built):
    _, src, out = built
    files = H.package_files(out)
    for comp in ("transformer", "vae_encoder", "vae_decoder", "text_encoder", "text_encoder_2"):
        assert {f"{comp}/model.onnx", f"{comp}/model.onnx_data", f"{comp}/config.json"} <= files, files
    assert (out / "transformer/config.json").read_bytes() == (src / "transformer/config.json").read_bytes()
    assert (out / "text_encoder_2/config.json").read_bytes() == (src / "text_encoder_2/config.json").read_bytes()
    assert (out / "model_index.json").read_bytes() == (src / "model_index.json").read_bytes()
    manifest = json.loads((out / "mobius_manifest.json").read_text())["components"]
    assert manifest["transformer"]["built"] == ["transformer"] and manifest["text_encoder_2"]["built"] == ["text_encoder_2"]
    assert manifest["scheduler"] == {"copied": ["scheduler_config.json"]}
    assert manifest["tokenizer_2"] == {"absent": True}


def test_four_step_flow_match_loop_equals_diffusers(built):
    pipe, _, out = built
    rng = np.random.default_rng(0)
    clip_ids = rng.integers(3, 100, size=(1, 7)).astype(np.int64)
    t5_ids = rng.integers(2, 100, size=(1, 6)).astype(np.int64)
    h = w = 2 * (HEIGHT // 4)  # the latent grid (vae_scale_factor 2)
    latents = rng.standard_normal((1, (h // 2) * (w // 2), 4 * LATENT_CHANNELS)).astype(np.float32)

    with torch.no_grad():
        pooled = pipe.text_encoder(torch.from_numpy(clip_ids)).pooler_output
        embeds = pipe.text_encoder_2(torch.from_numpy(t5_ids)).last_hidden_state
        want = pipe(prompt_embeds=embeds, pooled_prompt_embeds=pooled, latents=torch.from_numpy(latents),
                    height=HEIGHT, width=WIDTH, num_inference_steps=STEPS, guidance_scale=GUIDANCE,
                    output_type="latent").images.numpy()
        unpacked = torch.from_numpy(unpack(want, h, w))
        vae_cfg = pipe.vae.config
        want_image = pipe.vae.decode(unpacked / vae_cfg.scaling_factor + vae_cfg.shift_factor).sample.numpy()

    session = lambda c: ort.InferenceSession(str(out / c / "model.onnx"), providers=["CPUExecutionProvider"])  # noqa: E731
    clip, t5 = session("text_encoder"), session("text_encoder_2")
    transformer, vae = session("transformer"), session("vae_decoder")
    # CLIPTextTransformer's pooling with eos_token_id 2 (the configs before transformers PR #24773):
    # the token of the largest id
    got_pooled = clip.run(["pooler_output"], feeds(clip, input_ids=clip_ids))[0]
    assert_close(got_pooled, pooled.numpy(), "text_encoder pooler_output")
    hidden = t5.run(["last_hidden_state"], feeds(t5, input_ids=t5_ids))[0]
    assert_close(hidden, embeds.numpy(), "text_encoder_2 last_hidden_state")

    sigmas = flow_match_sigmas(latents.shape[1])
    x = latents
    for i in range(STEPS):
        t = np.float32(sigmas[i] * np.float32(1000))  # the scheduler's timestep, then / 1000 as the pipeline feeds it
        v = transformer.run(["out_hidden_states"], feeds(
            transformer, hidden_states=x, encoder_hidden_states=hidden, pooled_projections=got_pooled,
            timestep=np.array([t / np.float32(1000)]), img_ids=image_ids(h // 2, w // 2),
            txt_ids=np.zeros((t5_ids.shape[1], 3)), guidance=np.array([GUIDANCE])))[0]
        x = (x + (sigmas[i + 1] - sigmas[i]) * v).astype(np.float32)
    assert_close(x, want, "final latent")
    image = vae.run(["sample"], feeds(vae, latent_sample=unpack(x, h, w) / vae_cfg.scaling_factor + vae_cfg.shift_factor))[0]
    assert_close(image, want_image, "decoded image")
