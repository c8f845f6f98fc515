#!/usr/bin/env bash
# Builds the GoogleTest unit tests over the sanitized library of build-fuzz/ (clang,
# AddressSanitizer + UndefinedBehaviorSanitizer, scripts/build_sanitized.sh) and runs them with
# ctest: ordinary inputs, among them every registry row's tiny config built without weights
# (tests/unit/registry_params_test.cpp). Any report (a use after free or after return, an
# out-of-bounds access, a leak, undefined behaviour) fails the test that triggered it.
# scripts/test.sh runs it in CI; extra arguments go to ctest (e.g. -R RegistryParams).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build_sanitized.sh mobius_unit_tests
ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
export ASAN_SYMBOLIZER_PATH
# detect_stack_use_after_return: a reference kept to a temporary (off by default before clang 15)
export ASAN_OPTIONS=detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-fuzz && ctest --output-on-failure --parallel "$(nproc)" "$@")
