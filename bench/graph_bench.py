#!/usr/bin/env python3
"""Graph-construction benchmark: every registered model type at a realistic depth, no weights.

For each type that `build/mobius list models` registers, writes the parity harness's tiny config
(tests/parity/harness.py make_config, the type's first decoder or encoder parity row) with
num_hidden_layers raised to 32 into bench/work/graph/TYPE/config.json (the other types: their
tests/data/configs file as it is), then runs build/mobius_graph_bench on all of them
(HfConfig::load + registry create + build_model + to_model_proto, min over --reps) and writes the
table to docs/benchmarks.md. Target: < 50 ms per type.

    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOBIUS_BUILD_BENCH=ON
    cmake --build build --target mobius mobius_graph_bench
    .venv/bin/python bench/graph_bench.py --reps 20
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402

REPO = report.REPO
sys.path.insert(0, str(REPO / "tests" / "parity"))
import harness  # noqa: E402

WORK = REPO / "bench" / "work" / "graph"
BENCH_BIN = REPO / "build" / "mobius_graph_bench"
LAYERS = 32
TARGET_MS = 50.0


def registered_types() -> list[str]:
    out = subprocess.run([str(REPO / "build" / "mobius"), "list", "models"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    return [line.split()[0] for line in out[1:] if line.strip()]


def tiny_config(model_type: str, out: Path) -> Path:
    """The type's checked-in tiny config (tests/data/configs), at its own depth."""
    config = out / "config.json"
    config.write_text((REPO / "tests" / "data" / "configs" / f"{model_type}.json").read_text())
    return config


def write_config(model_type: str) -> Path:
    out = WORK / model_type
    out.mkdir(parents=True, exist_ok=True)
    # the first (default) decoder or encoder parity row; another type (vision, audio, encoder-decoder,
    # vision-language: rows of their own harnesses) builds its checked-in tiny config at its own depth
    overrides = next((ov for mt, _, ov in harness.rows() + harness.encoder_rows() if mt == model_type), None)
    if overrides is None:
        return tiny_config(model_type, out)
    # through the constructor, so per-layer fields (layer_types) follow the depth; GPT-Neo's
    # attention_types ([[pattern, repeats], ...]) must spell the depth out: repeat the pattern
    # per-layer lists of the row (layer_types, ...) repeated to the depth
    merged = {**harness.base_kwargs(model_type), **overrides}
    depth = merged.get("num_hidden_layers")
    per_layer = {k: (v * LAYERS)[:LAYERS] for k, v in merged.items()
                 if (k.endswith("types") or k == "layers_block_type") and isinstance(v, list) and len(v) == depth}
    overrides = {**overrides, **per_layer, "num_hidden_layers": LAYERS}
    types = overrides.get("attention_types", harness.base_kwargs(model_type).get("attention_types"))
    if types:
        overrides["attention_types"] = [[pattern, LAYERS // len(pattern)] for pattern, _ in types]
    try:
        config = harness.make_config(model_type, overrides)
    except Exception:  # noqa: BLE001 - a config class that ties another field to the depth: the tiny config as it is
        return tiny_config(model_type, out)
    config.to_json_file(out / "config.json")
    # a type whose config ties more fields to the depth (gemma4_text's per-layer views) than the
    # layer types repeated above: its tiny config as it is
    probe = subprocess.run([str(REPO / "build" / "mobius"), "build", "--config", str(out), str(out / "probe"),
                            "--no-weights", "--runtime", "none", "--force"], capture_output=True)
    if probe.returncode != 0:
        return tiny_config(model_type, out)
    return out / "config.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="repetitions per type (minimum reported)")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    args = ap.parse_args()
    if not BENCH_BIN.exists():
        sys.exit(f"graph_bench: {BENCH_BIN} is missing: configure with -DMOBIUS_BUILD_BENCH=ON")
    types = registered_types()
    missing = [t for t in types if t not in harness.all_types()]
    if missing:
        sys.exit(f"graph_bench: registered types without a parity row: {' '.join(missing)}")
    paths = [write_config(t) for t in types]
    load = report.load_average()
    out = subprocess.run([str(BENCH_BIN), "--reps", str(args.reps), *map(str, paths)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"graph_bench: {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        model_type, nodes, min_ms, median_ms, _ = line.split("\t")
        rows.append((model_type, int(nodes), float(min_ms), float(median_ms)))
    slowest = max(rows, key=lambda r: r[2])
    lines = ["## Graph construction per registered type (no weights)", "",
             f"`build/mobius_graph_bench` (bench/graph_bench.cpp, built with "
             f"`-DMOBIUS_BUILD_BENCH=ON`): `HfConfig::load` + registry create + `build_model` + "
             f"`to_model_proto`, no weights; the minimum (and median) over {args.reps} repetitions "
             f"in one process. Configs: each type's first row of the parity harness "
             f"(tests/parity/harness.py `make_config`: hidden 64, 4 heads, vocab 256) with "
             f"`num_hidden_layers` = {LAYERS} (the layer-type lists repeated to it); the other types (vision, "
             "audio, encoder-decoder, vision-language, diffusers, and those whose config ties more fields to the "
             "depth) their tests/data/configs file at its own depth. Graph size grows with depth, not width. Machine: "
             f"{report.machine()}, "
             f"{'**shared** with other work' if report.shared(load) else 'nothing else running'} "
             f"(load average {load}). "
             f"mobius commit {report.git_commit()}, run on {time.strftime('%Y-%m-%d')}.", "",
             "| model_type | nodes | min ms | median ms | < 50 ms |", "|---|---:|---:|---:|:-:|"]
    for model_type, nodes, min_ms, median_ms in rows:
        ok = "✓" if min_ms < TARGET_MS else "✗"
        lines.append(f"| {model_type} | {nodes} | {min_ms:.2f} | {median_ms:.2f} | {ok} |")
    lines += ["", f"Slowest: **{slowest[0]}**, {slowest[2]:.2f} ms (target < {TARGET_MS:g} ms: "
              f"{'met' if slowest[2] < TARGET_MS else 'missed'}).", ""]
    text = "\n".join(lines)
    if not args.no_doc:
        report.update_section("graph", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
