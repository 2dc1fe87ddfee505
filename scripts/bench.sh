#!/usr/bin/env bash
# bench.sh — every stepformer benchmark beside its PyTorch twin, back to back, as one table.
#
#   bash scripts/bench.sh            # ≈ 3–6 minutes on an idle 2-core machine
#
# Builds the benchmark programs (Release, -march=native, OpenMP) in $BUILD_DIR (default build/,
# configured as scripts/setup.sh does when absent), runs each stepformer benchmark and then its
# PyTorch twin (tests/bench/peers/*.py with /usr/bin/python3 and Debian's python3-torch), prints
# the ratio table (base, small and GPT-2 forward passes, cached decoding, training steps), and writes
# it with the CPU model, SIMD flags, thread counts and load to docs/benchmarks.md, keeping that
# file's sections below its marker line (the other measurements, each with its own command). Run it on an otherwise idle machine: every figure is a minimum wall time.
# Environment: BUILD_DIR, PYTHON (default /usr/bin/python3), BENCH_OUT (default docs/benchmarks.md),
# BENCH_REPS (stepformer repetitions per figure, default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
PY=${PYTHON:-/usr/bin/python3}
OUT_MD=${BENCH_OUT:-docs/benchmarks.md}
REPS=${BENCH_REPS:-10}
PEERS=tests/bench/peers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSTEPFORMER_GUI=OFF
fi
if ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$BUILD/CMakeCache.txt" ||
   grep -q '^STEPFORMER_MARCH:STRING=..*$' "$BUILD/CMakeCache.txt" ||
   grep -q '^STEPFORMER_SANITIZE:BOOL=ON$' "$BUILD/CMakeCache.txt"; then
  echo "bench.sh: expected $BUILD to be a Release build for this CPU (-march=native, no sanitizers);" >&2
  echo "          found another configuration; set BUILD_DIR to a fresh directory" >&2
  exit 2
fi
cmake --build "$BUILD" -j"$(nproc)" --target forward_bench decode_bench train_bench gpt2_bench

if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "bench.sh: expected PyTorch for $PY (Debian: apt-get install python3-torch libopenblas0-openmp); found none" >&2
  exit 1
fi
# Debian's PyTorch calls the system BLAS (libblas.so.3): the reference BLAS makes its products
# ~20x slower than OpenBLAS, which would make every ratio meaningless.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
case "$blas" in
  *openblas*) ;;
  *) echo "bench.sh: warning: PyTorch's BLAS is $blas, not OpenBLAS (apt-get install libopenblas0-openmp)" >&2 ;;
esac

eigen=$(awk '/#define EIGEN_(WORLD|MAJOR|MINOR)_VERSION/ {printf "%s%s", sep, $3; sep="."}' \
  /usr/include/eigen3/Eigen/src/Core/util/Macros.h 2>/dev/null || true)
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|fma|avx512f|avx512bw|avx512vl' | paste -sd' ' -)
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) logical cores; flags: ${flags:-none of avx2/fma/avx512f}"
  echo "stepformer: $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $("${CXX:-c++}" --version | head -1), Eigen ${eigen:-?}, OpenMP: $(grep -q '^OpenMP_CXX_FLAGS:STRING=-fopenmp' "$BUILD/CMakeCache.txt" && echo yes || echo no)"
  echo "PyTorch: $("$PY" -c 'import torch; print(torch.__version__)'), BLAS $blas"
  echo "threads: '1 thread' figures pin both sides to one thread; 'all cores' uses $(nproc) (stepformer --threads 0, torch.set_num_threads($(nproc))); training threads are stepformer's batch shards and torch's intra-op threads"
} > "$work/machine.txt"
cat "$work/machine.txt"

gb() {  # one Google Benchmark program, JSON to $work/NAME.json
  local name=$1
  shift
  echo "== $name $*"
  "$BUILD/tests/bench/$name" --benchmark_out="$work/$name.json" --benchmark_out_format=json \
    --benchmark_repetitions="$REPS" "$@"
}
peer() {
  echo "== $PY $*"
  "$PY" "$@" --json "$work/peers.json"
}

gb forward_bench --benchmark_filter='small_recorded|base_recorded' --benchmark_min_time=0.05
peer $PEERS/torch_forward.py --threads 1 0 --repeats 20
gb decode_bench --benchmark_filter='step_cached/64$|weights_floor' --benchmark_min_time=0.05
peer $PEERS/torch_decode.py --steps 64 --runs 5
# Each Throughput run trains for 5 s (its MinTime): 3 runs per figure.
gb train_bench --benchmark_filter='Throughput/threads:[12]/pre:1' --benchmark_repetitions=3
peer $PEERS/torch_train.py --threads 1 2 --norms pre --seconds 5
BENCH_REPS_GPT2=$(( REPS < 5 ? REPS : 5 ))
gb gpt2_bench --benchmark_min_time=0.01 --benchmark_repetitions="$BENCH_REPS_GPT2"
peer $PEERS/torch_gpt2.py --threads 1 0 --repeats 5 --steps 20

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/machine.txt"
"$PY" scripts/bench_table.py "$work" > "$work/table.md"
mkdir -p "$(dirname "$OUT_MD")"
marker='<!-- Sections below are not written by scripts/bench.sh. -->'
if [ -f "$OUT_MD" ] && grep -qxF "$marker" "$OUT_MD"; then
  { echo; awk -v m="$marker" 'f || $0 == m { f = 1; print }' "$OUT_MD"; } >> "$work/table.md"
fi
mv "$work/table.md" "$OUT_MD"
echo
cat "$OUT_MD"
echo
echo "bench.sh: wrote $OUT_MD in ${SECONDS} s"
