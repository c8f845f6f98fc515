"""T3: transformers (float32, eager) vs the ONNX model mobius builds, one row per (model_type, variant).

Each row: padded batch prefill, one decode step through the cache, 24 greedy tokens (onnxruntime
and onnxruntime-genai), onnx.checker.
The measurements go to build/parity-results/ and are printed as a table at the end of the session.
"""

import pytest

import decoder_harness as D
import harness as H

ROWS = [pytest.param(i, mt, name, ov, id=f"{mt}-{name}") for i, (mt, name, ov) in enumerate(H.rows())]


@pytest.mark.parametrize("index,model_type,name,overrides", ROWS)
def test_parity(index, model_type, name, overrides, tmp_path_factory):
    with H.recorded(index, model_type, name) as row:
        failures = D.run_parity(model_type, overrides, tmp_path_factory.mktemp(f"{model_type}-{name}"), row)
        row.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


def test_reference_stack_is_pinned():
    """Reference behaviour changes between releases: the installed stack must be requirements.txt's."""
    from importlib.metadata import version

    pins = dict(line.split("==") for line in (H.REPO / "requirements.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    wrong = {p: (version(p), pins[p]) for p in ("torch", "transformers", "onnxruntime", "onnx")
             if version(p).split("+")[0] != pins[p]}
    assert not wrong, f"installed vs pinned: {wrong}"
