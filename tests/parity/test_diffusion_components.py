"""diffusers components built alone from their folder (`mobius build DIR OUT`), run in onnxruntime
against diffusers' own forward (diffusion_harness): AutoencoderKL's and AutoencoderTiny's
vae_encoder and vae_decoder graphs with Optimum's I/O names (sample -> latent_parameters, or
latents for the tiny VAE; latent_sample -> sample; AutoencoderKLWan's and AutoencoderKLCogVideoX's over
[batch, channels, frames, height, width] clips), UNet2DConditionModel's unet graph (sample,
timestep, encoder_hidden_states [, text_embeds, time_ids] -> out_sample), ControlNetModel's
controlnet graph (the UNet's inputs, controlnet_cond, conditioning_scale -> down_block_res_samples.{i},
mid_block_res_sample), T2IAdapter's adapter graph (sample -> adapter_state.{k}), the transformers'
transformer graph (Flux, SD3; DiT: hidden_states, timestep, class_labels; PixArt and Sana:
hidden_states, encoder_hidden_states, encoder_attention_mask, timestep [, PixArt's resolution,
aspect_ratio]; Wan: hidden_states [batch, channels, frames, height, width], timestep,
encoder_hidden_states [, encoder_hidden_states_image] -> out_hidden_states); float32 within
harness.TOL of the output's scale; --dtype f16: every checkpoint tensor an initializer of
exactly its float16 value, and the graphs run."""

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, numpy_helper
from safetensors.torch import load_file

import diffusion_harness as D
import harness as H

# SD 1.x/2.x/XL-style: quant_conv and post_quant_conv, 4 latent channels, an odd image side (the
# encoder's downsampling pads one row and column at the end); SD3 / Flux-style: 16 latent
# channels, no quant convs, shift_factor (read by the pipeline only); a mid block without attention,
# gelu and layers_per_block 1
VAE = dict(down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
           block_out_channels=(8, 16), layers_per_block=2, norm_num_groups=4, latent_channels=4)
ROWS = [
    D.Row("AutoencoderKL", "sd", dict(VAE), image=(18, 12), latent=(5, 3)),
    D.Row("AutoencoderKL", "sd3-flux-16ch",
          dict(VAE, down_block_types=("DownEncoderBlock2D",) * 3, up_block_types=("UpDecoderBlock2D",) * 3,
               block_out_channels=(8, 16, 16), latent_channels=16, use_quant_conv=False,
               use_post_quant_conv=False, scaling_factor=1.5305, shift_factor=0.0609),
          image=(16, 24), latent=(3, 4)),
    D.Row("AutoencoderKL", "no-mid-attention-gelu",
          dict(VAE, mid_block_add_attention=False, act_fn="gelu", layers_per_block=1, in_channels=4,
               out_channels=2), image=(8, 8), latent=(4, 2)),
]
# Wan2.1-VAE-like: a spatial then two spatio-temporal downsamplings (decoding: two temporal then a
# spatial upsampling), 13 video frames / 4 latent frames (every causal cache of diffusers' chunked
# encode and frame-by-frame decode reached), shortcut convolutions; one frame (an image: the
# first-frame paths alone), decoder_base_dim, other channel counts
WAN_VAE = dict(base_dim=8, z_dim=4, dim_mult=[1, 2, 2, 2], num_res_blocks=1, temperal_downsample=[False, True, True])
ROWS += [
    D.Row("AutoencoderKLWan", "wan21", dict(WAN_VAE), image=(16, 8), latent=(3, 2), frames=4),
    D.Row("AutoencoderKLWan", "one-frame-decoder-base-dim",
          dict(WAN_VAE, decoder_base_dim=4, out_channels=2, in_channels=2), image=(8, 16), latent=(1, 2), frames=1),
]
# CogVideoX-VAE-like: two spatio-temporal downsamplings (decoding: two temporal upsamplings), 17 video
# frames (diffusers' encode batches of 9 and 8 frames) / 5 latent frames (decode batches of 3 and 2:
# the odd first batch, the causal caches and the per-batch GroupNorm statistics); one temporal
# compression (a spatial-only downsampling and upsampling), 13 frames in one batch / 4 latent frames
# (two even batches), gelu, two resnets a block, a shortcut convolution, other channel counts; one
# frame (an image: the single-frame paths)
COG_VAE = dict(down_block_types=("CogVideoXDownBlock3D",) * 3, up_block_types=("CogVideoXUpBlock3D",) * 3,
               block_out_channels=(8, 16, 16), latent_channels=4, layers_per_block=1, norm_num_groups=4)
