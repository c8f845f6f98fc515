#!/usr/bin/env python3
"""Build benchmark: mobius against the Python builders on real-size random checkpoints.

For each config in bench/configs/ this writes a random checkpoint of the real size into
bench/work/ckpt/ (the config's dtype, bf16 or f16; safetensors sharded as the Hub shards that model,
with its index; the tensor names and shapes are those transformers' save_pretrained writes, taken
from the meta-device model, and each shard is written alone, so the whole model is never in memory;
a minimal WordLevel tokenizer for the peers that copy one), then builds it with
  mobius         build/mobius build --config CKPT OUT --runtime none --force, with --dtype f32|f16,
                 or --precision int4 --ep cpu
  write          bench/write_floor.py: only writing mobius's output bytes (fallocate + 256 KiB
                 pwrite), the floor of what writing that output costs on this machine
  cp -r          the physical floor (read the checkpoint once, write it once)
  mobius-onnx    bench/.venv-mobius-onnx/bin/mobius build --config CKPT OUT --dtype f32|f16
  ort-genai      bench/.venv-genai/bin/python -m onnxruntime_genai.models.builder -p fp32|int4 -e cpu
  optimum        bench/.venv-optimum/bin/optimum-cli export onnx --model CKPT OUT (f32)
  hf-exporters   bench/.venv-exporters: transformers.exporters' ONNX backend (bench/export_transformers.py, f32)
  ort-quantizer  onnxruntime's MatMulNBitsQuantizer (int4, block 32) on mobius's f32 package of the
                 same checkpoint: the int4 step alone, for the quantization-throughput ratio
each under `nice /usr/bin/time -v` (wall time, peak RSS), --runs times, round-robin so that the
load of a shared machine falls on every tool alike; `mobius info` predicts each mobius build's
output size and peak memory first, and the table shows predicted against measured. The table
(medians, ratios, targets) goes to docs/benchmarks.md. Runs are kept in bench/work/results.json
(--results); --resume skips finished runs; --render only rewrites the table from that file.

Run with the project's Python (transformers, torch, safetensors):
    .venv/bin/python bench/bench_build.py --runs 3                       # the 0.5B and 1B rows
    .venv/bin/python bench/bench_build.py --runs 3 --models llama-3.1-8b # one large model
    .venv/bin/python bench/bench_build.py --section build-7b --runs 3 --models qwen2.5-7b \
        --tools mobius write cp                                           # its own section
    .venv/bin/python bench/bench_build.py --section build-7b --resume --runs 1 --models qwen2.5-7b \
        --tools mobius-onnx ort-genai optimum hf-exporters                # the peers once, beside it
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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402

REPO = report.REPO
BENCH = REPO / "bench"
WORK = BENCH / "work"

@dataclass(frozen=True)
class Model:
    """A benchmark checkpoint: bench/configs/NAME.json, sharded as the Hub shards the real model."""
    shard_bytes: int | None  # the Hub's largest shard; None: one model.safetensors, no index
    note: str = ""  # what differs from the real model, said in the table


MODELS = {
    "qwen2.5-0.5b": Model(None),
    "llama-3.2-1b": Model(None),
    "qwen2.5-1.5b": Model(None),
    "llama-3.1-8b": Model(5 * 10**9),
    "qwen2.5-7b": Model(4 * 10**9),
    "qwen3-30b-a3b-12l": Model(4 * 10**9, "12 of Qwen3-30B-A3B's 48 layers: the whole model is 61 GB "
                                         "of bf16, more than this machine's free disk beside its outputs"),
    "qwen2.5-vl-7b": Model(4 * 10**9),
    "whisper-large-v3": Model(None),
}
DEFAULT_MODELS = ["qwen2.5-0.5b", "llama-3.2-1b"]
PEER_TIMEOUT_S = 60 * 60  # a peer past one hour is reported as such
# A peer is killed when the machine has less than this available: with no swap the kernel first
# evicts every file page (the programs' own code included) and the machine thrashes for many
# minutes before its OOM killer acts (Optimum's f32 export of the Qwen2.5-7B shape: 19 min).
MEM_EXHAUSTED_KIB = 1024 * 1024
MOBIUS_BIN = Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))  # as in the harness
MOBIUS_ONNX = BENCH / ".venv-mobius-onnx"
GENAI = BENCH / ".venv-genai"
OPTIMUM = BENCH / ".venv-optimum"
EXPORTERS = BENCH / ".venv-exporters"
TOOLS = ["mobius", "write", "cp", "mobius-onnx", "ort-genai", "optimum", "hf-exporters", "ort-quantizer"]
PEERS = {"mobius-onnx": MOBIUS_ONNX, "ort-genai": GENAI, "optimum": OPTIMUM, "hf-exporters": EXPORTERS,
         "ort-quantizer": GENAI}
DTYPES = ["f32", "f16", "int4"]
# Which tool makes which output (a missing pair is a row saying why).
UNSUPPORTED = {
    ("ort-genai", "f16"): "not supported on CPU: the builder's valid combinations list FP32, INT8 and "
                          "INT4 for CPU (FP16 only for CUDA, DML, TRT-RTX)",
    ("mobius-onnx", "int4"): "no int4 build in its CLI",
    ("optimum", "f16"): "fp16 export needs a CUDA device in optimum-cli",
    ("optimum", "int4"): "no int4 export (its quantizer is a separate step)",
    ("hf-exporters", "f16"): "f32 only here",
    ("hf-exporters", "int4"): "f32 only here",
    ("ort-quantizer", "f32"): "", ("ort-quantizer", "f16"): "",
}
# Optimum's task for a model that is not a text decoder (the others: text-generation-with-past).
OPTIMUM_TASK = {"whisper-large-v3": "automatic-speech-recognition-with-past"}
# Models whose package has several graphs (encoder and decoder), not one model.onnx.
SEVERAL_GRAPHS = {"whisper-large-v3"}
# The ORT quantizer reads mobius's f32 package whole: run where that package fits memory and disk.
QUANTIZER_MAX_F32_BYTES = 8 * 10**9

# docs/benchmarks.md sections a results file renders to (--section), each with its own runs, date,
# load and versions: the 0.5B-1B rows with every peer, and a later run of the 7B-scale shapes.
SECTIONS = {"build": "Build: mobius vs the Python builders",
            "build-7b": "Build at 7B scale: mobius vs the Python builders, the write floor and cp"}

# Targets (issue 29): mobius wall <= 1.2 x the write floor for every dtype; peak RSS < 256 MiB at
# every size; int4 build >= 10 x onnxruntime's quantizer (mobius wall <= 0.1 x its wall).
WALL_VS_WRITE, RSS_MAX_KIB, WALL_VS_QUANTIZER = 1.2, 256 * 1024, 0.1


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


def checkpoint_tensors(config) -> tuple[dict[str, tuple[int, ...]], "torch.dtype"]:
    """{name: shape} of the checkpoint transformers' save_pretrained writes for `config` (its
    conversions reverted: per-expert MoE weights, the Hub's key names), tied copies left out, from
    the meta-device model: no weight is allocated."""
    import torch
    import transformers
    from transformers.core_model_loading import revert_weight_conversion

    dtype = getattr(config, "dtype", None) or torch.bfloat16
    dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    cls = getattr(transformers, config.architectures[0])
    with torch.device("meta"):
        model = cls._from_config(config, dtype=dtype)
    # named_parameters() yields a tied parameter once: no lm_head.weight with tied embeddings.
    tied = set(dict(model.named_parameters(remove_duplicate=False))) - set(dict(model.named_parameters()))
    state = revert_weight_conversion(model, dict(model.state_dict()))
    return {k: tuple(v.shape) for k, v in state.items() if k not in tied}, dtype


def make_checkpoint(name: str) -> Path:
    """bench/work/ckpt/NAME: config.json (verbatim), random sharded safetensors, tokenizer."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoConfig

    src = BENCH / "configs" / f"{name}.json"
    ckpt = WORK / "ckpt" / name
    stamp = ckpt / ".complete"
    recipe = json.dumps({"config": src.read_text(), "shard_bytes": MODELS[name].shard_bytes})
    if stamp.exists() and stamp.read_text() == recipe:
        return ckpt
    shutil.rmtree(ckpt, ignore_errors=True)
    ckpt.mkdir(parents=True)
    shutil.copy(src, ckpt / "config.json")
    shapes, dtype = checkpoint_tensors(AutoConfig.from_pretrained(ckpt))
    limit = MODELS[name].shard_bytes or float("inf")
    size = torch.tensor([], dtype=dtype).element_size()
    shards, cur, cur_bytes = [], [], 0
    for k, shape in shapes.items():
        nbytes = size * int(torch.Size(shape).numel())
        if cur and cur_bytes + nbytes > limit:
            shards.append(cur)
            cur, cur_bytes = [], 0
        cur.append(k)
        cur_bytes += nbytes
    shards.append(cur)
    torch.manual_seed(0)
    weight_map, total = {}, 0
    for i, keys in enumerate(shards):
        fname = (f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors" if MODELS[name].shard_bytes
                 else "model.safetensors")
        tensors = {k: torch.randn(shapes[k], dtype=dtype).mul_(0.02) for k in keys}
        save_file(tensors, str(ckpt / fname), metadata={"format": "pt"})
        total += sum(t.numel() * size for t in tensors.values())
        weight_map.update({k: fname for k in keys})
        del tensors
        print(f"  {name}: wrote {fname} ({len(keys)} tensors)", flush=True)
    if MODELS[name].shard_bytes:
        (ckpt / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2) + "\n")
    write_tokenizer(ckpt)
    stamp.write_text(recipe)
    return ckpt


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------
# Running the tools
# ---------------------------------------------------------------------------------------------
def mobius_args(dtype: str) -> list[str]:
    """mobius build / info options for an output dtype of the table."""
    return ["--precision", "int4", "--ep", "cpu"] if dtype == "int4" else ["--dtype", dtype]


