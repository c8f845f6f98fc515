#!/usr/bin/env bash
# Configures and builds mobius (Release) into build/: the CLI, the unit tests and the Python module
# (build/python/mobius_cpp, with .venv's Python and nanobind). The options are given every time:
# the wheel build of scripts/test_wheel.sh reuses this build directory (and leaves its SKBUILD*
# variables in the cache, removed here).
set -euo pipefail
cd "$(dirname "$0")/.."
# No CCACHE_BASEDIR: a precompiled header records the absolute paths of the headers it holds, so a
# .gch made in another checkout (clone, worktree) and served by ccache there would hold that
# checkout's headers, which `#pragma once` then takes for other files (redefinitions). Each checkout
# caches its own objects.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOBIUS_BUILD_TESTS=ON -DMOBIUS_BUILD_PYTHON=ON \
  -DPython_EXECUTABLE="$PWD/.venv/bin/python" -U 'SKBUILD*' >/dev/null
cmake --build build --parallel "$(nproc)"
