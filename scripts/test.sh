#!/usr/bin/env bash
# Sets up (scripts/setup.sh), checks the C++ formatting (scripts/check-format.sh) and the include
# graph (scripts/check-includes.sh: no cycle, core never includes app/), then runs the
# whole test suite with CTest, three passes:
#   1. the Release build for this CPU (-march=native): unit, golden, stepper, training and GUI
#      tests (GUI under Xvfb), the slow kill -9 test and the Debian package test included;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build of the same suite by clang-14 (a
#      second compiler) for a portable instruction set (x86-64-v3 = AVX2 + FMA where the CPU has
#      them, else x86-64-v2), so that every machine also runs the suite on a second SIMD code path
#      (docs/reliability.md, "Numerics across builds"); GUI tests included, leak checks off for
#      them (Mesa leaks at exit); with line tables only (-g1: what a sanitizer's stack trace reads;
#      full debug information nearly doubles the compile time), with the core's common headers
#      precompiled (core/CMakeLists.txt) and without the benchmarks, which no test runs. It builds the libFuzzer harnesses too (its core and they carry libFuzzer's
#      coverage);
#   3. every libFuzzer harness of that build for STEPFORMER_FUZZ_SECONDS seconds (default 20;
#      scripts/fuzz.sh).
# Both builds treat a warning in the project's code as an error (-DSTEPFORMER_WERROR=ON).
# Tests write under each build's test-scratch/ folder (tests/CMakeLists.txt); at the end the run
# fails if /tmp holds a stepformer_* entry it did not hold before.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp_entries() { find /tmp -maxdepth 1 -name 'stepformer_*' 2>/dev/null | sort; }
TMP_BEFORE=$(tmp_entries)
bash scripts/setup.sh -DSTEPFORMER_WERROR=ON
bash scripts/check-format.sh
bash scripts/check-includes.sh
(cd build && ctest --output-on-failure -j"$(nproc)")

if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then MARCH=x86-64-v3; else MARCH=x86-64-v2; fi
echo "== sanitizer build (clang-14, ASan + UBSan, -march=$MARCH) =="
cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPFORMER_SANITIZE=ON -DSTEPFORMER_NATIVE=OFF \
  -DSTEPFORMER_MARCH="$MARCH" -DSTEPFORMER_WERROR=ON -DSTEPFORMER_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build build-asan -j"$(nproc)"
(cd build-asan && ctest --output-on-failure -j"$(nproc)" -LE "slow|package")

echo "== fuzzing (libFuzzer, ${STEPFORMER_FUZZ_SECONDS:-20} s per harness) =="
STEPFORMER_FUZZ_BUILD=build-asan bash scripts/fuzz.sh "${STEPFORMER_FUZZ_SECONDS:-20}"

new_tmp=$(comm -13 <(echo "$TMP_BEFORE") <(tmp_entries))
if [ -n "$new_tmp" ]; then
  echo "test: the run left these in /tmp (tests write under their build's test-scratch/):" >&2
  echo "$new_tmp" | sed 's/^/  /' >&2
  exit 1
fi
echo "test: all passed"
