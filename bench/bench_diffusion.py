#!/usr/bin/env python3
"""Diffusion benchmark: mobius diffusers components in onnxruntime (CPU) against diffusers on
PyTorch CPU, and the build of a real-size UNet against the write floor.

Components (random weights from diffusers' own init, float32, ModelMixin.save_pretrained in
bench/work/diffusion/NAME; made once and reused):
  unet-sd15   UNet2DConditionModel with Stable Diffusion 1.5's config (block_out_channels
              320/640/1280/1280, cross_attention_dim 768, 8 heads, 860 M parameters)
  flux-1+1    FluxTransformer2DModel with FLUX.1-dev's widths (24 heads of 128, joint_attention_dim
              4096, pooled 768, guidance) and one double-stream plus one single-stream block
              (the real model has 19 + 38: a block's cost times its count is the model's)
Forward: one call at a realistic small resolution, 256 x 256 pixels: the UNet on a 32 x 32 latent,
batch 2 (classifier-free guidance's two rows), 77 text tokens; the Flux blocks on the packed
16 x 16 = 256 image tokens and 256 text tokens, batch 1. Each tool's time is the median over
rounds (alternating the tools; one warm-up call first); ratio = diffusers' time / onnxruntime's.
The mobius packages: build/mobius build DIR OUT (canonical graph, float32) and with --ep cpu.
Build: the UNet's folder (3.4 GB of float32 safetensors) built by mobius (float32 output) under
/usr/bin/time -v (wall, peak RSS), against the write floor (bench/write_floor.py: the same number
of output bytes written and nothing else) and `cp -r` of the input folder, alternating, --runs
times; medians.

    .venv/bin/python bench/bench_diffusion.py --rounds 3 --runs 3   # section "diffusion" of docs/benchmarks.md
    .venv/bin/python bench/bench_diffusion.py --render               # the table from bench/work/diffusion.json
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402
from bench_build import parse_time_v  # noqa: E402

REPO = report.REPO
WORK = REPO / "bench" / "work" / "diffusion"
RESULTS = REPO / "bench" / "work" / "diffusion.json"
MOBIUS_BIN = Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))
UNET_SD15 = dict(sample_size=64, cross_attention_dim=768, attention_head_dim=8,
                 block_out_channels=(320, 640, 1280, 1280), layers_per_block=2)
FLUX_1_1 = dict(patch_size=1, in_channels=64, num_layers=1, num_single_layers=1, attention_head_dim=128,
                num_attention_heads=24, joint_attention_dim=4096, pooled_projection_dim=768, guidance_embeds=True,
                axes_dims_rope=(16, 56, 56))
LATENT, TEXT_UNET, TEXT_FLUX = 32, 77, 256


def component(name: str):
    """The folder of component `name` (made once) and its diffusers model."""
    import diffusers
    import torch
    cls, config = {"unet-sd15": ("UNet2DConditionModel", UNET_SD15), "flux-1+1": ("FluxTransformer2DModel", FLUX_1_1)}[name]
    folder = WORK / name
    if not (folder / "config.json").exists():
        torch.manual_seed(0)
        getattr(diffusers, cls)(**config).save_pretrained(folder)
    return folder, getattr(diffusers, cls).from_pretrained(folder).eval()


def feeds(name: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    f32 = np.float32
    if name == "unet-sd15":
        return {"sample": rng.standard_normal((2, 4, LATENT, LATENT)).astype(f32),
                "timestep": np.array([999.0, 999.0], f32),
                "encoder_hidden_states": rng.standard_normal((2, TEXT_UNET, 768)).astype(f32)}
    side = LATENT // 2  # the 2 x 2 packing of FluxPipeline: 16 x 16 tokens of 64 channels
    rows, cols = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    return {"hidden_states": rng.standard_normal((1, side * side, 64)).astype(f32),
            "encoder_hidden_states": rng.standard_normal((1, TEXT_FLUX, 4096)).astype(f32),
            "pooled_projections": rng.standard_normal((1, 768)).astype(f32),
            "timestep": np.array([1.0], f32), "guidance": np.array([3.5], f32),
            "img_ids": np.stack([np.zeros(side * side), rows.ravel(), cols.ravel()], axis=1).astype(f32),
            "txt_ids": np.zeros((TEXT_FLUX, 3), f32)}


def torch_call(model, name: str, x: dict):
    import torch
    t = {k: torch.from_numpy(v) for k, v in x.items()}
    with torch.inference_mode():
        if name == "unet-sd15":
            return model(t["sample"], t["timestep"], t["encoder_hidden_states"]).sample
        return model(t["hidden_states"], t["encoder_hidden_states"], t["pooled_projections"], t["timestep"],
                     t["img_ids"], t["txt_ids"], t["guidance"]).sample


def onnx_graph(package: Path) -> Path:
    (graph,) = [p for p in package.rglob("*.onnx")]
    return graph


def forward_rounds(name: str, rounds: int) -> dict:
    import onnxruntime as ort
    folder, model = component(name)
    x = feeds(name)
    sessions = {}
    for tool, extra in (("mobius", []), ("mobius --ep cpu", ["--ep", "cpu"])):
        out = WORK / "packages" / f"{name}{'-cpu' if extra else ''}"
        subprocess.run([str(MOBIUS_BIN), "build", str(folder), str(out), "--force", *extra], check=True,
                       stdout=subprocess.DEVNULL)
        sessions[tool] = ort.InferenceSession(str(onnx_graph(out)), providers=["CPUExecutionProvider"])
    want = torch_call(model, name, x).numpy()
    calls = {"diffusers": lambda: torch_call(model, name, x)}
    for tool, s in sessions.items():
        names = {i.name for i in s.get_inputs()}
        got = s.run(None, {k: v for k, v in x.items() if k in names})[0]
        err = float(np.abs(got - want).max() / np.abs(want).max())
        if err > 1e-3:
            sys.exit(f"bench_diffusion: {name} {tool} differs from diffusers (max |Δ| / scale {err:.3g})")
        calls[tool] = lambda s=s, f={k: v for k, v in x.items() if k in names}: s.run(None, f)
    times = {tool: [] for tool in calls}
    loads = []
    for _ in range(rounds):
        loads.append(report.load_average())
        for tool, fn in calls.items():
            fn()
            start = time.perf_counter()
            fn()
            times[tool].append(time.perf_counter() - start)
    return {"loads": loads, "times": times}


def timed(cmd: list[str]) -> dict:
    timefile = WORK / "time.txt"
    subprocess.run(["/usr/bin/time", "-v", "-o", str(timefile), *cmd], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, rss_kib, cpu, _ = parse_time_v(timefile.read_text())
    return {"wall": wall, "rss_mib": rss_kib / 1024, "cpu": cpu}


def build_runs(runs: int) -> dict:
    folder, model = component("unet-sd15")
    del model
    out, floor, copy = WORK / "build-out", WORK / "floor-out", WORK / "cp-out"
    res = {"mobius": [], "write floor": [], "cp": [], "loads": []}
    for _ in range(runs):
        res["loads"].append(report.load_average())
        for p in (out, floor, copy):
            shutil.rmtree(p, ignore_errors=True)
        subprocess.run(["sync"], check=True)
        res["mobius"].append(timed([str(MOBIUS_BIN), "build", str(folder), str(out), "--dtype", "f32"]))
        nbytes = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
        res["output_bytes"] = nbytes
        subprocess.run(["sync"], check=True)
        res["write floor"].append(timed([sys.executable, str(REPO / "bench" / "write_floor.py"), str(floor), str(nbytes)]))
        subprocess.run(["sync"], check=True)
        res["cp"].append(timed(["cp", "-r", str(folder), str(copy)]))
    res["input_bytes"] = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    for p in (out, floor, copy):
        shutil.rmtree(p, ignore_errors=True)
    return res


def run(args: argparse.Namespace) -> dict:
    import diffusers
    import onnxruntime
    import torch
    torch.set_num_threads(os.cpu_count())
    WORK.mkdir(parents=True, exist_ok=True)
    return {"machine": report.machine(), "commit": report.git_commit(),
            "versions": {"onnxruntime": onnxruntime.__version__, "torch": torch.__version__,
                         "diffusers": diffusers.__version__},
            "forward": {name: forward_rounds(name, args.rounds) for name in ("unet-sd15", "flux-1+1")},
            "build": build_runs(args.runs)}


def render(res: dict) -> str:
    lines = ["## Diffusion: components in onnxruntime vs diffusers, and the build of an SD 1.5 UNet", "",
             f"Generated by `bench/bench_diffusion.py` at {res['commit']} on {res['machine']}; "
             + ", ".join(f"{k} {v}" for k, v in res["versions"].items())
             + f". Forward at 256 x 256 pixels: the SD 1.5-shaped UNet (random weights) on a {LATENT} x {LATENT} "
             f"latent, batch 2, {TEXT_UNET} text tokens; one double- and one single-stream FLUX.1-dev block "
             f"(with the embedders and the output layer) on 256 image and {TEXT_FLUX} text tokens, batch 1. "
             "Medians over rounds; ratio = diffusers' time / the package's time (above 1: onnxruntime is faster).",
             "", "| component | tool | time (median) | ratio | load averages |", "|---|---|---|---|---|"]
    for name, r in res["forward"].items():
        base = r["times"]["diffusers"]
        for tool, ts in r["times"].items():
            ratio = statistics.median(b / t for b, t in zip(base, ts))
            lines.append(f"| {name} | {tool} | {statistics.median(ts) * 1000:.0f} ms | {ratio:.2f} | "
                         f"{'; '.join(r['loads'])} |")
    b = res["build"]
    med = {k: {m: statistics.median(x[m] for x in b[k]) for m in ("wall", "rss_mib")} for k in ("mobius", "write floor", "cp")}
    lines += ["", f"Build of the SD 1.5-shaped UNet folder ({b['input_bytes'] / 1e9:.2f} GB float32 safetensors) to a "
              f"float32 package ({b['output_bytes'] / 1e9:.2f} GB), {len(b['mobius'])} runs alternating with the "
              f"write floor and `cp` (load averages {'; '.join(b['loads'])}):", "",
              "| tool | wall (median) | peak RSS | wall / write floor |", "|---|---|---|---|"]
    for k in ("mobius", "write floor", "cp"):
        lines.append(f"| {k} | {med[k]['wall']:.2f} s | {med[k]['rss_mib']:.0f} MiB | "
                     f"{med[k]['wall'] / med['write floor']['wall']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--render", action="store_true", help="only rewrite the table from bench/work/diffusion.json")
    args = ap.parse_args()
    report.run_or_render("diffusion", RESULTS, args, run, render)


if __name__ == "__main__":
    main()
