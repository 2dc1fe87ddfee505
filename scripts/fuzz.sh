#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang-14, ASan + UBSan, into build-fuzz/) and runs
# each for N seconds (default 60): scripts/fuzz.sh [SECONDS] [HARNESS...]
# STEPFORMER_FUZZ_BUILD=DIR runs the harnesses of a sanitizer build made by clang instead, which
# builds them beside the suite (scripts/test.sh's build-asan/), and configures nothing.
# The committed seeds (tests/fuzz/corpus/<harness>) are read, new inputs go to
# <build>/corpus/<harness>; a crash, leak, timeout (> 10 s per input) or out-of-memory
# (> 2 GB) writes <build>/artifacts/<harness>/… and makes the script fail. Add each such input
# to tests/fuzz/regressions/ once fixed (tests/fuzz_regression_test.cpp replays it).
# STEPFORMER_WERROR=ON in the environment makes a warning in the project's code an error.
# Every harness runs on one thread (OMP_NUM_THREADS=1): fuzzing wants one.
# Figures and findings: docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
HARNESSES=("$@")
((${#HARNESSES[@]})) || HARNESSES=(safetensors config vocab metrics script tokenizers hf_weights)

BUILD=${STEPFORMER_FUZZ_BUILD:-build-fuzz}
if [ -z "${STEPFORMER_FUZZ_BUILD:-}" ]; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  LAUNCHER=()
  command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Line tables only (-g1), as in CMakeLists.txt's fuzz options: what a report's stack trace reads.
  cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPFORMER_FUZZ=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DSTEPFORMER_WERROR="${STEPFORMER_WERROR:-OFF}" "${LAUNCHER[@]}" >/dev/null
fi
cmake --build "$BUILD" -j"$(nproc)" --target "${HARNESSES[@]/#/fuzz_}"

# Per harness: the largest input worth trying (a tiny model is ~7 KB; headers of the shipped
# models ~10 KB; scripts and metrics are text; the tiny GPT-2 tokenizer files are 13 KB; the tiny
# hub model.safetensors files up to 215 KB).
declare -A MAX_LEN=([safetensors]=65536 [config]=16384 [vocab]=4096 [metrics]=65536 [script]=16384 [tokenizers]=20480 [hf_weights]=262144)
# The harnesses run side by side, one per core (each on one thread), each into its own log.
fuzz_one() {
  local h=$1
  mkdir -p "$BUILD/corpus/$h" "$BUILD/artifacts/$h"
  OMP_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$BUILD/tests/fuzz/fuzz_$h" "$BUILD/corpus/$h" "tests/fuzz/corpus/$h" \
      -max_total_time="$SECONDS_EACH" -max_len="${MAX_LEN[$h]}" -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$h/" \
      > "$BUILD/fuzz_$h.log" 2>&1
}
JOBS=$(nproc)
declare -A PID
for h in "${HARNESSES[@]}"; do
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  echo "== fuzz_$h: ${SECONDS_EACH} s"
  fuzz_one "$h" &
  PID[$h]=$!
done
failed=()
for h in "${HARNESSES[@]}"; do
  if ! wait "${PID[$h]}"; then
    failed+=("$h")
    echo "== fuzz_$h failed:"
    tail -40 "$BUILD/fuzz_$h.log"
  fi
  echo "== fuzz_$h:"
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$BUILD/fuzz_$h.log" | sed "s/^/  /"
done
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $BUILD/artifacts/)" >&2
  exit 1
fi
echo "fuzz: no crash, leak, timeout or out-of-memory in ${HARNESSES[*]}"
