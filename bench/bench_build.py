#!/usr/bin/env python3
"""Build benchmark: mobius against the Python builders on real-size random checkpoints.

For each config in bench/configs/ this writes a random bf16 checkpoint of the real size into
bench/work/ckpt/ (sharded safetensors + index, written shard by shard from the meta-device model's
state-dict names and shapes, so the whole model is never in memory; a minimal WordLevel tokenizer
for the peers that copy one), then builds it with
  mobius       build/mobius build --config CKPT OUT --dtype f32|f16 --runtime none --force
  mobius-onnx  bench/.venv-mobius-onnx/bin/mobius build --config CKPT OUT --dtype f32|f16
  ort-genai    bench/.venv-genai/bin/python -m onnxruntime_genai.models.builder -p fp32 -e cpu
  write        bench/write_floor.py: only writing mobius's output bytes (fallocate + 256 KiB pwrite),
               the floor of what writing that output costs on this machine
  cp -r        the physical floor (read the checkpoint once, write it once)
each under `nice /usr/bin/time -v` (wall time, peak RSS), --runs times, round-robin so that the
load of a shared machine falls on every tool alike; the table (medians, ratios, targets) goes to
docs/benchmarks.md. Runs are kept in bench/work/results.json (--results); --resume skips
finished runs; --render only rewrites the table from that file.

Run with the project's Python (transformers, torch, safetensors):
    .venv/bin/python bench/bench_build.py --runs 3
after bench/setup_bench.sh and a Release build of build/mobius (or MOBIUS_BIN=path, with
MOBIUS_COMMIT=the commit it was built from).
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
WORK = BENCH / "work"
MODELS = ["qwen2.5-0.5b", "llama-3.2-1b"]
SHARD_BYTES = 500 * 10**6
PEER_TIMEOUT_S = 15 * 60
MOBIUS_BIN = Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))  # as in the harness
MOBIUS_ONNX = BENCH / ".venv-mobius-onnx"
GENAI = BENCH / ".venv-genai"
TOOLS = ["mobius", "write", "mobius-onnx", "ort-genai", "cp"]
DTYPES = ["f32", "f16"]
# ONNX Runtime GenAI's builder lists its valid combinations as FP32 CPU, INT8 CPU, INT4 CPU
# (fp16 is for CUDA, DML and TRT-RTX): no f16 comparison on CPU.
UNSUPPORTED = {("ort-genai", "f16"): "not supported on CPU: the builder's valid combinations "
                                      "list FP32, INT8 and INT4 for CPU (FP16 only for CUDA, "
                                      "DML, TRT-RTX)"}

# Targets (issue 5): mobius wall <= 2 x cp and <= 0.1 x each peer; peak RSS <= 0.25 x each peer
# and < 1 GiB.
WALL_VS_CP, WALL_VS_PEER, RSS_VS_PEER, RSS_MAX_KIB = 2.0, 0.1, 0.25, 2**20


# ---------------------------------------------------------------------------------------------
# The checkpoint
# ---------------------------------------------------------------------------------------------
def write_tokenizer(ckpt: Path) -> None:
    """A minimal WordLevel tokenizer: the ORT GenAI builder loads and re-saves one."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"<unk>": 0, **{f"t{i}": i + 1 for i in range(63)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(ckpt / "tokenizer.json"))
    (ckpt / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>",
         "model_max_length": 2048}, indent=2) + "\n")


