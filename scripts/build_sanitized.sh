#!/usr/bin/env bash
# Configures build-fuzz/ (clang, the library with AddressSanitizer and UndefinedBehaviorSanitizer:
# CMakeLists.txt MOBIUS_FUZZ) and builds the given targets there. One configuration for both users:
# scripts/fuzz.sh (the libFuzzer targets) and scripts/sanitize.sh (the unit tests), so the
# sanitized library is compiled once for both.
#
#   bash scripts/build_sanitized.sh fuzz_config mobius_unit_tests
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache (when installed) hashes paths relative to the checkout: clones and worktrees share objects
export CCACHE_BASEDIR="$PWD"
CC=clang-16 CXX=clang++-16 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=None -DMOBIUS_FUZZ=ON \
  -DMOBIUS_BUILD_TESTS=ON -DMOBIUS_BUILD_PYTHON=OFF >/dev/null
cmake --build build-fuzz --parallel "$(nproc)" --target "$@"
