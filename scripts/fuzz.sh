#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with AddressSanitizer and UndefinedBehaviorSanitizer)
# into build-fuzz/ (scripts/build_sanitized.sh) and runs each for SECONDS (default 600), seeded
# from the checked-in corpus fuzz/corpus/<target>/ (new inputs go to build-fuzz/corpus/<target>/, crashes to
# build-fuzz/findings/). Prints one line per target: executions, coverage (cov: edges, ft:
# features), corpus size. Exits 1 when a target crashes, leaks, times out or runs out of memory.
#
#   bash scripts/fuzz.sh                 # every target, 10 minutes each (as many at a time as cores)
#   bash scripts/fuzz.sh 20              # the CI run (scripts/test.sh): 20 s each
#   bash scripts/fuzz.sh 600 fuzz_config # one target
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_safetensors fuzz_safetensors_index fuzz_config fuzz_gguf fuzz_gguf_tokenizer fuzz_side_files)

bash scripts/build_sanitized.sh "${targets[@]}"

# symbolized stack traces in the reports
ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
export ASAN_SYMBOLIZER_PATH
# One target: runs it, prints its summary line; returns non-zero when it failed.
run_target() {
  local t=$1 seeds=fuzz/corpus/${1#fuzz_} log=build-fuzz/logs/$1.log status=0
  mkdir -p "build-fuzz/corpus/$t" build-fuzz/findings build-fuzz/logs
  # -timeout: one input over 20 s is a hang; -rss_limit_mb: over 2 GiB is runaway memory.
  "build-fuzz/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/findings/$t-" "build-fuzz/corpus/$t" "$seeds" >"$log" 2>&1 || status=1
  if ((status)); then
    echo "fuzz: $t FAILED (see $log and build-fuzz/findings/):"
    grep -E "ERROR|SUMMARY|runtime error" "$log" | head -5 || true
  fi
  local execs last cov ft corp
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  last=$(grep -E "^#[0-9]+" "$log" | tail -1 || true)
  cov=$(sed -n 's/.*\(cov: [0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.*\(ft: [0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.*\(corp: [0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
  echo "fuzz: $t ${seconds}s: ${execs:-?} execs, ${cov:-cov: ?}, ${ft:-ft: ?}, ${corp:-corp: ?}"
  return "$status"
}
# libFuzzer runs one process on one core: as many targets at a time as there are cores.
failed=0
jobs_max=$(nproc)
pids=()
for t in "${targets[@]}"; do
  if ((${#pids[@]} >= jobs_max)); then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
  run_target "$t" &
  pids+=("$!")
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit "$failed"