def make_checkpoint(name: str) -> Path:
    """bench/work/ckpt/NAME: config.json (verbatim), random bf16 sharded safetensors, tokenizer."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModelForCausalLM

    src = BENCH / "configs" / f"{name}.json"
    ckpt = WORK / "ckpt" / name
    stamp = ckpt / ".complete"
    if stamp.exists() and stamp.read_text() == src.read_text():
        return ckpt
    shutil.rmtree(ckpt, ignore_errors=True)
    ckpt.mkdir(parents=True)
    shutil.copy(src, ckpt / "config.json")
    config = AutoConfig.from_pretrained(ckpt)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    # named_parameters() yields a tied parameter once: no lm_head.weight with tied embeddings.
    params = dict(model.named_parameters())
    every_param = dict(model.named_parameters(remove_duplicate=False))
    state = model.state_dict()  # persistent buffers too, in checkpoint order
    names = [k for k in state if k in params or k not in every_param]
    shapes = {k: tuple(state[k].shape) for k in names}
    shards, cur, cur_bytes = [], [], 0
    for k in names:
        nbytes = 2 * int(torch.Size(shapes[k]).numel())
        if cur and cur_bytes + nbytes > SHARD_BYTES:
            shards.append(cur)
            cur, cur_bytes = [], 0
        cur.append(k)
        cur_bytes += nbytes
    shards.append(cur)
    del model, state, params, every_param
    torch.manual_seed(0)
    weight_map, total = {}, 0
    for i, keys in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        tensors = {k: torch.randn(shapes[k], dtype=torch.bfloat16).mul_(0.02) for k in keys}
        save_file(tensors, str(ckpt / fname), metadata={"format": "pt"})
        total += sum(t.numel() * 2 for t in tensors.values())
        weight_map.update({k: fname for k in keys})
        del tensors
        print(f"  {name}: wrote {fname} ({len(keys)} tensors)", flush=True)
    (ckpt / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2) + "\n")
    write_tokenizer(ckpt)
    stamp.write_text(src.read_text())
    return ckpt


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------
# Running the tools
# ---------------------------------------------------------------------------------------------
def command(tool: str, ckpt: Path, out: Path, dtype: str, cache: Path, nbytes: int) -> list[str]:
    if tool == "mobius":
        return [str(MOBIUS_BIN), "build", "--config", str(ckpt), str(out),
                "--dtype", dtype, "--runtime", "none", "--force"]
    if tool == "mobius-onnx":
        return [str(MOBIUS_ONNX / "bin" / "mobius"), "build", "--config", str(ckpt), str(out),
                "--dtype", dtype]
    if tool == "ort-genai":
        return [str(GENAI / "bin" / "python"), "-m", "onnxruntime_genai.models.builder",
                "-i", str(ckpt), "-o", str(out), "-p", {"f32": "fp32", "f16": "fp16"}[dtype],
                "-e", "cpu", "-c", str(cache)]
    if tool == "write":
        return [sys.executable, str(BENCH / "write_floor.py"), str(out), str(nbytes)]
    if tool == "cp":
        return ["cp", "-r", str(ckpt), str(out)]
    raise ValueError(tool)


def parse_time_v(text: str) -> tuple[float | None, int | None, float | None, str | None]:
    """(wall seconds, max RSS KiB, user + system CPU seconds, signal note) from `time -v`."""
    wall = rss = cpu = None
    m = re.search(r"User time \(seconds\): ([\d.]+)\s+System time \(seconds\): ([\d.]+)", text)
    if m:
        cpu = float(m.group(1)) + float(m.group(2))
    m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)", text)
    if m:
        wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        rss = int(m.group(1))
    m = re.search(r"Command terminated by signal (\d+)", text)
    return wall, rss, cpu, (f"killed by signal {m.group(1)}" if m else None)


def failure_reason(stderr: str, rc: int) -> str:
    """The most telling line of a failed run's output: the last exception line, else the last."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    lines = [l for l in lines if not l.startswith(("Command ", "Command exited"))]
    errs = [l for l in lines if re.match(r"^[\w.]*(Error|Exception)\b|^error:|mobius: error", l)]
    line = (errs or lines or [f"exit status {rc}"])[-1]
    return line[:200]