ROWS += [
    D.Row("AutoencoderKLCogVideoX", "cogvideox", dict(COG_VAE), image=(16, 8), latent=(2, 3), frames=5),
    D.Row("AutoencoderKLCogVideoX", "one-compression-even-latent-frames",
          dict(COG_VAE, temporal_compression_ratio=2, act_fn="gelu", layers_per_block=2, norm_eps=1e-5,
               block_out_channels=(8, 8, 16), in_channels=2, out_channels=3),
          image=(8, 12), latent=(3, 2), frames=4),
    D.Row("AutoencoderKLCogVideoX", "one-frame", dict(COG_VAE), image=(8, 8), latent=(2, 2), frames=1),
]
# TAESD-like: every block the same width (as diffusers requires), relu
TINY = dict(encoder_block_out_channels=(8, 8, 8), decoder_block_out_channels=(8, 8, 8),
            num_encoder_blocks=(1, 2, 1), num_decoder_blocks=(2, 1, 1), latent_channels=4)
ROWS += [
    D.Row("AutoencoderTiny", "taesd", dict(TINY), image=(16, 12), latent=(3, 5)),
    D.Row("AutoencoderTiny", "silu-4ch", dict(TINY, act_fn="silu", in_channels=4, out_channels=2, latent_channels=16),
          image=(8, 8), latent=(2, 2)),
]
# SD 1.x-style: cross-attention down, plain down; plain up, cross-attention up; conv projections,
# attention_head_dim as the head count (2 heads of 4 and 8); SD 2.x-style: linear projections, a
# per-block head count, 3 blocks, a sample not divisible by the upsamplings (the up blocks take the
# skip's size), one timestep for the batch; SDXL-style: text_time added embeddings, two
# transformer layers in a block, freq_shift 1 without flip
UNET = dict(block_out_channels=(8, 16), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
            up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), layers_per_block=1, attention_head_dim=2,
            cross_attention_dim=12, norm_num_groups=4, sample_size=8)
ROWS += [
    D.Row("UNet2DConditionModel", "sd15", dict(UNET, layers_per_block=2), latent=(8, 6)),
    D.Row("UNet2DConditionModel", "sd2-linear-odd-size",
          dict(UNET, block_out_channels=(8, 16, 16), attention_head_dim=(2, 4, 2), use_linear_projection=True,
               down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"),
               up_block_types=("UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"), out_channels=3),
          latent=(7, 5), timestep=(421.0,)),
    D.Row("UNet2DConditionModel", "sdxl-text-time",
          dict(UNET, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
               up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), transformer_layers_per_block=(1, 2),
               use_linear_projection=True, addition_embed_type="text_time", addition_time_embed_dim=4,
               projection_class_embeddings_input_dim=10 + 6 * 4, flip_sin_to_cos=False, freq_shift=1),
          latent=(6, 8)),
]
# ControlNet (SD 1.x-like, the UNET's encoder half): a conditioning embedding downsampling by 4;
# SDXL-like: text_time, two transformer layers in the cross-attention block, linear projections,
# a BGR conditioning image embedded at the latent's size, one timestep for the batch
CONTROLNET = dict(block_out_channels=(8, 16), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                  layers_per_block=2, attention_head_dim=2, cross_attention_dim=12, norm_num_groups=4,
                  conditioning_embedding_out_channels=(4, 8, 8))
