#!/usr/bin/env bash
# Sets up, builds and runs every test: GoogleTest unit tests (ctest), then the pytest suites
# (parity against transformers, bad-input CLI tests) on all cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure --parallel "$(nproc)")
.venv/bin/python -m pytest tests -n "$(nproc)" -q "$@"
