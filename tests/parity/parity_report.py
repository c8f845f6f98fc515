"""pytest plugin (registered by tests/conftest.py, so that the xdist controller loads it too; a
conftest.py below tests/ is only seen by the workers): collects the per-row JSON files written by
test_decoder_parity, test_encoder_parity and test_ep_lowering (one per row, from any worker) into a table printed at the end of the session
and into build/parity-results/results.json."""

import json
import shutil
from importlib.metadata import version
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parents[2] / "build" / "parity-results"
ROWS_DIR = RESULTS_DIR / "rows"


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    if not _is_worker(config):  # the controller (or a plain run) starts a fresh session dir
        shutil.rmtree(ROWS_DIR, ignore_errors=True)


def _fmt(x):
    return "-" if x is None else f"{x:.2e}"


def pytest_terminal_summary(terminalreporter, config):
    if _is_worker(config) or not ROWS_DIR.is_dir():
        return
    rows = sorted((json.loads(p.read_text()) for p in ROWS_DIR.glob("*.json")), key=lambda r: r["index"])
    if not rows:
        return
    versions = {p: version(p) for p in ("transformers", "torch", "onnxruntime")}
    tr = terminalreporter
    tr.write_sep("=", "mobius parity (T3): " + ", ".join(f"{k} {v}" for k, v in versions.items())
                 + ", tolerance 1e-4")
    head = f"{'model_type':<13} {'variant':<24} {'prefill max|Δ|':>15} {'decode max|Δ|':>14} {'tokens':>7} {'genai':>6}  {'checker':<7} status"
    tr.write_line(head)
    tr.write_line("-" * len(head))
    for r in rows:
        tr.write_line(f"{r['model_type']:<13} {r['variant']:<24} {_fmt(r['prefill']):>15} {_fmt(r['decode']):>14} "
                      f"{r['tokens'] or '-':>7} {r.get('genai') or '-':>6}  {r['checker'] or '-':<7} {r['status']}")
        if r.get("routing"):
            tr.write_line(f"{'':<14}  experts picked on the prompt: {r['routing']}")
        if r.get("lowered"):
            tr.write_line(f"{'':<14}  lowered: {r['lowered']}")
        for f in r["failures"]:
            tr.write_line(f"{'':<14}! {f[:200]}")
    passed = sum(r["status"] == "pass" for r in rows)
    tr.write_line(f"{passed}/{len(rows)} rows pass")
    out = {"versions": versions, "tolerance": 1e-4,
           "rows": [{k: v for k, v in r.items() if k != "index"} for r in rows]}
    (RESULTS_DIR / "results.json").write_text(json.dumps(out, indent=1) + "\n")