ROWS += [
    D.Row("ControlNetModel", "sd15", dict(CONTROLNET), latent=(4, 6)),
    D.Row("ControlNetModel", "sdxl-text-time-bgr",
          dict(CONTROLNET, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), layers_per_block=1,
               transformer_layers_per_block=(1, 2), use_linear_projection=True, addition_embed_type="text_time",
               addition_time_embed_dim=4, projection_class_embeddings_input_dim=10 + 6 * 4,
               controlnet_conditioning_channel_order="bgr", conditioning_embedding_out_channels=(4,),
               conditioning_channels=2),
          latent=(5, 3), timestep=(421.0,), conditioning_scale=0.5),
]
# T2IAdapter: FullAdapter (SD 1.x) with odd feature maps (the average pools' ceil mode), LightAdapter,
# FullAdapterXL
ADAPTER = dict(in_channels=3, channels=(8, 16, 16), num_res_blocks=2, downscale_factor=4)
ROWS += [
    D.Row("T2IAdapter", "full", dict(ADAPTER), image=(24, 20)),
    D.Row("T2IAdapter", "light", dict(ADAPTER, adapter_type="light_adapter", channels=(8, 16), num_res_blocks=1,
                                      downscale_factor=2, in_channels=1), image=(12, 20)),
    D.Row("T2IAdapter", "full-xl", dict(ADAPTER, adapter_type="full_adapter_xl", channels=(8, 16, 16, 16),
                                        num_res_blocks=1, downscale_factor=2), image=(8, 12)),
]
# Flux.1-dev-like: guidance embedding, double and single blocks, three RoPE axes (2 + 2 + 4 = the
# head); Flux.1-schnell-like: no guidance, patch_size 2 and out_channels (proj_out 2 * 2 * 3 wide),
# two axes, single-stream blocks only after one double block
FLUX = dict(patch_size=1, in_channels=8, num_layers=2, num_single_layers=2, attention_head_dim=8,
            num_attention_heads=2, joint_attention_dim=12, pooled_projection_dim=10, guidance_embeds=True,
            axes_dims_rope=(2, 2, 4))
ROWS += [
    D.Row("FluxTransformer2DModel", "dev-guidance", dict(FLUX), latent=(3, 4), timestep=(0.9, 0.25)),
    D.Row("FluxTransformer2DModel", "schnell-patch2",
          dict(FLUX, guidance_embeds=False, patch_size=2, out_channels=3, num_layers=1, num_single_layers=3,
               num_attention_heads=3, attention_head_dim=6, axes_dims_rope=(2, 4)),
          latent=(2, 5), timestep=(0.5,), text_len=3),
]
# SD3-like: patch 2, the 6 x 6 position table cropped to a 3 x 2 patch grid (top 1, left 2),
# caption_projection_dim = the width, the last block context_pre_only; SD3.5-like: RMSNorm q / k,
# dual attention (attn2) in blocks 0 and 1 of 3, out_channels 3, one timestep for the batch
SD3 = dict(sample_size=8, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=2,
           joint_attention_dim=12, caption_projection_dim=16, pooled_projection_dim=10, out_channels=4,
           pos_embed_max_size=6)
ROWS += [
    D.Row("SD3Transformer2DModel", "sd3", dict(SD3), latent=(6, 4)),
    D.Row("SD3Transformer2DModel", "sd35-dual-qk-norm",
          dict(SD3, num_layers=3, dual_attention_layers=(0, 1), qk_norm="rms_norm", out_channels=3),
          latent=(4, 4), timestep=(500.0,)),
]
# DiT-XL-like: patch 2 at sample_size (the position table of diffusers' buffer), the unconditional
# class (num_embeds_ada_norm) in the batch; learned-sigma-like: out_channels 2 * in_channels, affine
# norm2 / norm3, no attention bias, patch 1 on a 6 x 6 latent (positions recomputed for another size)
DIT = dict(num_attention_heads=2, attention_head_dim=8, in_channels=4, num_layers=2, sample_size=8, patch_size=2,
           num_embeds_ada_norm=10)
