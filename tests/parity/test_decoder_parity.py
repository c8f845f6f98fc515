"""T3: transformers (float32, eager) vs the ONNX model mobius builds, one row per (model_type, variant).

Each row: padded batch prefill, one decode step through the cache, 24 greedy tokens, onnx.checker.
The measurements go to build/parity-results/ and are printed as a table at the end of the session.
"""

import pytest

import harness as H

ROWS = [pytest.param(i, mt, name, ov, id=f"{mt}-{name}") for i, (mt, name, ov) in enumerate(H.rows())]


@pytest.mark.parametrize("index,model_type,name,overrides", ROWS)
def test_parity(index, model_type, name, overrides, tmp_path_factory):
    row = dict(index=index, model_type=model_type, variant=name, prefill=None, decode=None,
               tokens=None, checker=None, status="error", failures=[])
    try:
        failures = H.run_parity(model_type, name, overrides, tmp_path_factory.mktemp(f"{model_type}-{name}"), row)
        row.update(failures=failures, status="fail" if failures else "pass")
    except BaseException as e:
        row["failures"].append(f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}")
        raise
    finally:
        H.write_row(row)
    assert not failures, "\n".join(failures)
