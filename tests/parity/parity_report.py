"""pytest plugin (registered by tests/conftest.py, so that the xdist controller loads it too; a
conftest.py below tests/ is only seen by the workers): collects the per-row JSON files written by
test_decoder_parity, test_encoder_parity and test_ep_lowering (one per row, from any worker) into a table printed at the end of the session
and into build/parity-results/results.json."""

import json
import platform
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


# The instruction-set extensions onnxruntime's MLAS and PyTorch choose their float32 kernels by
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
              "avx_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")


def cpu_features() -> dict:
    """The CPU the parity run had: its model name and SIMD extensions (/proc/cpuinfo) and PyTorch's
    kernel level (torch.backends.cpu.get_cpu_capability), so that a difference in the tables between
    two machines can be read from them."""
    info = {"machine": platform.machine(), "model": platform.processor() or "unknown", "flags": []}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            info["model"] = value.strip()
        elif key.strip() == "flags":
            have = set(value.split())
            info["flags"] = [f for f in SIMD_FLAGS if f in have]
            break
    import torch  # noqa: PLC0415 - the controller needs it only here

    info["torch_capability"] = torch.backends.cpu.get_cpu_capability()
    return info


def cpu_line(cpu: dict) -> str:
    return f"{cpu['model']} ({cpu['machine']}; {' '.join(cpu['flags']) or 'no SIMD flags read'}; torch {cpu['torch_capability']})"


def pytest_terminal_summary(terminalreporter, config):
    if _is_worker(config) or not ROWS_DIR.is_dir():
        return
    rows = sorted((json.loads(p.read_text()) for p in ROWS_DIR.glob("*.json")), key=lambda r: r["index"])
    if not rows:
        return
    versions = {p: version(p) for p in ("transformers", "diffusers", "torch", "onnxruntime")}
    cpu = cpu_features()
    tr = terminalreporter
    tr.write_sep("=", "mobius parity (T3): " + ", ".join(f"{k} {v}" for k, v in versions.items())
                 + ", tolerance 1e-4 against transformers in float64")
    tr.write_line(f"cpu: {cpu_line(cpu)}")
    head = (f"{'model_type':<13} {'variant':<24} {'prefill max|Δ|':>15} {'decode max|Δ|':>14} {'scale':>9} "
            f"{'margin':>6} {'tokens':>7} {'genai':>6}  {'checker':<7} status")
    tr.write_line(head)
    tr.write_line("-" * len(head))
    for r in rows:
        margin = "-" if r.get("margin") is None else f"{r['margin']:.2f}"
        tr.write_line(f"{r['model_type']:<13} {r['variant']:<24} {_fmt(r['prefill']):>15} {_fmt(r['decode']):>14} "
                      f"{_fmt(r.get('scale')):>9} {margin:>6} "
                      f"{r['tokens'] or '-':>7} {r.get('genai') or '-':>6}  {r['checker'] or '-':<7} {r['status']}")
        if r.get("routing"):
            tr.write_line(f"{'':<14}  experts picked on the prompt: {r['routing']}")
        if r.get("lowered"):
            tr.write_line(f"{'':<14}  lowered: {r['lowered']}")
        for f in r["failures"]:
            tr.write_line(f"{'':<14}! {f[:200]}")
    passed = sum(r["status"] == "pass" for r in rows)
    tr.write_line(f"{passed}/{len(rows)} rows pass")
    out = {"versions": versions, "cpu": dict(cpu, line=cpu_line(cpu)), "tolerance": 1e-4, "reference": "transformers float64",
           "rows": [{k: v for k, v in r.items() if k != "index"} for r in rows]}
    (RESULTS_DIR / "results.json").write_text(json.dumps(out, indent=1) + "\n")