ROWS += [
    D.Row("DiTTransformer2DModel", "dit", dict(DIT), latent=(8, 8), class_labels=(3, 10)),
    D.Row("DiTTransformer2DModel", "sigma-affine-other-size",
          dict(DIT, out_channels=8, norm_elementwise_affine=True, attention_bias=False, patch_size=1, num_layers=1),
          latent=(6, 6), timestep=(500.0,)),
]
# PixArt-α-512-like: caption projection, a padded prompt, a non-square latent; PixArt-α-1024-like:
# resolution and aspect-ratio conditions (width 12, a multiple of 3), interpolation_scale 2; no caption
# projection: attn2 reads encoder_hidden_states of cross_attention_dim 10, affine norms, no attention bias
PIXART = dict(num_attention_heads=2, attention_head_dim=6, in_channels=4, out_channels=8, num_layers=2,
              cross_attention_dim=12, caption_channels=10, sample_size=8, patch_size=2)
ROWS += [
    D.Row("PixArtTransformer2DModel", "alpha-512", dict(PIXART), latent=(8, 6)),
    D.Row("PixArtTransformer2DModel", "alpha-1024-size-conditions",
          dict(PIXART, use_additional_conditions=True, interpolation_scale=2, num_layers=1), latent=(6, 4),
          timestep=(250.0,)),
    D.Row("PixArtTransformer2DModel", "no-caption-affine",
          dict(PIXART, caption_channels=None, cross_attention_dim=10, norm_elementwise_affine=True,
               attention_bias=False, out_channels=None, num_layers=1), latent=(4, 4)),
]
# Sana-1600M-like: no position table (interpolation_scale null), patch 1, cross-attention heads of
# another width than the self-attention's, mlp_ratio 2.5 (GLUMBConv hidden 40); with positions:
# interpolation_scale 1 on a 4 x 3 patch grid of an 8-sample model, patch 2, affine norm2, attention
# bias, out_channels 3
SANA = dict(in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=8, num_layers=2,
            num_cross_attention_heads=2, cross_attention_head_dim=6, cross_attention_dim=16, caption_channels=10,
            mlp_ratio=2.5, sample_size=8, patch_size=1)
ROWS += [
    D.Row("SanaTransformer2DModel", "sana", dict(SANA), latent=(6, 5)),
    D.Row("SanaTransformer2DModel", "positions-patch2-affine",
          dict(SANA, interpolation_scale=1, patch_size=2, norm_elementwise_affine=True, attention_bias=True,
               out_channels=3, num_layers=1), latent=(8, 6), timestep=(500.0, 250.0)),
]
# Wan2.1-T2V-like: patch (1, 2, 2) over 3 frames of a 4 x 6 latent (a 3 x 2 x 3 grid: every RoPE axis
# rotates; heads of 12: 4 frame, 4 row, 4 column channels), cross_attn_norm; Wan2.1-I2V-like: the
# image branch (image_embedder, add_k_proj / add_v_proj with norm_added_k) on 512 text tokens (the
# length diffusers' processor assumes), no cross_attn_norm, patch (2, 2, 1), heads of 10 (6 + 2 + 2),
# out_channels 3, one timestep for the batch
WAN = dict(patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=12, in_channels=4, out_channels=4,
           text_dim=10, freq_dim=16, ffn_dim=32, num_layers=2)
