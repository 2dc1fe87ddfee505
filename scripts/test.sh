#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs the whole test suite with CTest:
#   1. the Release build: unit, golden, stepper, training and GUI tests (GUI under Xvfb);
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build of the same suite (GUI tests
#      included, leak checks off for them: Mesa's driver leaks at exit, see docs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(cd build && ctest --output-on-failure -j"$(nproc)")

echo "== sanitizer build (ASan + UBSan) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPFORMER_SANITIZE=ON -DSTEPFORMER_NATIVE=ON
cmake --build build-asan -j"$(nproc)"
(cd build-asan && ctest --output-on-failure -j"$(nproc)" -LE slow)
echo "test: all passed"
