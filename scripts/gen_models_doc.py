"""Regenerates the supported-model table from the registry and the last parity run.

Inputs : `build/mobius list models` (the registry) and build/parity-results/results.json (written
         by the parity suite: `bash scripts/test.sh`).
Outputs: docs/models.md and the table in README.md (between the models markers). Parity results
         are documentation, never compiled into the binary.
A model type is verified when it has at least one parity row and all its rows pass. docs/models.md
also lists the causal-LM types of transformers that are not registered, with the reason of each
(scripts/not_yet.py).
"""
import json
import subprocess
import sys
from pathlib import Path

from not_yet import encoders_not_yet, not_yet

REPO = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- models:begin -->", "<!-- models:end -->"


def registry(what: str = "models") -> list[dict]:
    """`mobius list models` (transformers model types) or `mobius list components` (diffusers
    classes): the name, family and task of each."""
    out = subprocess.run([str(REPO / "build" / "mobius"), "list", what], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    rows = []
    for line in out[1:]:
        model_type, family, task = line.split()[:3]
        rows.append({"model_type": model_type, "family": family, "task": task})
    return rows


def diffusers_table(by_type: dict[str, list], components: list[dict]) -> tuple[str, int]:
    """The diffusers components' table and how many of them are verified: their rows compare with a
    tolerance relative to the output's scale (tests/parity/test_diffusion_components.py)."""
    lines, n_verified = "", 0
    for e in components:
        rows = by_type.get(e["model_type"], [])
        verified = bool(rows) and all(r["status"] == "pass" for r in rows)
        n_verified += verified
        worst = max(rows, key=lambda r: r["margin"] or 0, default=None)
        lines += (f"| {e['model_type']} | {e['family']} | {e['task']} | {'yes' if verified else 'no'} | {len(rows)} | "
                  + (f"{worst['prefill']:.1e} | {fmt(worst['scale'], '.3g')} | {worst['margin']:.2f} |\n"
                     if worst and worst["prefill"] is not None else "- | - | - |\n"))
    return ("| diffusers class | family | task | verified | parity rows | max \\|Δ\\| | scale | margin |\n"
            "|---|---|---|---|---|---|---|---|\n" + lines), n_verified


MARGIN = 0.5  # the largest max|Δ| / tolerance (harness.TOL) a row may have
SCALE = 64.0  # the largest |value| a row may compare: tiny models are made well-conditioned


def fmt(x, spec: str = ".1e") -> str:
    return "-" if x is None else format(x, spec)


def main() -> int:
    results = json.loads((REPO / "build" / "parity-results" / "results.json").read_text())
    tol = results["tolerance"]
    by_type: dict[str, list] = {}
    for r in results["rows"]:
        by_type.setdefault(r["model_type"], []).append(r)
    edge = [r for r in results["rows"] if (r.get("margin") or 0) > MARGIN
            or (not r.get("relative") and (r.get("scale") or 0) > SCALE)]
    if edge:  # a row this close to the tolerance passes or fails with the next machine's CPU
        for r in edge:
            print(f"gen_models_doc: {r['model_type']}-{r['variant']}: margin {r['margin']:.2f} > {MARGIN} "
                  f"(max|Δ| {max(d for d in (r['prefill'], r['decode']) if d is not None):.2e}, "
                  f"scale {fmt(r.get('scale'), '.3g')}, at most {SCALE:g}): make the tiny model better "
                  f"conditioned", file=sys.stderr)
        return 1
    table = []
    for e in registry():
        rows = by_type.get(e["model_type"], [])
        verified = bool(rows) and all(r["status"] == "pass" for r in rows)
        deltas = [d for r in rows for d in (r.get("prefill"), r.get("decode")) if d is not None]
        scales = [r["scale"] for r in rows if r.get("scale") is not None]
        table.append({**e, "verified": verified, "rows": len(rows),
                      "max_delta": max(deltas) if deltas else None, "scale": max(scales) if scales else None})
    v = results["versions"]
    header = ("| model type | family | task | verified | parity rows | max \\|Δ\\| | scale | margin |\n"
              "|---|---|---|---|---|---|---|---|\n")
    lines = "".join(
        f"| {t['model_type']} | {t['family']} | {t['task']} | {'yes' if t['verified'] else 'no'} | "
        f"{t['rows']} | {t['max_delta']:.1e} | {fmt(t['scale'], '.3g')} | {t['max_delta'] / tol:.2f} |\n"
        if t["max_delta"] is not None else
        f"| {t['model_type']} | {t['family']} | {t['task']} | no | 0 | - | - | - |\n" for t in table)
    n_ok = sum(t["verified"] for t in table)
    summary = (f"{n_ok} of {len(table)} registered model types verified against transformers "
               f"{v['transformers']} (torch {v['torch']}, onnxruntime {v['onnxruntime']}) on "
               f"{results['cpu']['line']}. max |Δ| is the largest difference of mobius' float32 "
               f"outputs (logits, hidden states, caches) from transformers' float64 forward over all "
               f"parity rows of the type, tolerance {tol:g}; scale is the largest |value| compared "
               f"(the reference's), at most {SCALE:g}; margin is max |Δ| / tolerance, at most {MARGIN} "
               f"for every row.\n")
    components = registry("components")
    diffusers_rows, n_diffusers = diffusers_table(by_type, components)
    diffusers = (f"\n{n_diffusers} of {len(components)} diffusers component classes (`mobius list components`) "
                 f"verified against diffusers {v.get('diffusers', '?')}'s float64 forward, tolerance {tol:g} "
                 f"times the output's scale (its largest |value|): max |Δ| and scale are those of the output "
                 f"with the largest max |Δ| / scale over the class' rows, margin is max |Δ| / (tolerance x "
                 f"scale), at most {MARGIN} for every row.\n\n" + diffusers_rows)
    row_header = ("| model type | variant | prefill max \\|Δ\\| | decode max \\|Δ\\| | handoff max \\|Δ\\| | scale | "
                  "margin | status |\n|---|---|---|---|---|---|---|---|\n")
    row_lines = "".join(
        f"| {r['model_type']} | {r['variant']} | {fmt(r['prefill'])} | {fmt(r['decode'])} | "
        f"{fmt(r.get('handoff'))} | {fmt(r.get('scale'), '.3g')} | {fmt(r.get('margin'), '.2f')} | {r['status']} |\n"
        for r in results["rows"])
    stateful = sorted({r["model_type"] for r in results["rows"] if r.get("handoff") is not None})
    state_model = (
        f"\n## Layer states\n\nA text-generation package's graph takes each layer's state as "
        "`past_key_values.{i}.<name>` and returns it as `present.{i}.<name>`: a key / value cache for an "
        "attention layer, and the tensors a state-space, linear-attention or recurrent layer declares for "
        "the others (conv windows, SSM, DeltaNet, lightning-attention, mLSTM or RWKV states, replaced every "
        "step; an indexer's keys beside a cache, appended), named as docs/design.md \"The state model\" "
        f"lists them. The rows of the {len(stateful)} types whose layers carry a recurrent state also check "
        "the state handoff (the handoff column): a prompt prefilled in two chunks, the second from the "
        "state the first returned, gives the logits of one prefill of the whole prompt. Those types: "
        + ", ".join(stateful) + ".\n")
    transformers_version = v["transformers"]
    missing = not_yet({e["model_type"] for e in registry()})
    not_yet_lines = "".join(f"| {t} | {reason} |\n" for t, reason in missing)
    not_yet_section = (
        f"\n## Not yet\n\nThe {len(missing)} model types of transformers {transformers_version}'s causal-LM "
        "mapping (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) that mobius does not register, and why "
        "(scripts/not_yet.py).\n\n| model type | reason |\n|---|---|\n" + not_yet_lines)
    encoders_missing = encoders_not_yet({e["model_type"] for e in registry()})
    not_yet_section += (
        f"\n## Text encoders not yet\n\nThe {len(encoders_missing)} encoder-only text types of transformers "
        f"{transformers_version} (a masked-LM, text-encoding, classification, question-answering or "
        "multiple-choice class and no causal LM) that mobius does not register, and why "
        "(scripts/not_yet.py).\n\n| model type | reason |\n|---|---|\n"
        + "".join(f"| {t} | {reason} |\n" for t, reason in encoders_missing))
    (REPO / "docs" / "models.md").write_text(
        "# Supported models\n\nGenerated by `scripts/gen_models_doc.py` from the registry and the "
        "last parity run; do not edit by hand.\n\n" + summary + "\n" + header + lines + diffusers +
        "\n## Parity rows\n\nEvery row of the last parity run (docs/design.md, testing): the float32 "
        "differences from transformers' float64 forward, the scale of what was compared, and the "
        "margin to the tolerance.\n\n" + row_header + row_lines + state_model + not_yet_section)
    readme = (REPO / "README.md").read_text()
    if BEGIN in readme:
        pre, rest = readme.split(BEGIN, 1)
        post = rest.split(END, 1)[1]
        (REPO / "README.md").write_text(pre + BEGIN + "\n" + summary + "\n" + header + lines + diffusers + END + post)
    print(summary.strip())
    print(diffusers.strip().splitlines()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