ROWS += [
    D.Row("WanTransformer3DModel", "t2v", dict(WAN), latent=(4, 6), frames=3, timestep=(999.0, 17.0)),
    D.Row("WanTransformer3DModel", "i2v-image-branch",
          dict(WAN, patch_size=(2, 2, 1), attention_head_dim=10, out_channels=3, num_layers=1, cross_attn_norm=False,
               image_dim=6, added_kv_proj_dim=20),
          latent=(4, 3), frames=4, text_len=512, image_len=3, timestep=(421.0,)),
]
IDS = [f"{r.class_name}-{r.variant}" for r in ROWS]
FIRST = 1_000_000  # the rows' order in the parity table: after the transformers types' rows
TASKS = {"ControlNetModel": "diffusion-controlnet", "T2IAdapter": "diffusion-adapter",
         "AutoencoderKLWan": "diffusion-vae", "AutoencoderKLCogVideoX": "diffusion-vae",
         "AutoencoderKL": "diffusion-vae", "AutoencoderTiny": "diffusion-vae",
         "UNet2DConditionModel": "diffusion-denoiser", "FluxTransformer2DModel": "diffusion-denoiser",
         "SD3Transformer2DModel": "diffusion-denoiser", "DiTTransformer2DModel": "diffusion-denoiser",
         "PixArtTransformer2DModel": "diffusion-denoiser", "SanaTransformer2DModel": "diffusion-denoiser",
         "WanTransformer3DModel": "diffusion-denoiser"}
# the f16 rows: one of each class
F16_ROWS = [r for r in ROWS if r.variant in ("sd", "taesd", "sd15", "full", "dev-guidance", "sd3", "dit", "alpha-512",
                                             "sana", "t2v", "wan21", "cogvideox")]


@pytest.mark.parametrize("index,row", [(FIRST + i, r) for i, r in enumerate(ROWS)], ids=IDS)
def test_float32_parity(index, row, tmp_path):
    """Every graph of the component against diffusers' float64 forward, max|Δ| <= 1e-4 x the
    output's scale; the row (its worst output) goes to the parity table (docs/models.md)."""
    with H.recorded(index, row.class_name, row.variant) as rec:
        rec["relative"] = True
        model = D.write_component(row, tmp_path / "component")
        H.build(tmp_path / "component", tmp_path / "onnx")  # the component folder alone, default options
        failures, paths = [], []
        for name, (feeds, want) in D.references(model, row).items():
            path = D.graph(tmp_path / "onnx", name)
            paths.append(path)
            failures += H.check_model(path, rec)
            meta = {p.key: p.value for p in onnx.load(str(path), load_external_data=False).metadata_props}
            if (meta.get("model_type"), meta.get("task")) != (row.class_name, TASKS[row.class_name]):
                failures.append(f"{name}: metadata model_type/task {meta.get('model_type')}/{meta.get('task')}")
            sess = H.ort_session(path)
            problems = H.io_problems(sess, set(feeds), set(want))
            if problems:
                failures += [f"{name}: {p}" for p in problems]
                continue
            outs = sorted(want)
            for out, got in zip(outs, sess.run(outs, feeds)):
                if (f := D.compare(got, want[out], f"{name}.{out}", rec)) is not None:
                    failures.append(f)
        if unread := D.unread_tensors(tmp_path / "component", paths):
            failures.append(f"checkpoint tensors no graph reads: {unread}")
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, failures


def test_components_listed_are_verified():
    """`mobius list components` is the diffusers registry: every class it prints has float32 parity
    rows here, with the task its graphs declare."""
    r = H.run_mobius("list", "components")
    assert r.returncode == 0, r.stderr
    listed = {cols[0]: cols[2] for cols in (line.split() for line in r.stdout.splitlines()[1:]) if cols}
    assert listed == TASKS, f"listed {listed}, rows and tasks here {TASKS}"
    assert listed.keys() == {r.class_name for r in ROWS}


