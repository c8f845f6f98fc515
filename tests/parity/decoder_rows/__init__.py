"""The text-generation parity rows, one module per family (the registry's family column, `mobius
list models`): each module's VARIANTS maps model_type -> [(variant, config overrides)] (the override
schema: harness.py). A new decoder type adds its rows to its family's module, or a new module."""

import importlib
import pkgutil

VARIANTS: dict[str, list[tuple[str, dict]]] = {}
for _m in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _m == "shared":
        continue
    for _type, _rows in importlib.import_module(f"{__name__}.{_m}").VARIANTS.items():
        assert _type not in VARIANTS, f"{_type}: rows in two family modules"
        VARIANTS[_type] = _rows
