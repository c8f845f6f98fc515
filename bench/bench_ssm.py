#!/usr/bin/env python3
"""State-space benchmark: prefill and decode of mobius packages in onnxruntime (CPU) against
transformers' PyTorch forward of the same checkpoint, on 0.5B-shaped random models.

Models (random weights from transformers' own init, float32, saved with save_pretrained in
bench/work/ssm/MODEL/checkpoint; made once and reused):
  mamba2-0.5b  Mamba2Config: hidden 1280, 48 layers, 40 heads of 64 (expand 2), state 128,
               1 group, conv 4, chunk 256, vocabulary 50288 (≈ 0.54 B parameters)
  bamba-0.5b   BambaConfig, a hybrid: hidden 1024, 24 layers of which 4 attention (16 query, 4
               key/value heads; layers 5, 11, 17, 23), the others Mamba-2 (32 heads of 64, state
               128), MLP 2816, vocabulary 50288 (≈ 0.47 B parameters)
The mobius package: build/mobius build --config CHECKPOINT OUT --ep cpu (float32). mobius writes the
whole prompt's scan as one graph run (blocks/mamba2.h: the chunked SSD form, chunks of chunk_size,
the state carried between chunks), so prefill is one onnxruntime run at any length.
Per round, for each tool (alternating, so a shared machine's load falls on each alike):
  prefill    one forward of a prompt of 512 and of 2048 random token ids (batch 1) that returns
             the logits and the state: onnxruntime session.run with zero past states;
             PyTorch model(input_ids, use_cache=True) under torch.inference_mode()
  decode     tokens/s over 16 greedy steps after a 128-token prompt: onnxruntime feeds each
             step's present.* back as past_key_values.*; PyTorch is timed as
             generate(16 + 1 new tokens) minus generate(1 new token) on the same prompt
Threads: all cores on both sides. Medians over rounds; ratios are PyTorch time / onnxruntime time
(above 1: mobius is faster). transformers 5.23 on CPU runs its reference PyTorch implementations of
the mamba_ssm / causal_conv1d kernels (about 19 s for a 128-token prefill of mamba2-0.5b here), so
one round of both models takes about half an hour: --rounds 1 is the practical setting.

    .venv/bin/python bench/bench_ssm.py                   # section "ssm" of docs/benchmarks.md
    .venv/bin/python bench/bench_ssm.py --render          # the table from bench/work/ssm.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402

REPO = report.REPO
WORK = REPO / "bench" / "work" / "ssm"
RESULTS = REPO / "bench" / "work" / "ssm.json"
MOBIUS_BIN = Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))
PREFILLS = [512, 2048]
DECODE_PROMPT, DECODE_STEPS = 128, 16
VOCAB = 50288


def configs() -> dict:
    from transformers import BambaConfig, Mamba2Config
    return {
        "mamba2-0.5b": Mamba2Config(hidden_size=1280, num_hidden_layers=48, num_heads=40, head_dim=64, expand=2,
                                    state_size=128, n_groups=1, conv_kernel=4, chunk_size=256, vocab_size=VOCAB),
        "bamba-0.5b": BambaConfig(hidden_size=1024, num_hidden_layers=24, attn_layer_indices=[5, 11, 17, 23],
                                  num_attention_heads=16, num_key_value_heads=4, intermediate_size=2816,
                                  mamba_n_heads=32, mamba_d_head=64, mamba_expand=2, mamba_d_state=128,
                                  mamba_n_groups=1, mamba_d_conv=4, mamba_chunk_size=256, vocab_size=VOCAB),
    }


def prepare(name: str, config) -> tuple[Path, Path]:
    """The checkpoint (made once) and the mobius package (rebuilt each run) of model `name`."""
    import torch
    from transformers import AutoModelForCausalLM
    ckpt, out = WORK / name / "checkpoint", WORK / name / "mobius"
    if not (ckpt / "config.json").exists():
        torch.manual_seed(0)
        AutoModelForCausalLM.from_config(config, dtype=torch.float32).save_pretrained(ckpt)
    subprocess.run([str(MOBIUS_BIN), "build", "--config", str(ckpt), str(out), "--ep", "cpu", "--runtime", "none",
                    "--force"], check=True, stdout=subprocess.DEVNULL)
    return ckpt, out / "onnx" / "model.onnx"


class OrtDecoder:
    """A mobius text-generation graph in onnxruntime: past_key_values.{i}.<name> in, present.{i}.<name>
    out, a state's sequence axis (symbolic past_sequence_length) starting empty."""

    def __init__(self, path: Path):
        import onnxruntime as ort
        self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        self.inputs = {i.name: i for i in self.session.get_inputs()}
        self.outputs = [o.name for o in self.session.get_outputs()]

    def empty_states(self) -> dict[str, np.ndarray]:
        states = {}
        for name, i in self.inputs.items():
            if name.startswith("past_key_values."):
                shape = [1 if d == "batch_size" else 0 if isinstance(d, str) else d for d in i.shape]
                states[name] = np.zeros(shape, np.float32)
        return states

    def run(self, ids: np.ndarray, states: dict, past: int):
        feeds = dict(states, input_ids=ids)
        total = past + ids.shape[1]
        if "attention_mask" in self.inputs:
            feeds["attention_mask"] = np.ones((1, total), np.int64)
        if "position_ids" in self.inputs:
            feeds["position_ids"] = np.arange(past, total, dtype=np.int64)[None]
        out = dict(zip(self.outputs, self.session.run(None, feeds)))
        new = {"past_key_values." + k[len("present."):]: v for k, v in out.items() if k.startswith("present.")}
        return out["logits"], new


