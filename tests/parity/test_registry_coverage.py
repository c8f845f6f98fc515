"""Every model type the binary registers has a parity row, and every parity row is registered."""

import harness as H


def registered_types() -> list[str]:
    r = H.run_mobius("list", "models")
    assert r.returncode == 0, r.stderr
    lines = [line.split() for line in r.stdout.splitlines() if line.strip()]
    assert lines and lines[0][0] == "model_type", f"expected a header line starting 'model_type':\n{r.stdout}"
    types = [tok[0] for tok in lines[1:]]
    assert types, "mobius list models printed no model types"
    return types


def test_every_registered_type_has_a_parity_row():
    missing = sorted(set(registered_types()) - set(H.VARIANTS))
    assert not missing, f"registered without a row in tests/parity/harness.py VARIANTS: {missing}"


def test_every_parity_row_is_registered():
    unknown = sorted(set(H.VARIANTS) - set(registered_types()))
    assert not unknown, f"VARIANTS rows for types mobius does not register: {unknown}"
