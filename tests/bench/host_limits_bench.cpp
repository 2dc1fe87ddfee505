// What this host can do, measured in the same run as the other benchmarks: the limits that
// scripts/bench.sh states every figure as a fraction of.
//   ./build/tests/bench/host_limits_bench
// The benchmark argument is the thread count (0: every core, base/threads.h).
//   gemm/S        our kernel (base/gemm.h) on C = A·B, A (m, k), B (k, n) packed once outside the
//                 timed loop, as a weight is: the 1024³ square product and two model shapes
//                 (GPT-2 small's fc1 and the base model's fc1 over their benchmark's tokens);
//   fma_peak      a register-resident loop of independent FMAs at the widest vector width the
//                 build has (AVX-512, AVX2 or SSE), nothing read from memory: what the cores'
//                 FMA pipes deliver at this build's width (Zen 4 runs a 512-bit FMA as two
//                 256-bit halves, so there AVX-512 gives the same rate as AVX2);
//   stream_read   a plain float sum over a 512 MiB buffer (far larger than any L3 cache), the
//                 threads reading disjoint halves: the rate at which a cached decoding step can
//                 stream its weights at best.
// Counters: flops (per iteration, from the shapes) or bytes (per iteration), the vector width in
// bits, and the clock /proc/cpuinfo states (for FLOPs per cycle). The PyTorch twin is
// tests/bench/peers/torch_host_limits.py (OpenBLAS's torch.mm).
#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "base/allocator.h"
#include "base/gemm.h"
#include "base/startup.h"
#include "base/threads.h"
#include "bench_cpu.h"
#include "stream_read.h"

namespace sf {
namespace {

// 2·m·n·k: one multiply and one add per term of every output element.
int64_t gemm_flops(int64_t m, int64_t n, int64_t k) { return 2 * m * n * k; }

void gemm_rate(benchmark::State& state, int m, int n, int k) {
  bench_threads(static_cast<int>(state.range(0)));
  Mat a = Mat::Random(m, k), b = Mat::Random(k, n), c(m, n);
  const PackedB pb = pack_b(mat_ref(b), k, n);
  for (auto _ : state) {
    gemm(m, mat_ref(a), pb, c.data(), n, GemmOut::Overwrite);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["flops"] = static_cast<double>(gemm_flops(m, n, k));
  state.counters["threads"] = threads();
}

#if defined(__AVX512F__)
constexpr int kWidthBits = 512;
using Vec = __m512;
inline Vec vset(float x) { return _mm512_set1_ps(x); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline float vfirst(Vec a) { return _mm512_cvtss_f32(a); }
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kWidthBits = 256;
using Vec = __m256;
inline Vec vset(float x) { return _mm256_set1_ps(x); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline float vfirst(Vec a) { return _mm256_cvtss_f32(a); }
#else
constexpr int kWidthBits = 128;
using Vec = __m128;
inline Vec vset(float x) { return _mm_set1_ps(x); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }  // no FMA: 2 instructions
inline float vfirst(Vec a) { return _mm_cvtss_f32(a); }
#endif

// Independent accumulators: enough to cover FMA latency × pipes, few enough to stay in registers
// (32 zmm with AVX-512, 16 ymm/xmm otherwise).
constexpr int kChains = kWidthBits == 512 ? 24 : 12;
constexpr int64_t kFmaLoops = 1 << 20;

// `loops` rounds of kChains independent FMAs on registers; returns a value that depends on all.
// Not inlined: inlined into the benchmark's lambda, GCC stores every accumulator each round.
[[gnu::noinline]] float fma_loop(int64_t loops) {
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = vset(0.001f * static_cast<float>(i));
  const Vec mul = vset(0.999999f), add = vset(1e-7f);
  for (int64_t r = 0; r < loops; ++r) {
    // Unrolled so that the accumulators live in registers: a rolled loop keeps acc[] in memory
    // and measures a load and a store per FMA instead of the FMA pipes.
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) acc[i] = vfma(acc[i], mul, add);
  }
  float s = 0;
  for (int i = 0; i < kChains; ++i) s += vfirst(acc[i]);
  return s;
}

int thread_count(int arg) { return arg > 0 ? arg : hardware_threads(); }

// The clock /proc/cpuinfo states for the first core, MHz (0 when absent). A virtual machine often
// states its nominal clock, not the one the core runs at under load.
double stated_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("cpu MHz", 0) == 0) return std::atof(line.c_str() + line.find(':') + 1);
  return 0;
}

void fma_peak(benchmark::State& state) {
  const int n = thread_count(static_cast<int>(state.range(0)));
  run_on_bench_cores(n);
  std::vector<float> sink(static_cast<size_t>(n));
  for (auto _ : state) {
    on_threads(n, [&](int i) { sink[static_cast<size_t>(i)] = fma_loop(kFmaLoops); });
    benchmark::DoNotOptimize(sink.data());
  }
  const int lanes = kWidthBits / 32;
  state.counters["flops"] = 2.0 * kChains * lanes * static_cast<double>(kFmaLoops) * n;
  state.counters["width_bits"] = kWidthBits;
  state.counters["threads"] = n;
  state.counters["cpu_mhz"] = stated_mhz();
}

void stream_read(benchmark::State& state) {
  const int n = thread_count(static_cast<int>(state.range(0)));
  run_on_bench_cores(n);
  stream_buffer();  // filled before the timed passes (stream_read.h)
  std::vector<float> sums;
  for (auto _ : state) {
    stream_pass(n, sums);
    benchmark::DoNotOptimize(sums.data());
  }
  state.counters["bytes"] = static_cast<double>(stream_pass_bytes(n));
  state.counters["threads"] = n;
}

void threads_args(benchmark::internal::Benchmark* b) { b->ArgName("threads")->Arg(1)->Arg(0); }

BENCHMARK_CAPTURE(gemm_rate, square_1024, 1024, 1024, 1024)
    ->Apply(threads_args)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// GPT-2 small's fc1 over 128 tokens: (128, 768) · (768, 3072).
BENCHMARK_CAPTURE(gemm_rate, gpt2_fc1_128, 128, 3072, 768)
    ->Apply(threads_args)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// The base model's fc1 over 64 tokens: (64, 512) · (512, 2048).
BENCHMARK_CAPTURE(gemm_rate, base_fc1_64, 64, 2048, 512)
    ->Apply(threads_args)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(fma_peak)->Apply(threads_args)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(stream_read)->Apply(threads_args)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  sf::restart_with_runtime_settings(argv, sf::Arenas::One);  // first: it may start the program again
  sf::tune_allocator();                                      // as the stepformer executable does
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("gemm_kernel", sf::gemm_kernel_name());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
