"""The float32 reference evaluator (src/eval) seen from Python through the test-only tool
`mobius-eval` (tools/mobius_eval), next to onnxruntime."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

import harness as H


def eval_bin() -> Path:
    return H.mobius_bin().parent / "mobius-eval"


def _encode(a: np.ndarray) -> dict:
    a = np.asarray(a)
    dtype = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64", np.dtype(np.bool_): "bool"}[a.dtype]
    data = a.astype(np.int64) if a.dtype == np.bool_ else a
    return {"dtype": dtype, "shape": list(a.shape), "data": data.ravel().tolist()}


def _decode(j: dict) -> np.ndarray:
    dtype = {"float32": np.float32, "int64": np.int64, "bool": np.bool_}[j["dtype"]]
    return np.asarray(j["data"], dtype=np.float64 if dtype is np.float32 else np.int64).astype(dtype).reshape(j["shape"])


def run(model: Path, feeds: dict) -> dict:
    """Runs `model` on `feeds` (name -> numpy array); returns name -> numpy array."""
    r = subprocess.run([str(eval_bin()), "run", str(model)], input=json.dumps({k: _encode(v) for k, v in feeds.items()}),
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"mobius-eval exited {r.returncode}: {r.stderr.strip()}")
    return {k: _decode(v) for k, v in json.loads(r.stdout).items()}


def self_check(model: Path, layers: int, kv_heads: int, head_dim: int, vocab: int) -> dict:
    r = subprocess.run([str(eval_bin()), "self-check", str(model), str(layers), str(kv_heads), str(head_dim), str(vocab)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"mobius-eval self-check exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def max_rel(got: np.ndarray, ref: np.ndarray) -> float:
    """max |Δ| relative to the reference's scale (at least 1)."""
    ref64 = np.asarray(ref, np.float64)
    scale = max(1.0, float(np.max(np.abs(ref64)))) if ref64.size else 1.0
    return float(np.max(np.abs(np.asarray(got, np.float64) - ref64))) / scale if ref64.size else 0.0