def tree_rss_anon_kib(pid: int) -> int:
    """Sum of RssAnon (heap, not file-backed pages) over `pid` and its descendants, 0 if gone."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("RssAnon:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            pass
    return total


def run_once(tool: str, model: str, ckpt: Path, dtype: str, nbytes: int) -> dict:
    out = WORK / "out" / f"{tool}-{model}-{dtype}"
    cache = WORK / "cache" / f"{tool}-{model}-{dtype}"
    for p in (out, cache):
        shutil.rmtree(p, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    # Every run starts with no dirty pages: the kernel throttles a writer once dirty pages pass
    # (dirty_background_ratio + dirty_ratio) / 2 of memory, so the previous run's unwritten
    # gigabytes would slow whichever tool runs next.
    os.sync()
    timefile = WORK / "time.txt"
    timeout = PEER_TIMEOUT_S if tool in ("mobius-onnx", "ort-genai") else 3600
    cmd = ["nice", "/usr/bin/time", "-v", "-o", str(timefile), "timeout", "-s", "KILL",
           str(timeout), *command(tool, ckpt, out, dtype, cache, nbytes)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    t0 = time.monotonic()
    logs = WORK / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "stdout.tmp", "w+") as so, open(logs / "stderr.tmp", "w+") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, env=env, cwd=WORK)
        anon_kib = 0
        while proc.poll() is None:
            anon_kib = max(anon_kib, tree_rss_anon_kib(proc.pid))
            time.sleep(0.2)
        so.seek(0)
        se.seek(0)
        p = subprocess.CompletedProcess(cmd, proc.returncode, so.read(), se.read())
    elapsed = time.monotonic() - t0
    wall, rss, cpu, signal = parse_time_v(timefile.read_text() if timefile.exists() else "")
    log = WORK / "logs" / f"{tool}-{model}-{dtype}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"$ {' '.join(cmd)}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}\n")
    res = {"wall_s": wall if wall is not None else elapsed, "rss_kib": rss,
           "anon_kib": anon_kib, "cpu_s": cpu, "rc": p.returncode}
    if p.returncode != 0:
        if p.returncode in (137, -9) and elapsed >= timeout - 1:
            res["fail"] = f"timed out after {timeout // 60} min"
        elif signal or p.returncode in (137, -9):
            res["fail"] = (f"{signal or 'killed'} (out of memory?) at {rss / 2**20:.1f} GiB RSS"
                           if rss else (signal or "killed"))
        else:
            res["fail"] = failure_reason(p.stderr, p.returncode)
    elif tool not in ("cp", "write") and not any(out.glob("*.onnx")):
        res["fail"] = "no .onnx file written"
    if "fail" not in res:
        res["out_bytes"] = dir_bytes(out)
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return res


def versions() -> dict:
    def pkg(venv: Path, names: list[str]) -> str:
        code = ("import importlib.metadata as m\n"
                f"print(', '.join(n + ' ' + m.version(n) for n in {names!r}))")
        r = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True)
        return r.stdout.strip() or f"(not installed: {venv.name})"

    return {
        "mobius": f"commit {os.environ.get('MOBIUS_COMMIT') or report.git_commit()} "
                  "(C++, Release build)",
        "mobius-onnx": pkg(MOBIUS_ONNX, ["mobius-onnx", "onnxscript", "onnx-ir", "torch",
                                         "transformers"]),
        "ort-genai": pkg(GENAI, ["onnxruntime-genai", "onnx-ir", "onnx", "torch", "transformers"]),
        "write": f"Python {sys.version.split()[0]} (os.posix_fallocate, os.pwrite)",
        "cp": subprocess.run(["cp", "--version"], capture_output=True,
                             text=True).stdout.splitlines()[0],
    }


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------
LABEL = {"mobius": "mobius", "write": "write mobius's output bytes (floor)",
         "mobius-onnx": "mobius-onnx (Python)",
         "ort-genai": "ORT GenAI model builder", "cp": "`cp -r` (floor)"}


def summarize(entry: dict) -> dict | None:
    """Medians over the successful runs; None when there are none."""
    ok = [r for r in entry.get("runs", []) if "fail" not in r]
    if not ok:
        return None
    return {"wall": statistics.median(r["wall_s"] for r in ok),
            "rss": statistics.median(r["rss_kib"] for r in ok),
            "anon": statistics.median(r.get("anon_kib", 0) for r in ok),
            "cpu": (statistics.median(r["cpu_s"] for r in ok)
                    if all(r.get("cpu_s") is not None for r in ok) else None),
            "walls": [r["wall_s"] for r in ok], "n": len(ok),
            "out": ok[-1].get("out_bytes", 0)}


def fmt_ratio(x: float, target: float | None) -> str:
    s = f"{x:.3f}" if x < 0.1 else f"{x:.2f}"
    if target is None:
        return s
    return f"{s} {'✓' if x <= target else '✗'}"


def render(results: dict, meta: dict) -> str:
    lines = ["## Build: mobius vs the Python builders", ""]
    load = (f"**The machine was shared**: 2 cores with other work running at the same time (load "
            f"average {meta['load_start']} at the start, {meta['load_end']} at the end), so "
            f"every figure is noisy; " if report.shared(meta["load_start"]) else
            f"Nothing else ran on the machine (load average {meta['load_start']} at the start, "
            f"before any run; {meta['load_end']} at the end, the benchmark's own load); ")
    lines += [f"Machine: {meta['machine']}. {load}"
              f"runs are interleaved round-robin so that any outside load falls on "
              f"every tool alike, and each figure is the median of {meta['runs']} runs (fewer "
              f"where noted). Every tool runs under `nice /usr/bin/time -v`; the checkpoint is in the page cache "
              f"(read once before the runs). Peak RSS is the largest process's maximum resident "
              f"set (`/usr/bin/time -v`), which counts the pages of memory-mapped checkpoint files "
              f"as they are read (clean page-cache pages the kernel can drop); peak anon is the "
              f"largest sum of `RssAnon` (heap) over the process tree, sampled every 0.2 s; "
              f"CPU s is user + system time (median). The write floor is the same byte count "
              f"as mobius's output written by `bench/write_floor.py` (blocks allocated first, "
              f"256 KiB `pwrite`s, as mobius writes) and nothing else. "
              f"Run on {meta['date']}.", ""]
    if meta.get("earlier"):
        e = meta["earlier"]
        lines += [f"The runs of {', '.join(e['tools'])} are from an earlier run on {e['date']} "
                  f"(load average {e['load_start']} at its start, {e['load_end']} at its end; "
                  f"those tools did not change); the other tools were measured again for this "
                  f"commit, so their ratios compare runs under different load.", ""]
    lines += ["Versions: " + "; ".join(f"{k}: {v}" for k, v in meta["versions"].items()) + ".", ""]
    lines += ["Checkpoints: the real configs in `bench/configs/` (Qwen2.5-0.5B, Llama-3.2-1B; "
              "tied embeddings, so no `lm_head` tensor) with random bf16 weights in ~500 MB "
              "safetensors shards. Outputs: f32 (and f16 where the peer supports it on CPU), "
              "weights in external data; mobius with `--runtime none`.", ""]
    missed = []
    for model in MODELS:
        ck = meta["checkpoints"].get(model)
        if not ck:
            continue
        for dtype in DTYPES:
            lines += [f"### {model}, {dtype} output (checkpoint {ck['bytes'] / 1e9:.2f} GB bf16, "
                      f"{ck['shards']} shards)", "",
                      "| tool | wall s (median) | runs (s) | CPU s | peak RSS MiB | peak anon MiB "
                      "| output GB | mobius/tool wall | mobius/tool RSS |",
                      "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
            mob = summarize(results.get(f"{model}/{dtype}/mobius", {}))
            for tool in TOOLS:
                key = f"{model}/cp/cp" if tool == "cp" else f"{model}/{dtype}/{tool}"
                entry = results.get(key, {})
                s = summarize(entry)
                if (tool, dtype) in UNSUPPORTED:
                    lines.append(f"| {LABEL[tool]} | {UNSUPPORTED[tool, dtype]} | | | | | | | |")
                    continue
                if s is None:
                    fails = [r["fail"] for r in entry.get("runs", []) if "fail" in r]
                    why = f"failed: {fails[0]}" if fails else "not run"
                    lines.append(f"| {LABEL[tool]} | {why} | | | | | | | |")
                    continue
                walls = ", ".join(f"{w:.1f}" for w in s["walls"])
                cpu = "–" if s["cpu"] is None else f"{s['cpu']:.1f}"
                row = (f"| {LABEL[tool]} | {s['wall']:.2f} | {walls} | {cpu} | {s['rss'] / 1024:.0f} "
                       f"| {s['anon'] / 1024:.0f} | {s['out'] / 1e9:.2f} |")
                if tool == "mobius" or mob is None:
                    rss_ok = mob is not None and mob["rss"] < RSS_MAX_KIB
                    if tool == "mobius" and mob is not None and not rss_ok:
                        missed.append(f"{model} {dtype}: mobius peak RSS {mob['rss'] / 1024:.0f} "
                                      f"MiB ≥ 1 GiB")
                    row += (f" | {'< 1 GiB ✓' if rss_ok else '≥ 1 GiB ✗'} |" if tool == "mobius"
                            else " | |")
                elif tool == "write":
                    row += f" {fmt_ratio(mob['wall'] / s['wall'], None)} | |"
                elif tool == "cp":
                    r = mob["wall"] / s["wall"]
                    row += f" {fmt_ratio(r, WALL_VS_CP)} (≤ {WALL_VS_CP:g}) | |"
                    if r > WALL_VS_CP:
                        missed.append(f"{model} {dtype}: mobius wall {r:.2f} × cp (target ≤ 2)")
                else:
                    rw, rr = mob["wall"] / s["wall"], mob["rss"] / s["rss"]
                    row += (f" {fmt_ratio(rw, WALL_VS_PEER)} (≤ {WALL_VS_PEER:g}) "
                            f"| {fmt_ratio(rr, RSS_VS_PEER)} (≤ {RSS_VS_PEER:g}) |")
                    if rw > WALL_VS_PEER:
                        missed.append(f"{model} {dtype}: mobius wall {rw:.3f} × {tool} "
                                      f"(target ≤ 0.1)")
                    if rr > RSS_VS_PEER:
                        missed.append(f"{model} {dtype}: mobius RSS {rr:.3f} × {tool} "
                                      f"(target ≤ 0.25)")
                lines.append(row)
            lines.append("")
    lines += ["Targets: mobius wall ≤ 2 × cp and ≤ 0.1 × each Python peer; mobius peak RSS "
              "≤ 0.25 × each peer and < 1 GiB (✓ met, ✗ missed).", ""]
    lines += ["Targets missed: " + ("; ".join(missed) if missed else "none") + ".", ""]
    short = sorted(k for k, e in results.items()
                   if not any("fail" in r for r in e.get("runs", []))
                   and 0 < len(e.get("runs", [])) < meta["runs"])
    if short:
        lines += [f"Fewer than {meta['runs']} runs (the median is over the runs listed): "
                  + ", ".join(short) + ".", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per tool, model and dtype (≥ 1)")
    ap.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    ap.add_argument("--tools", nargs="+", default=TOOLS, choices=TOOLS)
    ap.add_argument("--resume", action="store_true", help="keep finished runs of results.json")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    ap.add_argument("--rerun", nargs="+", default=[], choices=TOOLS,
                    help="with --resume: measure these tools again and keep the other tools' "
                         "runs from results.json (the table says which runs are older)")
    ap.add_argument("--render", action="store_true",
                    help="only rewrite docs/benchmarks.md from the results file")
    ap.add_argument("--results", type=Path, default=WORK / "results.json",
                    help="where runs are kept (default bench/work/results.json)")
    args = ap.parse_args()
    results_path = args.results
    if args.render:
        results = json.loads(results_path.read_text())
        meta = results.pop("_meta")
        report.update_section("build", render(results, meta))
        return 0
    if not MOBIUS_BIN.exists():
        sys.exit(f"bench_build: {MOBIUS_BIN} is missing: build mobius (Release) first")
    for tool, venv in (("mobius-onnx", MOBIUS_ONNX), ("ort-genai", GENAI)):
        if tool in args.tools and not venv.exists():
            sys.exit(f"bench_build: {venv} is missing: run bench/setup_bench.sh first")
    WORK.mkdir(parents=True, exist_ok=True)
    results = json.loads(results_path.read_text()) if args.resume and results_path.exists() else {}
    meta = results.pop("_meta", {}) if args.resume else {}
    if args.rerun:
        kept = sorted({k.split("/")[2] for k in results} - set(args.rerun))
        if kept and "earlier" not in meta:
            meta["earlier"] = {"tools": kept, "date": meta.get("date"),
                               "load_start": meta.get("load_start"), "load_end": meta.get("load_end")}
        results = {k: v for k, v in results.items() if k.split("/")[2] not in args.rerun}
        meta.pop("load_start", None)
    meta.update(machine=report.machine(), runs=args.runs, versions=versions(),
                date=time.strftime("%Y-%m-%d"))
    meta.setdefault("load_start", report.load_average())
    meta.setdefault("checkpoints", {})

    def save():
        meta["load_end"] = report.load_average()
        results_path.write_text(json.dumps({**results, "_meta": meta}, indent=1) + "\n")
        if not args.no_doc:
            report.update_section("build", render(results, meta))

    def output_bytes(model: str, dtype: str) -> int:
        """mobius's output size for the write floor: its latest run's, else the checkpoint's
        bf16 bytes scaled to the dtype."""
        ok = [r for r in results.get(f"{model}/{dtype}/mobius", {}).get("runs", []) if "out_bytes" in r]
        return ok[-1]["out_bytes"] if ok else meta["checkpoints"][model]["bytes"] * {"f32": 2, "f16": 1}[dtype]

    ckpts = {}
    for model in args.models:
        print(f"checkpoint {model}", flush=True)
        ckpts[model] = ckpt = make_checkpoint(model)
        meta["checkpoints"][model] = {
            "bytes": sum(p.stat().st_size for p in ckpt.glob("*.safetensors")),
            "shards": len(list(ckpt.glob("*.safetensors")))}
    # Run-major order: every tool gets run 1 on every model before any run 2, so a run cut short
    # still leaves a complete (if shorter) table.
    for r in range(args.runs):
        for model, ckpt in ckpts.items():
            subprocess.run(f"cat '{ckpt}'/*.safetensors > /dev/null", shell=True, check=True)
            for dtype in DTYPES:
                for tool in args.tools:
                    if (tool, dtype) in UNSUPPORTED or (tool == "cp" and dtype != DTYPES[0]):
                        continue
                    key = f"{model}/cp/cp" if tool == "cp" else f"{model}/{dtype}/{tool}"
                    entry = results.setdefault(key, {"runs": []})
                    if len(entry["runs"]) > r:
                        continue
                    if any("fail" in x for x in entry["runs"]):
                        continue  # a failed or timed-out peer is not retried
                    print(f"[{time.strftime('%H:%M:%S')}] {key} run {r + 1}/{args.runs} ...",
                          end=" ", flush=True)
                    res = run_once(tool, model, ckpt, dtype, output_bytes(model, dtype))
                    entry["runs"].append(res)
                    print(res.get("fail") or f"{res['wall_s']:.1f} s, "
                          f"{res['rss_kib'] / 1024:.0f} MiB", flush=True)
                    save()
    save()
    print(render(results, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
