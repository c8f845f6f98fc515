#!/usr/bin/env bash
# Configures build-fuzz/ (clang, the library with AddressSanitizer and UndefinedBehaviorSanitizer:
# CMakeLists.txt MOBIUS_FUZZ) and builds the given targets there. One configuration for both users:
# scripts/fuzz.sh (the libFuzzer targets) and scripts/sanitize.sh (the unit tests), so the
# sanitized library is compiled once for both.
#
#   bash scripts/build_sanitized.sh fuzz_config mobius_unit_tests
set -euo pipefail
cd "$(dirname "$0")/.."
# No CCACHE_BASEDIR: a precompiled header records the absolute paths of the headers it holds, so a
# .gch made in another checkout (clone, worktree) and served by ccache there would hold that
# checkout's headers, which `#pragma once` then takes for other files (redefinitions). Each checkout
# caches its own objects.
CC=clang-16 CXX=clang++-16 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=None -DMOBIUS_FUZZ=ON \
  -DMOBIUS_BUILD_TESTS=ON -DMOBIUS_BUILD_PYTHON=OFF >/dev/null
cmake --build build-fuzz --parallel "$(nproc)" --target "$@"