def f32_package(model: str) -> Path:
    """mobius's f32 build of MODEL's checkpoint (flat layout): the ORT quantizer's input."""
    return WORK / "f32pkg" / model


def f32_model(model: str) -> Path:
    return f32_package(model) / "model.onnx"


def command(tool: str, model: str, ckpt: Path, out: Path, dtype: str, cache: Path,
            nbytes: int) -> list[str]:
    if tool == "mobius":
        return [str(MOBIUS_BIN), "build", "--config", str(ckpt), str(out), *mobius_args(dtype),
                "--runtime", "none", "--force"]
    if tool == "mobius-onnx":
        return [str(MOBIUS_ONNX / "bin" / "mobius"), "build", "--config", str(ckpt), str(out),
                "--dtype", dtype]
    if tool == "ort-genai":
        return [str(GENAI / "bin" / "python"), "-m", "onnxruntime_genai.models.builder",
                "-i", str(ckpt), "-o", str(out), "-p", {"f32": "fp32", "int4": "int4"}[dtype],
                "-e", "cpu", "-c", str(cache)]
    if tool == "optimum":
        return [str(OPTIMUM / "bin" / "optimum-cli"), "export", "onnx", "--model", str(ckpt),
                "--task", OPTIMUM_TASK.get(model, "text-generation-with-past"), str(out)]
    if tool == "hf-exporters":
        return [str(EXPORTERS / "bin" / "python"), str(BENCH / "export_transformers.py"), str(ckpt),
                str(out)]
    if tool == "ort-quantizer":
        out.mkdir(parents=True)
        return [str(GENAI / "bin" / "python"), "-m", "onnxruntime.quantization.matmul_nbits_quantizer",
                "--input_model", str(f32_model(model)),
                "--output_model", str(out / "model.onnx"), "--block_size", "32", "--bits", "4"]
    if tool == "write":
        return [sys.executable, str(BENCH / "write_floor.py"), str(out), str(nbytes)]
    if tool == "cp":
        return ["cp", "-r", str(ckpt), str(out)]
    raise ValueError(tool)


