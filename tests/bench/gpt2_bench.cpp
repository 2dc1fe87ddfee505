// GPT-2 small shape: forward of 128 and 1,024 tokens and per-token cached decoding, on one thread
// and on every core. Random weights (no network): the speed does not depend on their values.
//   ./build/tests/bench/gpt2_bench --benchmark_repetitions=3
// Shape: d_model 768, 12 heads, 12 layers, d_ff 3072, vocabulary 50257, n_ctx 1024, pre-LN,
// GELU (tanh form), learned positions, output tied to the token embedding, batch 1, float32.
// The PyTorch twin is tests/bench/peers/torch_gpt2.py (the same shapes, Hugging Face's op order).
// The benchmark argument is the thread count (0: every core, base/threads.h).
#include <benchmark/benchmark.h>

#include "base/allocator.h"
#include "base/startup.h"
#include "base/threads.h"
#include "bench_common.h"
#include "decoder_timing.h"

namespace sf {
namespace {

constexpr int kVocab = 50257;
constexpr int kPrompt = 128;

const Model& gpt2() {
  static const Model m = random_model(gpt2_small_config(), kVocab);
  return m;
}

// The whole decoder over n tokens (decoder_timing.h).
void forward(benchmark::State& state, int n) { time_forward(state, gpt2(), prompt_ids(n, kVocab)); }

// One cached step after a 128-token prompt: the 129th position through every layer, the tied
// output projection (50257 × 768) and argmax. The cache is rolled back after each step.
void decode_step(benchmark::State& state) { time_cached_step(state, gpt2(), prompt_ids(kPrompt, kVocab)); }

void forward_128(benchmark::State& state) { forward(state, kPrompt); }
// The longest input GPT-2 takes (n_ctx): ≈ 0.3 TFLOP, seconds per run, so one run per repetition.
void forward_1024(benchmark::State& state) { forward(state, 1024); }

BENCHMARK(forward_128)->ArgName("threads")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(forward_1024)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(1);
BENCHMARK(decode_step)->ArgName("threads")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  sf::restart_with_runtime_settings(argv, sf::Arenas::One);  // first: it may start the program again
  sf::tune_allocator();                                      // as the stepformer executable does
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
