// Full encoder-decoder forward pass with recording on, batch 1, one thread and every core.
//   ./build/tests/bench/forward_bench
// The PyTorch twin is tests/bench/peers/torch_forward.py; scripts/bench.sh runs both and writes
// docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include "base/allocator.h"
#include "base/startup.h"
#include "base/threads.h"
#include "bench_common.h"
#include "bench_cpu.h"

namespace sf {
namespace {

void forward(benchmark::State& state, int d, int h, int layers, int dff, int n, bool record, int n_threads) {
  bench_threads(n_threads);
  const Model m = seq2seq_model(d, h, layers, dff);
  const Seq2SeqInput in = seq2seq_input(n);
  for (auto _ : state) {
    const Mat logits = seq2seq_forward(m, in, record);
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["tokens"] = n;
  state.counters["flops"] = flops(causal_forward_flops(m.config, n, n));
  state.counters["threads"] = threads();
}

// small: d_model 128, 4 heads, 2+2 layers, d_ff 512, 32 tokens each side; one thread.
BENCHMARK_CAPTURE(forward, small_recorded, 128, 4, 2, 512, 32, true, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(forward, small_unrecorded, 128, 4, 2, 512, 32, false, 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// base: d_model 512, 8 heads, 6+6 layers, d_ff 2048, 64 tokens each side; one thread, then every
// core (base/threads.h).
BENCHMARK_CAPTURE(forward, base_recorded, 512, 8, 6, 2048, 64, true, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(forward, base_unrecorded, 512, 8, 6, 2048, 64, false, 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(forward, base_recorded_all_cores, 512, 8, 6, 2048, 64, true, 0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  sf::restart_with_runtime_settings(argv, sf::Arenas::One);  // first: it may start the program again
  sf::tune_allocator();                                      // as the stepformer executable does
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
