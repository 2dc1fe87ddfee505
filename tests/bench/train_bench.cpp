// Training throughput and steps to 99% exact match on the copy task:
// d_model 128, 4 heads, 2+2 layers, d_ff 512, batch 64, length 10, vocabulary 11 (7 symbols + the
// 4 specials), no dropout, Adam at a constant 1e-3, label smoothing 0.
//
//   ./build/tests/bench/train_bench --benchmark_filter=Throughput     # target tokens/s, 1 and 2 threads
//   ./build/tests/bench/train_bench --benchmark_filter=StepsTo99      # median steps to 99% (slow: ~minutes)
//
// "Target tokens" are the scored decoder positions: 10 symbols + </s> = 11 per sequence, 704 per
// step. The peer script that measures the same configuration in PyTorch is
// tests/bench/peers/torch_train.py; scripts/bench.sh runs both and writes docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <algorithm>

#include "base/startup.h"
#include "base/threads.h"
#include "stepper/cost.h"
#include "bench_cpu.h"
#include "copy_task.h"
#include "train/trainer.h"

namespace sf {
namespace {

void Throughput(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const NormPlacement norm = state.range(1) ? NormPlacement::Pre : NormPlacement::Post;
  run_on_bench_cores(threads);
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // as `stepformer train` does
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  auto t = Trainer::create(copy_options(norm, threads, 1));
  if (!t) {
    state.SkipWithError(t.error().c_str());
    return;
  }
  t->step();  // warm-up: first allocations
  int64_t tokens = 0;
  for (auto _ : state) tokens += t->step().tokens;
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  // A step's matrix products, from the shapes: the forward's (stepper/cost.h) over each of the
  // batch's sequences (10 source tokens; decoder input <s> + 10), and twice that for the backward
  // (the input and the weight gradient of every product).
  const TrainOptions o = copy_options(norm, threads, 1);
  state.counters["flops"] =
      3.0 * static_cast<double>(o.batch) * static_cast<double>(forward_flops(t->model().config, 10, 11).total());
}
BENCHMARK(Throughput)
    ->ArgNames({"threads", "pre"})
    ->Args({1, 1})
    ->Args({1, 0})
    ->Args({2, 1})
    ->Args({2, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(5.0);

// Steps until greedy decoding reaches 99% exact match on 200 held-out examples, checked every 10
// steps; the median over 5 seeds.
void StepsTo99(benchmark::State& state) {
  const NormPlacement norm = state.range(0) ? NormPlacement::Pre : NormPlacement::Post;
  std::vector<double> steps;
  for (auto _ : state) {
    steps.clear();
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      auto t = Trainer::create(copy_options(norm, 2, seed));
      int64_t reached = -1;
      while (t->steps_done() < 3000) {
        t->step();
        if (t->steps_done() % 10 == 0 && t->evaluate(200).exact_match() >= 0.99) {
          reached = t->steps_done();
          break;
        }
      }
      steps.push_back(reached < 0 ? 3000.0 : static_cast<double>(reached));
    }
  }
  std::sort(steps.begin(), steps.end());
  state.counters["median_steps"] = steps[steps.size() / 2];
  state.counters["min_steps"] = steps.front();
  state.counters["max_steps"] = steps.back();
}
BENCHMARK(StepsTo99)->ArgNames({"pre"})->Arg(1)->Arg(0)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  // As the stepformer executable does for `train` (first: it may start the program again).
  sf::restart_with_runtime_settings(argv, sf::Arenas::PerThread);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