def time_ort(dec: OrtDecoder, prompts: dict[int, np.ndarray]) -> dict[str, float]:
    res = {}
    for n, ids in prompts.items():
        start = time.perf_counter()
        dec.run(ids, dec.empty_states(), 0)
        res[f"prefill {n}"] = time.perf_counter() - start
    ids = prompts[DECODE_PROMPT]
    logits, states = dec.run(ids, dec.empty_states(), 0)
    past = ids.shape[1]
    start = time.perf_counter()
    for _ in range(DECODE_STEPS):
        token = np.array([[int(logits[0, -1].argmax())]], np.int64)
        logits, states = dec.run(token, states, past)
        past += 1
    res["decode"] = time.perf_counter() - start
    return res


def time_torch(model, prompts: dict) -> dict[str, float]:
    import torch
    res = {}
    with torch.inference_mode():
        for n, ids in prompts.items():
            start = time.perf_counter()
            model(torch.from_numpy(ids), use_cache=True)
            res[f"prefill {n}"] = time.perf_counter() - start
        ids = torch.from_numpy(prompts[DECODE_PROMPT])
        gen = {}
        for steps in (1, DECODE_STEPS + 1):
            start = time.perf_counter()
            model.generate(ids, max_new_tokens=steps, min_new_tokens=steps, do_sample=False)
            gen[steps] = time.perf_counter() - start
        res["decode"] = gen[DECODE_STEPS + 1] - gen[1]
    return res


def run(args: argparse.Namespace) -> dict:
    import onnxruntime
    import torch
    import transformers
    from transformers import AutoModelForCausalLM
    torch.set_num_threads(os.cpu_count())
    rng = np.random.default_rng(0)
    prompts = {n: rng.integers(0, VOCAB, (1, n), dtype=np.int64) for n in sorted({*PREFILLS, DECODE_PROMPT})}
    results = {}
    for name, config in configs().items():
        if args.models and name not in args.models:
            continue
        ckpt, onnx_path = prepare(name, config)
        dec = OrtDecoder(onnx_path)
        model = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32).eval()
        # warm-up of both (first-run allocations), then the rounds
        time_ort(dec, {DECODE_PROMPT: prompts[DECODE_PROMPT]})
        time_torch(model, {DECODE_PROMPT: prompts[DECODE_PROMPT]})
        rounds = []
        for _ in range(args.rounds):
            load = report.load_average()
            rounds.append({"load": load, "onnxruntime": time_ort(dec, prompts), "pytorch": time_torch(model, prompts)})
        results[name] = rounds
        del model, dec
    return {"machine": report.machine(), "commit": report.git_commit(),
            "versions": {"onnxruntime": onnxruntime.__version__, "torch": torch.__version__,
                         "transformers": transformers.__version__}, "models": results}


def render(res: dict) -> str:
    lines = ["## State-space models: prefill and decode, mobius in onnxruntime vs transformers on PyTorch", "",
             f"Generated by `bench/bench_ssm.py` at {res['commit']}: random 0.5B-shaped checkpoints (float32), "
             f"mobius `--ep cpu` packages in onnxruntime's CPU provider against transformers' PyTorch forward "
             f"(its torch path: no CUDA kernels on CPU), batch 1, all cores; {res['machine']}; "
             + ", ".join(f"{k} {v}" for k, v in res["versions"].items()) + ". Prefill is one graph run at any "
             "length (the chunked SSD scan of blocks/mamba2.h: onnxruntime runs its MatMuls over whole chunks, "
             "where a Scan over tokens would run one small step per token). Times are medians over rounds; "
             "ratio = PyTorch time / onnxruntime time (above 1: mobius is faster).", ""]
    for name, rounds in res["models"].items():
        loads = ", ".join(r["load"] for r in rounds)
        lines += [f"### {name} (load average before the round, its warm-up's threads included: {loads})",
                  "", "| measure | onnxruntime | PyTorch | ratio |", "|---|---|---|---|"]
        for key in [f"prefill {n}" for n in PREFILLS]:
            o = statistics.median(r["onnxruntime"][key] for r in rounds)
            p = statistics.median(r["pytorch"][key] for r in rounds)
            ratio = statistics.median(r["pytorch"][key] / r["onnxruntime"][key] for r in rounds)
            lines.append(f"| {key} tokens | {o * 1000:.0f} ms | {p * 1000:.0f} ms | {ratio:.2f} |")
        o = statistics.median(DECODE_STEPS / r["onnxruntime"]["decode"] for r in rounds)
        p = statistics.median(DECODE_STEPS / r["pytorch"]["decode"] for r in rounds)
        ratio = statistics.median(r["pytorch"]["decode"] / r["onnxruntime"]["decode"] for r in rounds)
        lines += [f"| decode after {DECODE_PROMPT} tokens | {o:.1f} tok/s | {p:.1f} tok/s | {ratio:.2f} |", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--models", nargs="*", help="a subset of " + ", ".join(configs()))
    ap.add_argument("--render", action="store_true", help="only rewrite the table from bench/work/ssm.json")
    args = ap.parse_args()
    def run_subset(args):  # a subset of the models: the others' last results stay
        res = run(args)
        if args.models and RESULTS.exists():
            res["models"] = {**json.loads(RESULTS.read_text())["models"], **res["models"]}
        return res
    report.run_or_render("ssm", RESULTS, args, run_subset, render)


if __name__ == "__main__":
    main()
