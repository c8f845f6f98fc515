#!/usr/bin/env bash
# Sets up, builds, and transcribes a spoken sentence with real Whisper weights (scripts/speech_demo.py):
# onnxruntime-genai on the package mobius builds, and transformers, print their transcripts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
.venv/bin/python scripts/speech_demo.py "$@"
