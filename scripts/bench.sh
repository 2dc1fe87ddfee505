#!/usr/bin/env bash
# bench.sh — every stepformer benchmark beside its PyTorch twin and against this host's own limits,
# as one table.
#
#   bash scripts/bench.sh            # ≈ 10–15 minutes on an idle 2-core machine
#
# Builds the benchmark programs (Release, -march=native, OpenMP) in $BUILD_DIR (default build/,
# configured as scripts/setup.sh does when absent), then runs BENCH_ROUNDS interleaved rounds; each
# round runs every stepformer benchmark and then its PyTorch twin (tests/bench/peers/*.py with
# /usr/bin/python3 and Debian's python3-torch):
#   host limits   our GEMM and OpenBLAS (torch.mm) on 1024³ and two model shapes, a register-resident
#                 FMA loop, a streaming read over 512 MiB; 1 thread and every core;
#   figures       small, base and GPT-2 (128 and 1,024 tokens) forward passes, training steps,
#                 cached decoding steps, and SmolLM2-135M- and Qwen2.5-0.5B-shaped models (random
#                 BF16 hub folders written once to $BENCH_LLAMA_DIR): load time and peak RSS in a
#                 fresh process, a 128-token forward, a cached decoding step.
# scripts/bench_table.py then states every figure's work (FLOPs or bytes, from the shapes), its
# minimum and median time over all rounds, its rate, its fraction of the host's limit and its ratio
# to PyTorch, with the CPU (vendor, family, model, stepping), SIMD flags, the OpenBLAS kernels
# PyTorch ran, thread counts, load and the share of the busy time the hypervisor took (steal), and
# writes it to docs/benchmarks.md, keeping that file's sections below its marker line (the other
# measurements, each with its own command). Run it on an otherwise idle machine.
#
# Environment:
#   BUILD_DIR        build directory (default build/)
#   PYTHON           Python with torch (default /usr/bin/python3)
#   BENCH_OUT        the Markdown file written (default docs/benchmarks.md)
#   BENCH_ROUNDS     interleaved rounds (default 3; at least 3 for a table to commit)
#   BENCH_REPS       stepformer repetitions per figure and round (default 4; GPT-2 and the Llama
#                    shapes use at most 2, GPT-2's 1,024-token forward 1, training 1 run of 5 s)
#   BENCH_CPU        the core every one-thread figure runs on — stepformer's, PyTorch's and the
#                    one-thread limits (default: the first core this script may run on); a shared
#                    host's cores differ from moment to moment, and a figure is a fraction of the
#                    limit measured on its own core (tests/bench/bench_cpu.h)
#   BENCH_LLAMA_DIR  where the Llama-shaped hub folders are written and kept between runs (default
#                    /tmp/stepformer_bench_llama; ≈ 1.3 GB)
#   BENCH_ONLY       a regular expression: run only the groups whose name matches (host, forward,
#                    decode, train, gpt2, llama), e.g. BENCH_ONLY='host|llama' for a quick check
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
PY=${PYTHON:-/usr/bin/python3}
OUT_MD=${BENCH_OUT:-docs/benchmarks.md}
ROUNDS=${BENCH_ROUNDS:-3}
REPS=${BENCH_REPS:-4}
ONLY=${BENCH_ONLY:-.}
cores=$("$PY" -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
export STEPFORMER_BENCH_CPU=${BENCH_CPU:-${cores%% *}}
if [[ " $cores " != *" $STEPFORMER_BENCH_CPU "* ]]; then
  echo "bench.sh: expected BENCH_CPU to be one of this process's cores ($cores); found '$STEPFORMER_BENCH_CPU'" >&2
  exit 2
fi
export STEPFORMER_BENCH_LLAMA_DIR=${BENCH_LLAMA_DIR:-/tmp/stepformer_bench_llama}
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
cmake "$BUILD" >/dev/null  # regenerates the build files when a benchmark was added since
cmake --build "$BUILD" -j"$(nproc)" --target host_limits_bench forward_bench decode_bench train_bench \
  gpt2_bench llama_bench

if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "bench.sh: expected PyTorch for $PY (Debian: apt-get install python3-torch libopenblas0-openmp); found none" >&2
  exit 1
fi
# Debian's PyTorch calls the system BLAS (libblas.so.3), and installing python3-torch alone may
# bring the reference BLAS, whose products run ~25x slower than OpenBLAS's (3 against 77 GFLOP/s
# on a 1024³ product): every ratio would be meaningless, so the run stops before it starts.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
case "$blas" in
  *openblas*) ;;
  *)
    echo "bench.sh: expected PyTorch's BLAS (libblas.so.3) to be OpenBLAS; found $blas" >&2
    echo "          (apt-get install libopenblas0-openmp)" >&2
    exit 1
    ;;
esac

