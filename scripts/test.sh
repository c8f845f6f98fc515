#!/usr/bin/env bash
# Sets up, builds and runs every test: GoogleTest unit tests (ctest), a short run of every fuzz
# target (scripts/fuzz.sh), then the pytest suites (parity against transformers, bad-input and
# hostile-input CLI tests, the Python module) on all cores, then the packages in Optimum's ORT
# classes (bench/test_optimum.py, its own environment), then the wheel (scripts/test_wheel.sh):
# `pip wheel .` over build/, repaired, installed into a fresh virtual environment, tests/python.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time, printed as it ends (the CI budget is 45 minutes: these lines say where it goes).
step() {
  local start=$SECONDS
  "$@"
  echo "scripts/test.sh: $* took $((SECONDS - start)) s (total $SECONDS s)"
}
step bash scripts/setup.sh
step bash scripts/build.sh
(cd build && ctest --output-on-failure --parallel "$(nproc)")
# Every fuzz target for 20 s from the checked-in corpus (a crash, hang or runaway memory fails).
step bash scripts/fuzz.sh 20
# The unit tests over the same sanitized library (ASan + UBSan): undefined behaviour on ordinary inputs.
step bash scripts/sanitize.sh
# The pytest run needs about 6 GB free under the temp directory at its peak (the over-2-GiB package:
# a 2.7 GB checkpoint and its 2.7 GB build): a warning up front explains builds failing on ENOSPC.
tmp="${TMPDIR:-/tmp}"
free_gb=$(( $(df -Pk "$tmp" | awk 'NR == 2 {print $4}') / 1024 / 1024 ))
if (( free_gb < 6 )); then
  echo "scripts/test.sh: warning: only ${free_gb} GB free under $tmp; the tests need about 6 GB" >&2
fi
# Tests marked large_download (over 1 GB of real weights fetched at test time) run on their own:
# .venv/bin/python -m pytest -m large_download
# --durations: the slowest tests, where the suite's time goes.
step .venv/bin/python -m pytest tests -n "$(nproc)" -q -m "not large_download" --durations=25 "$@"
# The packages in Optimum's ORT classes, in their own pinned environment (bench/requirements-optimum.txt:
# optimum-onnx 0.1.0 needs transformers < 4.58), one row per task family (bench/test_optimum.py).
step bash bench/setup_bench.sh optimum
step bench/.venv-optimum/bin/python -m pytest bench/test_optimum.py -q
step bash scripts/test_wheel.sh -n "$(nproc)"