def predicted(ckpt: Path, dtype: str) -> dict:
    """What `mobius info` predicts of the build: output bytes and peak memory (MiB)."""
    r = subprocess.run([str(MOBIUS_BIN), "info", str(ckpt), *mobius_args(dtype), "--runtime", "none"],
                       capture_output=True, text=True)
    out_bytes = re.search(r"takes about [^(]*\((\d+) bytes", r.stdout)
    peak = re.search(r"peak memory about ([\d.]+) (KiB|MiB|GiB)", r.stdout)
    scale = {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}
    return {"out_bytes": int(out_bytes.group(1)) if out_bytes else None,
            "peak_mib": float(peak.group(1)) * scale[peak.group(2)] if peak else None}


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


def mem_available_kib() -> int:
    """MemAvailable of /proc/meminfo: what the machine can still give without swapping."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 1 << 40


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
    # ... and with the memory a killed run held given back (its processes take a while to exit).
    deadline = time.monotonic() + 120
    while mem_available_kib() < 4 * MEM_EXHAUSTED_KIB and time.monotonic() < deadline:
        time.sleep(1)
    timefile = WORK / "time.txt"
    timeout = PEER_TIMEOUT_S
    # A peer runs first in line for the kernel's OOM killer (choom): one that outgrows memory is
    # killed and reported so, not whatever else the machine runs.
    oom_first = ["choom", "-n", "1000", "--"] if tool in PEERS else []
    cmd = ["nice", "/usr/bin/time", "-v", "-o", str(timefile), "timeout", "-s", "KILL",
           str(timeout), *oom_first, *command(tool, model, ckpt, out, dtype, cache, nbytes)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    t0 = time.monotonic()
    logs = WORK / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "stdout.tmp", "w+") as so, open(logs / "stderr.tmp", "w+") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, env=env, cwd=WORK, start_new_session=True)
        anon_kib, exhausted = 0, False
        while proc.poll() is None:
            anon_kib = max(anon_kib, tree_rss_anon_kib(proc.pid))
            if tool in PEERS and mem_available_kib() < MEM_EXHAUSTED_KIB:
                exhausted = True
                os.killpg(proc.pid, 9)
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
        if exhausted:
            res["fail"] = (f"out of memory: killed by the bench when the machine had less than "
                           f"{MEM_EXHAUSTED_KIB // 1024} MiB available, at {anon_kib / 2**20:.1f} GiB of its own "
                           f"(anonymous) memory, after {elapsed:.0f} s")
        elif p.returncode in (137, -9) and elapsed >= timeout - 1:
            res["fail"] = f"timed out after {timeout // 60} min"
        elif signal or p.returncode in (137, -9):
            res["fail"] = (f"{signal or 'killed'} (out of memory?) at {rss / 2**20:.1f} GiB RSS"
                           if rss else (signal or "killed"))
        else:
            res["fail"] = failure_reason(p.stderr, p.returncode)
    elif tool not in ("cp", "write") and not any(out.rglob("*.onnx")):
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
        if not venv.exists():
            return f"(not installed: {venv.name})"
        r = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True)
        return r.stdout.strip() or f"(not installed: {venv.name})"

    return {
        "mobius": f"commit {os.environ.get('MOBIUS_COMMIT') or report.git_commit()} "
                  "(C++, Release build)",
        "mobius-onnx": pkg(MOBIUS_ONNX, ["mobius-onnx", "onnxscript", "onnx-ir", "torch",
                                         "transformers"]),
        "ort-genai": pkg(GENAI, ["onnxruntime-genai", "onnxruntime", "onnx-ir", "onnx", "torch",
                                 "transformers"]),
        "optimum": pkg(OPTIMUM, ["optimum-onnx", "optimum", "torch", "transformers"]),
        "hf-exporters": pkg(EXPORTERS, ["transformers", "torch", "onnxscript", "onnx-ir"]),
        "write": f"Python {sys.version.split()[0]} (os.posix_fallocate, os.pwrite)",
        "cp": subprocess.run(["cp", "--version"], capture_output=True,
                             text=True).stdout.splitlines()[0],
    }


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------
LABEL = {"mobius": "mobius", "write": "write mobius's output bytes (floor)", "cp": "`cp -r` (floor)",
         "mobius-onnx": "mobius-onnx (Python)", "ort-genai": "ORT GenAI model builder",
         "optimum": "Optimum (`optimum-cli export onnx`)",
         "hf-exporters": "transformers.exporters (ONNX backend)",
         "ort-quantizer": "ORT MatMulNBitsQuantizer on mobius's f32 package"}


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


def fmt_ratio(x: float, target: float | None, at_least: bool = False) -> str:
    s = f"{x:.3f}" if x < 0.1 else f"{x:.2f}"
    if target is None:
        return s
    ok = x >= target if at_least else x <= target
    return f"{s} {'✓' if ok else '✗'}"


def result_key(model: str, dtype: str, tool: str) -> str:
    return f"{model}/cp/cp" if tool == "cp" else f"{model}/{dtype}/{tool}"


def table(results: dict, meta: dict, model: str, dtype: str, missed: list[str]) -> list[str]:
    """One model's one output dtype: a row per tool, ratios against mobius, the targets."""
    ck = meta["checkpoints"][model]
    lines = [f"### {model}, {dtype} output (checkpoint {ck['bytes'] / 1e9:.2f} GB {ck.get('dtype', 'bf16')}, "
             f"{ck['shards']} file{'s' if ck['shards'] > 1 else ''})", ""]
    if MODELS[model].note:
        lines += [f"Cut: {MODELS[model].note}.", ""]
    lines += ["| tool | wall s (median) | runs (s) | CPU s | peak RSS MiB | peak anon MiB | output GB "
              "| mobius / tool wall |",
              "|---|---:|---|---:|---:|---:|---:|---:|"]
    mob = summarize(results.get(result_key(model, dtype, "mobius"), {}))
    for tool in TOOLS:
        if (tool, dtype) in UNSUPPORTED:
            if UNSUPPORTED[tool, dtype]:
                lines.append(f"| {LABEL[tool]} | {UNSUPPORTED[tool, dtype]} | | | | | | |")
            continue
        entry = results.get(result_key(model, dtype, tool), {})
        s = summarize(entry)
        if s is None:
            fails = [r for r in entry.get("runs", []) if "fail" in r]
            why = entry.get("skip") or (f"failed: {fails[0]['fail']}" if fails else "not run")
            if fails and fails[0].get("rss_kib"):
                why += f" (peak RSS {fails[0]['rss_kib'] / 1024:.0f} MiB)"
            lines.append(f"| {LABEL[tool]} | {why} | | | | | | |")
            continue
        walls = ", ".join(f"{w:.1f}" for w in s["walls"])
        cpu = "–" if s["cpu"] is None else f"{s['cpu']:.1f}"
        row = (f"| {LABEL[tool]} | {s['wall']:.2f} | {walls} | {cpu} | {s['rss'] / 1024:.0f} "
               f"| {s['anon'] / 1024:.0f} | {s['out'] / 1e9:.2f} |")
        if tool == "mobius" or mob is None:
            row += " |"
        elif tool == "write":
            r = mob["wall"] / s["wall"]
            row += f" {fmt_ratio(r, WALL_VS_WRITE)} (≤ {WALL_VS_WRITE:g}) |"
            if r > WALL_VS_WRITE:
                missed.append(f"{model} {dtype}: mobius wall {r:.2f} × the write floor (target ≤ 1.2)")
        elif tool == "ort-quantizer":
            r = mob["wall"] / s["wall"]
            row += f" {fmt_ratio(r, WALL_VS_QUANTIZER)} (≤ {WALL_VS_QUANTIZER:g}) |"
            if r > WALL_VS_QUANTIZER:
                missed.append(f"{model} int4: mobius's whole int4 build {r:.2f} × the ORT quantizer's "
                              f"wall (target ≤ 0.1)")
        else:
            row += f" {fmt_ratio(mob['wall'] / s['wall'], None)} |"
        lines.append(row)
    lines.append("")
    if mob is None:
        missed.append(f"{model} {dtype}: no successful mobius run")
    else:
        notes = []
        if mob["rss"] >= RSS_MAX_KIB:
            missed.append(f"{model} {dtype}: mobius peak RSS {mob['rss'] / 1024:.0f} MiB (target < 256)")
        notes.append(f"mobius peak RSS {mob['rss'] / 1024:.0f} MiB "
                     f"{'< 256 MiB ✓' if mob['rss'] < RSS_MAX_KIB else '≥ 256 MiB ✗'}")
        if dtype == "int4":
            notes.append(f"int4 throughput {ck['bytes'] / 1e9 / mob['wall']:.2f} GB/s of source "
                         f"(the whole build)")
        info = meta.get("info", {}).get(f"{model}/{dtype}")
        if info and info.get("out_bytes") and mob["out"]:
            notes.append(f"`mobius info` predicted {info['out_bytes'] / 1e9:.2f} GB of output "
                         f"(measured {mob['out'] / 1e9:.2f} GB) and about {info['peak_mib']:.0f} MiB "
                         f"peak memory (measured {mob['rss'] / 1024:.0f} MiB)")
        lines += ["; ".join(notes) + ".", ""]
    return lines