# The kernel family OpenBLAS chose for this CPU (SkylakeX, Haswell, Zen, …): what the PyTorch
# column ran.
openblas_core() {
  "$PY" -c 'import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).openblas_get_corename; f.restype = ctypes.c_char_p; print(f().decode())' \
    "$blas" 2>/dev/null || echo unknown
}
# The aggregate CPU line of /proc/stat: user nice system idle iowait irq softirq steal (jiffies).
cpu_times() { head -1 /proc/stat | cut -d' ' -f3-10; }
cpu_start=$(cpu_times)
cpuinfo() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'; }
eigen=$(awk '/#define EIGEN_(WORLD|MAJOR|MINOR)_VERSION/ {printf "%s%s", sep, $3; sep="."}' \
  /usr/include/eigen3/Eigen/src/Core/util/Macros.h 2>/dev/null || true)
# The OpenMP runtime the benchmark programs load (core/CMakeLists.txt prefers LLVM's libomp).
omp_runtime() {
  case "$(ldd "$BUILD/tests/bench/forward_bench" 2>/dev/null)" in
    *libomp.so*) echo "LLVM libomp" ;;
    *libgomp.so*) echo "GNU libgomp" ;;
    *) echo "none" ;;
  esac
}
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|fma|avx512f|avx512bw|avx512vl|avx512_bf16' | paste -sd' ' -)
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "CPU: $(cpuinfo 'model name'), $(cpuinfo vendor_id) family $(cpuinfo 'cpu family') model $(cpuinfo model) stepping $(cpuinfo stepping), $(nproc) logical cores, L3 $(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo '?'); flags: ${flags:-none of avx2/fma/avx512f}"
  echo "stepformer: $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $("${CXX:-c++}" --version | head -1), Eigen ${eigen:-?}, OpenMP: $(omp_runtime)"
  echo "PyTorch: $("$PY" -c 'import torch; print(torch.__version__)'), BLAS $blas (OpenBLAS kernels: $(openblas_core))"
  echo "threads: '1' pins both sides to one thread, on core $STEPFORMER_BENCH_CPU (as the one-thread limits); all cores is $(nproc) (stepformer set_threads(0), torch.set_num_threads($(nproc))); training threads are stepformer's batch shards and torch's intra-op threads"
  echo "rounds: $ROUNDS interleaved (stepformer, PyTorch, stepformer, …); stepformer repetitions per round: $REPS (GPT-2 and the Llama shapes at most 2, training one 5 s run)"
} > "$work/machine.txt"
cat "$work/machine.txt"

round_dir=
gb() {  # one Google Benchmark program, JSON to $round_dir/NAME.json
  local name=$1
  shift
  echo "== $name $*"
  "$BUILD/tests/bench/$name" --benchmark_out="$round_dir/$name.json" --benchmark_out_format=json "$@"
}
peer() {
  echo "== $PY $*"
  "$PY" "$@" --json "$round_dir/peers.json"
}
want() { [[ $1 =~ $ONLY ]]; }

SMALL_REPS=$(( REPS < 2 ? REPS : 2 ))
for round in $(seq 1 "$ROUNDS"); do
  round_dir="$work/round$round"
  mkdir -p "$round_dir"
  echo "=== round $round of $ROUNDS"
  if want host; then
    gb host_limits_bench --benchmark_repetitions="$REPS" --benchmark_min_time=0.2
    peer $PEERS/torch_host_limits.py --threads 1 0 --repeats "$REPS"
  fi
  if want forward; then
    gb forward_bench --benchmark_filter='small_recorded|base_recorded' --benchmark_repetitions="$REPS" \
      --benchmark_min_time=0.1
    peer $PEERS/torch_forward.py --threads 1 0 --repeats $(( 5 * REPS ))
  fi
  if want decode; then
    gb decode_bench --benchmark_filter='step_cached/64$' --benchmark_repetitions="$REPS" --benchmark_min_time=0.1
    peer $PEERS/torch_decode.py --steps 64 --runs 3  # the first run warms up
  fi
  if want train; then
    # Each Throughput run trains for 5 s (its MinTime).
    gb train_bench --benchmark_filter='Throughput/threads:[12]/pre:1' --benchmark_repetitions=1
    peer $PEERS/torch_train.py --threads 1 2 --norms pre --seconds 5
  fi
  if want gpt2; then
    gb gpt2_bench --benchmark_min_time=0.01 --benchmark_repetitions="$SMALL_REPS"
    peer $PEERS/torch_gpt2.py --threads 1 0 --repeats "$SMALL_REPS" --steps 10 --long-repeats 1
  fi
  if want llama; then
    gb llama_bench --benchmark_min_time=0.01 --benchmark_repetitions="$SMALL_REPS"
    peer $PEERS/torch_llama.py --threads 1 0 --repeats "$SMALL_REPS" --steps 5 --load "$STEPFORMER_BENCH_LLAMA_DIR"
  fi
done

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/machine.txt"
# A virtual machine's cores can be taken by the hypervisor for other guests ("steal"): time no
# code here can use, which the figures (all cores most) then include.
read -r -a t0 <<<"$cpu_start"
read -r -a t1 <<<"$(cpu_times)"
busy=0
for i in 0 1 2 5 6 7; do busy=$((busy + t1[i] - t0[i])); done
steal=$((t1[7] - t0[7]))
echo "CPU time taken by the hypervisor (steal) during the run: $(awk -v s="$steal" -v b="$busy" \
  'BEGIN { printf "%.1f %% of the busy time", (b > 0 ? 100 * s / b : 0) }')" >> "$work/machine.txt"
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
