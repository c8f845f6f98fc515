"""The Python module under test: the build tree's (build/python/mobius_cpp, scripts/build.sh) by
default; with MOBIUS_WHEEL=1 the one installed in the running interpreter (scripts/test_wheel.sh
runs these tests in a fresh virtual environment where `pip install .` put it)."""

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

if os.environ.get("MOBIUS_WHEEL") != "1":
    sys.path.insert(0, str(REPO / "build" / "python"))