@pytest.mark.parametrize("row", F16_ROWS, ids=[f"{r.class_name}-{r.variant}" for r in F16_ROWS])
def test_float16_build(row, tmp_path):
    model = D.write_component(row, tmp_path / "component")
    H.build(tmp_path / "component", tmp_path / "onnx", "--dtype", "f16")
    source = {k: v for f in (tmp_path / "component").glob("*.safetensors") for k, v in load_file(f).items()}
    bad, seen = [], set()
    for name, (feeds, want) in D.references(model, row).items():
        path = D.graph(tmp_path / "onnx", name)
        onnx.checker.check_model(str(path), full_check=True)
        for t in onnx.load(str(path), load_external_data=False).graph.initializer:
            if t.name not in source:
                continue
            seen.add(t.name)
            expected = source[t.name].to(torch.float16).view(torch.int16).numpy().view(np.uint16)
            got = numpy_helper.to_array(t, base_dir=str(path.parent)).view(np.uint16)
            transposed = expected.ndim == 2 and np.array_equal(got, expected.T)  # Linear weights [in, out]
            if t.data_type != TensorProto.FLOAT16 or not (np.array_equal(got, expected) or transposed):
                bad.append(t.name)
        sess = H.ort_session(path)
        f16 = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feeds.items()}  # int64 as is
        for out, got in zip(sorted(want), sess.run(sorted(want), f16)):
            if got.dtype != np.float16 or got.shape != want[out].shape or not np.all(np.isfinite(got)):
                bad.append(f"{name}.{out}: {got.dtype} {got.shape}")
    assert not bad, bad
    assert seen == set(source), f"checkpoint tensors without an initializer: {sorted(set(source) - seen)}"