def render(results: dict, meta: dict) -> str:
    lines = [f"## {SECTIONS[meta.get('section', 'build')]}", ""]
    load = (f"**The machine was shared**: 2 cores with other work running at the same time (load "
            f"average {meta['load_start']} at the start, {meta['load_end']} at the end), so "
            f"every figure is noisy; " if report.shared(meta["load_start"]) else
            f"Nothing else ran on the machine (load average {meta['load_start']} at the start, "
            f"before any run; {meta['load_end']} at the end, the benchmark's own load); ")
    lines += [f"Machine: {meta['machine']}. {load}"
              f"runs are interleaved round-robin so that any outside load falls on "
              f"every tool alike, and each figure is the median of {meta['runs']} runs (fewer "
              f"where noted). Every tool runs under `nice /usr/bin/time -v`; the checkpoint is read "
              f"once before each run of a tool that reads it (so that it is in the page cache "
              f"where it fits: at 7B and above the previous run's output evicts it). Peak RSS is the largest process's maximum resident "
              f"set (`/usr/bin/time -v`), which counts the pages of memory-mapped checkpoint files "
              f"as they are read (clean page-cache pages the kernel can drop); peak anon is the "
              f"largest sum of `RssAnon` (heap) over the process tree, sampled every 0.2 s; "
              f"CPU s is user + system time (median). The write floor is the same byte count "
              f"as mobius's output written by `bench/write_floor.py` (blocks allocated first, "
              f"256 KiB `pwrite`s, as mobius writes) and nothing else. A peer past one hour is "
              f"killed and reported so. Run on {meta['date']}.", ""]
    if meta.get("earlier"):
        e = meta["earlier"]
        lines += [f"The runs of {', '.join(e['tools'])} are from an earlier run on {e['date']} "
                  f"(load average {e['load_start']} at its start, {e['load_end']} at its end; "
                  f"those tools did not change); the other tools were measured again for this "
                  f"commit, so their ratios compare runs under different load.", ""]
    lines += ["Versions: " + "; ".join(f"{k}: {v}" for k, v in meta["versions"].items()) + ".", ""]
    lines += ["Checkpoints: the real configs in `bench/configs/` with random weights in the config's "
              "dtype, sharded as the Hub shards each model. Outputs: f32, f16 and int4 (`--precision "
              "int4 --ep cpu`), weights in external data; mobius with `--runtime none`.", ""]
    missed: list[str] = []
    for model in MODELS:
        if model not in meta["checkpoints"]:
            continue
        for dtype in DTYPES:
            if any(k.startswith(f"{model}/{dtype}/") for k in results):
                lines += table(results, meta, model, dtype, missed)
    lines += ["Targets (issue 29): mobius wall ≤ 1.2 × the write floor; mobius peak RSS < 256 MiB; "
              "an int4 build ≤ 0.1 × the wall of onnxruntime's quantizer on the f32 package "
              "(✓ met, ✗ missed).", ""]
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
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS, choices=list(MODELS))
    ap.add_argument("--tools", nargs="+", default=TOOLS, choices=TOOLS)
    ap.add_argument("--dtypes", nargs="+", default=DTYPES, choices=DTYPES)
    ap.add_argument("--resume", action="store_true", help="keep finished runs of results.json")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    ap.add_argument("--rerun", nargs="+", default=[], choices=TOOLS,
                    help="with --resume: measure these tools again and keep the other tools' "
                         "runs from results.json (the table says which runs are older)")
    ap.add_argument("--render", action="store_true",
                    help="only rewrite docs/benchmarks.md from the results file")
    ap.add_argument("--section", default="build", choices=list(SECTIONS),
                    help="the docs/benchmarks.md section these runs render to (default build)")
    ap.add_argument("--results", type=Path,
                    help="where runs are kept (default bench/work/results.json, "
                         "results-SECTION.json for another section)")
    args = ap.parse_args()
    results_path = args.results or WORK / ("results.json" if args.section == "build"
                                           else f"results-{args.section}.json")
    if args.render:
        results = json.loads(results_path.read_text())
        meta = results.pop("_meta")
        report.update_section(meta.get("section", "build"), render(results, meta))
        return 0
    if not MOBIUS_BIN.exists():
        sys.exit(f"bench_build: {MOBIUS_BIN} is missing: build mobius (Release) first")
    for tool, venv in PEERS.items():
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
    meta.update(machine=report.machine(), runs=max(args.runs, meta.get("runs", 0)), versions=versions(),
                date=time.strftime("%Y-%m-%d"), section=args.section)
    meta.setdefault("load_start", report.load_average())
    meta.setdefault("checkpoints", {})
    meta.setdefault("info", {})

    def save():
        meta["load_end"] = report.load_average()
        results_path.write_text(json.dumps({**results, "_meta": meta}, indent=1) + "\n")
        if not args.no_doc:
            report.update_section(args.section, render(results, meta))

    def output_bytes(model: str, dtype: str) -> int:
        """mobius's output size for the write floor: its latest run's, else its prediction."""
        ok = [r for r in results.get(f"{model}/{dtype}/mobius", {}).get("runs", []) if "out_bytes" in r]
        return ok[-1]["out_bytes"] if ok else meta["info"][f"{model}/{dtype}"]["out_bytes"]

    ckpts = {}
    for model in args.models:
        print(f"checkpoint {model}", flush=True)
        ckpts[model] = ckpt = make_checkpoint(model)
        files = list(ckpt.glob("*.safetensors"))
        meta["checkpoints"][model] = {
            "bytes": sum(p.stat().st_size for p in files), "shards": len(files),
            "dtype": {"bfloat16": "bf16", "float16": "f16"}.get(
                json.loads((ckpt / "config.json").read_text()).get("torch_dtype"), "bf16")}
        for dtype in args.dtypes:
            meta["info"][f"{model}/{dtype}"] = predicted(ckpt, dtype)
    # The ORT quantizer's input, built once per model where it fits.
    for model, ckpt in ckpts.items():
        if "ort-quantizer" not in args.tools or "int4" not in args.dtypes:
            continue
        entry = results.setdefault(f"{model}/int4/ort-quantizer", {"runs": []})
        need = meta["info"].get(f"{model}/f32", predicted(ckpt, "f32"))["out_bytes"] or 0
        if model in SEVERAL_GRAPHS:
            entry["skip"] = "not run: the package has several graphs; the quantizer takes one model file"
            continue
        if need > QUANTIZER_MAX_F32_BYTES:
            entry["skip"] = (f"not run: it loads mobius's f32 package whole ({need / 1e9:.1f} GB), "
                             f"more than fits beside the checkpoint here")
            continue
        if not f32_model(model).exists():
            subprocess.run([str(MOBIUS_BIN), "build", "--config", str(ckpt), str(f32_package(model)),
                            "--dtype", "f32", "--runtime", "none", "--layout", "flat", "--force"],
                           check=True)
    # Run-major order: every tool gets run 1 on every model before any run 2, so a run cut short
    # still leaves a complete (if shorter) table.
    for r in range(args.runs):
        for model, ckpt in ckpts.items():
            for dtype in args.dtypes:
                for tool in args.tools:
                    if (tool, dtype) in UNSUPPORTED or (tool == "cp" and dtype != args.dtypes[0]):
                        continue
                    entry = results.setdefault(result_key(model, dtype, tool), {"runs": []})
                    if len(entry["runs"]) > r or entry.get("skip"):
                        continue
                    if any("fail" in x for x in entry["runs"]):
                        continue  # a failed or timed-out peer is not retried
                    print(f"[{time.strftime('%H:%M:%S')}] {result_key(model, dtype, tool)} run "
                          f"{r + 1}/{args.runs} ...", end=" ", flush=True)
                    if tool != "write":
                        # Every tool that reads the checkpoint finds it in the page cache where it
                        # fits: at 7B-30B the previous run's output (and cp's copy) evicts it, and
                        # a tool run after them would read it from the disk, its floors not.
                        subprocess.run(f"cat '{ckpt}'/*.safetensors > /dev/null", shell=True, check=True)
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
