#!/usr/bin/env bash
# Sets up, builds, and runs the main job on the default model (scripts/demo.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
.venv/bin/python scripts/demo.py "$@"