def test_diffusers_defaults_generated():
    """src/registry/diffusers_defaults.inc is what scripts/gen_diffusers_defaults.py derives from the
    installed diffusers and the fields src/ reads."""
    r = subprocess.run([sys.executable, str(H.REPO / "scripts" / "gen_diffusers_defaults.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("config,message", [
    ({"_class_name": "UNetMotionModel"}, "field '_class_name': diffusers class 'UNetMotionModel' is not supported yet"),
    (dict(CONTROLNET, _class_name="ControlNetModel", global_pool_conditions=True), "field 'global_pool_conditions'"),
    (dict(CONTROLNET, _class_name="ControlNetModel", conditioning_embedding_out_channels=[]),
     "field 'conditioning_embedding_out_channels'"),
    (dict(ADAPTER, _class_name="T2IAdapter", adapter_type="other"), "field 'adapter_type'"),
    (dict(ADAPTER, _class_name="T2IAdapter", adapter_type="full_adapter_xl", channels=(8, 16, 16, 8)),
     "field 'channels'"),
    (dict(UNET, _class_name="UNet2DConditionModel", class_embed_type="timestep"), "field 'class_embed_type'"),
    (dict(UNET, _class_name="UNet2DConditionModel", attention_head_dim=3), "field 'attention_head_dim'"),
    (dict(VAE, _class_name="AutoencoderKL", norm_num_groups=3), "field 'block_out_channels'"),
    (dict(VAE, _class_name="AutoencoderKL", layers_per_block=0), "field 'layers_per_block'"),
    (dict(TINY, _class_name="AutoencoderTiny", upsample_fn="bilinear"), "field 'upsample_fn'"),
    (dict(FLUX, _class_name="FluxTransformer2DModel", axes_dims_rope=(2, 2, 2)), "field 'axes_dims_rope'"),
    (dict(FLUX, _class_name="FluxTransformer2DModel", num_attention_heads=0), "field 'num_attention_heads'"),
    (dict(SD3, _class_name="SD3Transformer2DModel", caption_projection_dim=12), "field 'caption_projection_dim'"),
    (dict(SD3, _class_name="SD3Transformer2DModel", qk_norm="layer_norm"), "field 'qk_norm'"),
    (dict(DIT, _class_name="DiTTransformer2DModel", norm_type="ada_norm"), "field 'norm_type'"),
    (dict(DIT, _class_name="DiTTransformer2DModel", attention_head_dim=3), "field 'num_attention_heads'"),
    (dict(PIXART, _class_name="PixArtTransformer2DModel", attention_head_dim=4, use_additional_conditions=True),
     "field 'use_additional_conditions'"),
    (dict(PIXART, _class_name="PixArtTransformer2DModel", cross_attention_dim=10), "field 'cross_attention_dim'"),
    (dict(SANA, _class_name="SanaTransformer2DModel", guidance_embeds=True), "field 'guidance_embeds'"),
    (dict(WAN, _class_name="WanTransformer3DModel", image_dim=6, added_kv_proj_dim=20, pos_embed_seq_len=6),
     "field 'pos_embed_seq_len'"),
    (dict(WAN, _class_name="WanTransformer3DModel", image_dim=6, added_kv_proj_dim=6), "field 'added_kv_proj_dim'"),
    (dict(WAN, _class_name="WanTransformer3DModel", patch_size=(2, 2)), "field 'patch_size'"),
    (dict(WAN_VAE, _class_name="AutoencoderKLWan", is_residual=True), "field 'is_residual'"),
    (dict(WAN_VAE, _class_name="AutoencoderKLWan", temperal_downsample=[True, True]), "field 'temperal_downsample'"),
    (dict(WAN_VAE, _class_name="AutoencoderKLWan", attn_scales=[1.0]), "field 'attn_scales'"),
    (dict(COG_VAE, _class_name="AutoencoderKLCogVideoX", use_quant_conv=True), "field 'use_quant_conv'"),
    (dict(COG_VAE, _class_name="AutoencoderKLCogVideoX", temporal_compression_ratio=16),
     "field 'temporal_compression_ratio'"),
    (dict(COG_VAE, _class_name="AutoencoderKLCogVideoX", norm_num_groups=3), "field 'block_out_channels'"),
], ids=["unknown-class", "controlnet-global-pool", "controlnet-no-embedding", "adapter-type", "adapter-xl-widths",
        "unet-class-embed", "unet-heads", "vae-groups", "vae-layers", "tiny-bilinear", "flux-rope-axes",
        "flux-heads", "sd3-caption-width", "sd3-qk-layer-norm",
        "dit-norm-type", "dit-width", "pixart-size-conditions-width", "pixart-caption-width",
        "sana-guidance", "wan-flf2v-positions", "wan-image-kv-width", "wan-patch-2d",
        "wan-vae-residual", "wan-vae-temporal-list", "wan-vae-encoder-attention", "cogvideox-vae-quant-conv",
        "cogvideox-vae-time-compression", "cogvideox-vae-groups"])
def test_refused_configs(config, message, tmp_path):
    """A component whose class is not registered, or whose config asks for a mechanism mobius does not
    build or is out of range, is refused naming config.json and the field; nothing is written."""
    (tmp_path / "component").mkdir()
    (tmp_path / "component" / "config.json").write_text(json.dumps(config))
    r = H.run_mobius("build", tmp_path / "component", tmp_path / "onnx", "--no-weights")
    assert r.returncode != 0 and "config.json" in r.stderr and message in r.stderr, r.stderr
    assert not (tmp_path / "onnx").exists()


# Flux: the rotary q / k too; PixArt: the cross-attention's padding bias
CPU_ROWS = [r for r in ROWS if r.variant in ("sd", "sd15", "sd3", "dev-guidance", "alpha-512")]


@pytest.mark.parametrize("index,row", [(FIRST + len(ROWS) + i, r) for i, r in enumerate(CPU_ROWS)],
                         ids=[f"{r.class_name}-{r.variant}" for r in CPU_ROWS])
def test_cpu_lowering(index, row, tmp_path):
    """--ep cpu: every attention of the graphs is com.microsoft MultiHeadAttention, within the same
    tolerance of diffusers."""
    with H.recorded(index, row.class_name, f"{row.variant}@ep-cpu") as rec:
        rec["relative"] = True
        model = D.write_component(row, tmp_path / "component")
        H.build(tmp_path / "component", tmp_path / "onnx", "--ep", "cpu")
        failures = []
        for name, (feeds, want) in D.references(model, row).items():
            path = D.graph(tmp_path / "onnx", name)
            failures += H.attention_lowering_problems(path)
            outs = sorted(want)
            for out, got in zip(outs, H.ort_session(path).run(outs, feeds)):
                if (f := D.compare(got, want[out], f"{name}.{out}", rec)) is not None:
                    failures.append(f)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, failures
