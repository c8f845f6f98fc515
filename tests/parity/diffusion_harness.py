"""Parity harness of the diffusers components (registry/diffusers_registry.h): a tiny component
made by diffusers itself (seed 0, every parameter re-randomized, ModelMixin.save_pretrained:
config.json with _class_name, diffusion_pytorch_model.safetensors) -> `mobius build DIR OUT` ->
onnxruntime vs diffusers' own forward.

The reference is the diffusers model in float64 (as harness.float64 is for transformers: a row's
error is mobius' float32 error alone); the check is max|Δ| <= harness.TOL * scale, scale = the
largest |reference| of the output (the outputs of a re-randomized VAE are not of order 1).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import diffusers
import numpy as np
import onnx
import torch
from safetensors import safe_open

import harness as H


@dataclasses.dataclass(frozen=True)
class Row:
    class_name: str
    variant: str
    config: dict  # the diffusers class' __init__ kwargs
    image: tuple[int, int] = (8, 8)  # a VAE encoder's or a T2IAdapter's input height, width
    latent: tuple[int, int] = (4, 4)  # a VAE decoder's and a UNet's input height, width
    frames: int = 3  # a video transformer's latent frames
    image_len: int = 3  # a Wan I2V transformer's encoder_hidden_states_image length
    text_len: int = 5  # a UNet's encoder_hidden_states length
    timestep: tuple[float, ...] = (999.0, 17.0)  # a UNet's timestep: BATCH entries, or 1 (broadcast)
    guidance: tuple[float, ...] = (3.5, 1.0)  # a Flux transformer's guidance (guidance_embeds only)
    class_labels: tuple[int, ...] = (3, 0)  # a DiT transformer's class_labels, BATCH entries
    conditioning_scale: float = 0.75  # a ControlNet's conditioning_scale


BATCH = 2


@torch.no_grad()
def rerandomize(model: torch.nn.Module) -> None:
    """Every parameter replaced: norm weights 1 + 0.1 r and every bias 0.1 r (GroupNorm's too, so
    that a dropped affine cannot match), convolution and linear weights r / sqrt(fan_in) (fan_in:
    in_channels * kernel height * kernel width; an adaptive norm's linear, norm1.linear, too)."""
    for name, p in model.named_parameters():
        r = torch.randn_like(p)
        if "norm" in name and name.endswith("weight") and p.ndim == 1:
            p.copy_(1.0 + 0.1 * r)
        elif p.ndim >= 2:
            p.copy_(r * p[0].numel() ** -0.5)
        else:
            p.copy_(0.1 * r)


def write_component(row: Row, out: Path):
    """The diffusers model of `row` (seed 0), re-randomized, saved to `out`; returns it."""
    torch.manual_seed(0)
    model = getattr(diffusers, row.class_name)(**row.config).eval()
    rerandomize(model)
    model.save_pretrained(out)
    return model


def graph(package: Path, name: str) -> Path:
    """The graph file of the package's graph `name` (vae_encoder, vae_decoder, unet), wherever its layout
    puts it."""
    found = [p for p in package.rglob("*.onnx") if name in p.relative_to(package).as_posix()]
    assert len(found) == 1, f"{package}: graph {name}: {found}"
    return found[0]


@torch.no_grad()
def references(model, row: Row, seed: int = 1) -> dict:
    """{graph name: (float32 feeds, {output: float64 reference})} of the component, from diffusers'
    own forward in float64 (the model is converted back to float32 after):
      AutoencoderKL: vae_encoder, encode(sample).latent_dist.parameters of a batch of images;
        vae_decoder, decode(latent_sample).sample of a batch of latents
      AutoencoderTiny: vae_encoder, encode(sample).latents; vae_decoder, decode(latent_sample).sample
      AutoencoderKLWan: vae_encoder, encode(sample).latent_dist.parameters of a batch of
        [in_channels, 1 + 4 (frames - 1), *image] clips; vae_decoder, decode(latent_sample).sample of a
        batch of [z_dim, frames, *latent] latents (diffusers' chunked encode and frame-by-frame decode,
        with their causal caches)
      AutoencoderKLCogVideoX: as AutoencoderKLWan, latent_channels for z_dim (diffusers' encode in
        batches of 8 frames and decode in batches of 2 latent frames, tiling off)
      UNet2DConditionModel: unet, forward(sample, timestep, encoder_hidden_states[,
        added_cond_kwargs text_embeds and time_ids]).sample
      ControlNetModel: controlnet, the UNet's inputs and controlnet_cond (the latent's size times
        the conditioning embedding's downsampling), conditioning_scale ->
        down_block_res_samples.{i}, mid_block_res_sample
      T2IAdapter: adapter, forward(sample) -> adapter_state.{k}, a batch of images
      FluxTransformer2DModel: transformer, forward(hidden_states, encoder_hidden_states,
        pooled_projections, timestep, img_ids, txt_ids[, guidance]).sample, latent = the packed
        latent grid (img_ids [0, row, column] as FluxPipeline makes them, plus a column offset so
        that every axis rotates; the last len(axes_dims_rope) of them), txt_ids of distinct values
        on every axis
      SD3Transformer2DModel: transformer, forward(hidden_states, encoder_hidden_states,
        pooled_projections, timestep).sample
      DiTTransformer2DModel: transformer, forward(hidden_states, timestep, class_labels).sample
      WanTransformer3DModel: transformer, forward(hidden_states [batch, in_channels, frames, *latent],
        timestep, encoder_hidden_states[, encoder_hidden_states_image with image_dim]).sample
      PixArtTransformer2DModel, SanaTransformer2DModel: transformer, forward(hidden_states,
        encoder_hidden_states, timestep, encoder_attention_mask with the last two tokens of the second
        prompt padding[, PixArt's added_cond_kwargs resolution and aspect_ratio with
        use_additional_conditions]).sample"""
    rng = np.random.default_rng(seed)
    c = model.config
    m64 = model.double()
    t64 = lambda a: torch.from_numpy(a).double()  # noqa: E731
    try:
        if row.class_name == "FluxTransformer2DModel":
            h, w = row.latent
            rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
            n = len(c.axes_dims_rope)  # the ids' columns: the last n of [0, row, column + 1]
            img_ids = np.stack([np.zeros(h * w), rows.ravel(), cols.ravel() + 1], axis=1)[:, -n:].astype(np.float32)
            txt_ids = (np.arange(row.text_len * n).reshape(row.text_len, n) % 7).astype(np.float32)
            feeds = {"hidden_states": rng.standard_normal((BATCH, h * w, c.in_channels)).astype(np.float32),
                     "encoder_hidden_states": rng.standard_normal((BATCH, row.text_len, c.joint_attention_dim))
                     .astype(np.float32),
                     "pooled_projections": rng.standard_normal((BATCH, c.pooled_projection_dim)).astype(np.float32),
                     "timestep": np.array(row.timestep, dtype=np.float32),
                     "img_ids": img_ids, "txt_ids": txt_ids}
            kwargs = {}
            if c.guidance_embeds:
                feeds["guidance"] = np.array(row.guidance, dtype=np.float32)
                kwargs["guidance"] = t64(feeds["guidance"])
            out = m64(t64(feeds["hidden_states"]), t64(feeds["encoder_hidden_states"]),
                      t64(feeds["pooled_projections"]), t64(feeds["timestep"]), t64(img_ids), t64(txt_ids),
                      **kwargs).sample
            return {"transformer": (feeds, {"out_hidden_states": out.numpy()})}
        if row.class_name == "SD3Transformer2DModel":
            feeds = {"hidden_states": rng.standard_normal((BATCH, c.in_channels, *row.latent)).astype(np.float32),
                     "encoder_hidden_states": rng.standard_normal((BATCH, row.text_len, c.joint_attention_dim))
                     .astype(np.float32),
                     "pooled_projections": rng.standard_normal((BATCH, c.pooled_projection_dim)).astype(np.float32),
                     "timestep": np.array(row.timestep, dtype=np.float32)}
            out = m64(**{k: t64(v) for k, v in feeds.items()}).sample
            return {"transformer": (feeds, {"out_hidden_states": out.numpy()})}
        if row.class_name == "WanTransformer3DModel":
            feeds = {"hidden_states": rng.standard_normal((BATCH, c.in_channels, row.frames, *row.latent))
                     .astype(np.float32),
                     "timestep": np.array(row.timestep, dtype=np.float32),
                     "encoder_hidden_states": rng.standard_normal((BATCH, row.text_len, c.text_dim)).astype(np.float32)}
            if c.image_dim:
                feeds["encoder_hidden_states_image"] = rng.standard_normal(
                    (BATCH, row.image_len, c.image_dim)).astype(np.float32)
            out = m64(**{k: t64(v) for k, v in feeds.items()}).sample
            return {"transformer": (feeds, {"out_hidden_states": out.numpy()})}
        if row.class_name == "DiTTransformer2DModel":
            feeds = {"hidden_states": rng.standard_normal((BATCH, c.in_channels, *row.latent)).astype(np.float32),
                     "timestep": np.array(row.timestep, dtype=np.float32),
                     "class_labels": np.array(row.class_labels, dtype=np.int64)}
            out = m64(t64(feeds["hidden_states"]), t64(feeds["timestep"]), torch.from_numpy(feeds["class_labels"])).sample
            return {"transformer": (feeds, {"out_hidden_states": out.numpy()})}
        if row.class_name in ("PixArtTransformer2DModel", "SanaTransformer2DModel"):
            mask = np.ones((BATCH, row.text_len), dtype=np.int64)
            mask[1, -2:] = 0
            feeds = {"hidden_states": rng.standard_normal((BATCH, c.in_channels, *row.latent)).astype(np.float32),
                     "encoder_hidden_states": rng.standard_normal(
                         (BATCH, row.text_len, c.caption_channels or c.cross_attention_dim)).astype(np.float32),
                     "encoder_attention_mask": mask, "timestep": np.array(row.timestep, dtype=np.float32)}
            kwargs = {}
            if getattr(model, "use_additional_conditions", False):
                feeds["resolution"] = np.array([[64, 48], [32, 40]], dtype=np.float32)
                feeds["aspect_ratio"] = np.array([[64 / 48], [32 / 40]], dtype=np.float32)
                kwargs["added_cond_kwargs"] = {"resolution": t64(feeds["resolution"]),
                                               "aspect_ratio": t64(feeds["aspect_ratio"])}
            out = m64(t64(feeds["hidden_states"]), t64(feeds["encoder_hidden_states"]), t64(feeds["timestep"]),
                      encoder_attention_mask=torch.from_numpy(mask), **kwargs).sample
            return {"transformer": (feeds, {"out_hidden_states": out.numpy()})}
        if row.class_name == "T2IAdapter":
            feeds = {"sample": rng.standard_normal((BATCH, c.in_channels, *row.image)).astype(np.float32)}
            return {"adapter": (feeds, {f"adapter_state.{k}": s.numpy() for k, s in enumerate(m64(t64(feeds["sample"])))})}
        if row.class_name in ("UNet2DConditionModel", "ControlNetModel"):
            feeds = {"sample": rng.standard_normal((BATCH, c.in_channels, *row.latent)).astype(np.float32),
                     "timestep": np.array(row.timestep, dtype=np.float32),
                     "encoder_hidden_states": rng.standard_normal((BATCH, row.text_len, c.cross_attention_dim))
                     .astype(np.float32)}
            kwargs = {}
            if c.addition_embed_type == "text_time":
                time_ids = 6 * c.addition_time_embed_dim
                feeds["text_embeds"] = rng.standard_normal(
                    (BATCH, c.projection_class_embeddings_input_dim - time_ids)).astype(np.float32)
                feeds["time_ids"] = np.array([[64, 48, 3, 0, 64, 48], [32, 40, 0, 5, 32, 40]], dtype=np.float32)
                kwargs["added_cond_kwargs"] = {"text_embeds": t64(feeds["text_embeds"]),
                                               "time_ids": t64(feeds["time_ids"])}
            args = (t64(feeds["sample"]), t64(feeds["timestep"]), t64(feeds["encoder_hidden_states"]))
            if row.class_name == "UNet2DConditionModel":
                return {"unet": (feeds, {"out_sample": m64(*args, **kwargs).sample.numpy()})}
            factor = 2 ** (len(c.conditioning_embedding_out_channels) - 1)
            feeds["controlnet_cond"] = rng.standard_normal(
                (BATCH, c.conditioning_channels, row.latent[0] * factor, row.latent[1] * factor)).astype(np.float32)
            feeds["conditioning_scale"] = np.array(row.conditioning_scale, dtype=np.float32)
            out = m64(*args, controlnet_cond=t64(feeds["controlnet_cond"]),
                      conditioning_scale=float(feeds["conditioning_scale"]), **kwargs)
            want = {f"down_block_res_samples.{i}": r.numpy() for i, r in enumerate(out.down_block_res_samples)}
            return {"controlnet": (feeds, dict(want, mid_block_res_sample=out.mid_block_res_sample.numpy()))}
        if row.class_name in ("AutoencoderKLWan", "AutoencoderKLCogVideoX"):  # clips of 1 + 4 k frames
            sample = rng.standard_normal((BATCH, c.in_channels, 1 + 4 * (row.frames - 1), *row.image)).astype(np.float32)
            z_dim = c.z_dim if row.class_name == "AutoencoderKLWan" else c.latent_channels
            latent = rng.standard_normal((BATCH, z_dim, row.frames, *row.latent)).astype(np.float32)
            return {"vae_encoder": ({"sample": sample},
                                    {"latent_parameters": m64.encode(t64(sample)).latent_dist.parameters.numpy()}),
                    "vae_decoder": ({"latent_sample": latent}, {"sample": m64.decode(t64(latent)).sample.numpy()})}
        sample = rng.standard_normal((BATCH, c.in_channels, *row.image)).astype(np.float32)
        latent = rng.standard_normal((BATCH, c.latent_channels, *row.latent)).astype(np.float32)
        encoded = m64.encode(t64(sample))
        if row.class_name == "AutoencoderKL":
            enc = {"latent_parameters": encoded.latent_dist.parameters.numpy()}
        else:
            enc = {"latents": encoded.latents.numpy()}
        decoded = m64.decode(t64(latent)).sample.numpy()
        return {"vae_encoder": ({"sample": sample}, enc), "vae_decoder": ({"latent_sample": latent}, {"sample": decoded})}
    finally:
        model.float()


def unread_tensors(component: Path, graphs: list[Path]) -> list[str]:
    """The checkpoint tensors of the component that no graph of the package has as an initializer
    (a weight the build would drop)."""
    keys = set()
    for f in component.glob("*.safetensors"):
        with safe_open(str(f), "pt") as st:
            keys |= set(st.keys())
    for g in graphs:
        keys -= {t.name for t in onnx.load(str(g), load_external_data=False).graph.initializer}
    return sorted(keys)


def compare(got: np.ndarray, want: np.ndarray, what: str, row: dict | None = None) -> str | None:
    """None when max|Δ| <= TOL * scale (scale: max|want|), else the failure, with the scale. `row` (a
    parity row, harness.recorded, relative): keeps the max|Δ| and scale of the output with the
    largest max|Δ| / scale in its "prefill" and "scale"."""
    if got.shape != want.shape:
        return f"{what}: shape {got.shape}, expected {want.shape}"
    scale = float(np.max(np.abs(want)))
    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    if row is not None and (row["prefill"] is None or err * row["scale"] > row["prefill"] * scale):
        row.update(prefill=err, scale=scale)
    if not err <= H.TOL * scale:
        return f"{what}: max|Δ| {err:.3g} > {H.TOL} x scale {scale:.3g}"
    return None
