// Per-token greedy decoding time at step t, with the KV cache and by recomputation.
//   ./build/tests/bench/decode_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// Base configuration as the PyTorch peer (tests/bench/peers/torch_decode.py): d_model 512, 8 heads,
// 6+6 layers, d_ff 2048, pre-LN, ReLU, sinusoidal, vocabulary 1000, 64 source tokens, batch 1, one
// thread, float32. "Step t" produces the t-th output token: the decoder input is t tokens long.
// A step is the decoder over the fed row(s) + generator + argmax; nothing is recorded. The encoder
// and the cross-attention K/V (once per source) are outside the timed region, as in the peer.
#include <benchmark/benchmark.h>

#include "base/allocator.h"
#include "base/startup.h"
#include "base/threads.h"
#include "bench_common.h"
#include "decoder_timing.h"

namespace sf {
namespace {

const DecodeBase& base() {
  static const DecodeBase b = decode_base();
  return b;
}

void step_cached(benchmark::State& state) {
  const DecodeBase& b = base();
  const int t = static_cast<int>(state.range(0));
  const EncoderContext enc{&b.memory, &b.src};
  Hypothesis h;
  prime_cached_step(b.model, enc, decode_prefix(t), h);
  time_steps(state, b.model, enc, h);
  step_counters(state, b.model.config, static_cast<int>(b.src.size()), t);
  state.counters["cache_MiB"] = static_cast<double>(h.cache.bytes() + 2LL * 6 * 512 * 4) / (1 << 20);
}

void step_recomputed(benchmark::State& state) {
  const DecodeBase& b = base();
  const int t = static_cast<int>(state.range(0));
  const EncoderContext enc{&b.memory, &b.src};
  Hypothesis h;
  start_hypothesis(b.model, decode_prefix(t), false, h);
  for (auto _ : state) {
    const RowVec logits = next_logits(b.model, enc, h, false, nullptr);
    benchmark::DoNotOptimize(argmax(logits));
  }
}

// The same cached step with everything recorded (what the stepper keeps for the explorer).
void step_cached_recorded(benchmark::State& state) {
  const DecodeBase& b = base();
  const int t = static_cast<int>(state.range(0));
  const EncoderContext enc{&b.memory, &b.src};
  Hypothesis h;
  prime_cached_step(b.model, enc, decode_prefix(t), h);
  for (auto _ : state) {
    DecoderTrace tr;
    const RowVec logits = next_logits(b.model, enc, h, true, &tr);
    benchmark::DoNotOptimize(argmax(logits));
    drop_last_row(h.cache);
  }
}

// The floor: one matrix-vector product with every weight matrix a cached step reads (self-attention
// Q, K, V, O; cross-attention Q, O; fc1, fc2 per layer; the generator), nothing else. A cached
// step cannot be faster than this on the same machine under the same load.
void weights_floor(benchmark::State& state) {
  const DecodeBase& b = base();
  const Weights& w = b.model.weights;
  std::vector<const Mat*> mats;
  for (const DecoderLayerWeights& l : w.decoder)
    for (const Mat* m : {&l.self_attn.q_proj.weight, &l.self_attn.k_proj.weight, &l.self_attn.v_proj.weight,
                         &l.self_attn.o_proj.weight, &l.cross_attn.q_proj.weight, &l.cross_attn.o_proj.weight,
                         &l.ffn.fc1.weight, &l.ffn.fc2.weight})
      mats.push_back(m);
  mats.push_back(&w.generator.weight);
  int64_t bytes = 0;
  for (const Mat* m : mats) bytes += m->size() * 4;
  const Mat x = Mat::Constant(1, 2048, 0.01f);
  Mat y(1, 2048);
  for (auto _ : state) {
    for (const Mat* m : mats) {
      y.leftCols(m->rows()).noalias() = x.leftCols(m->cols()) * m->transpose();
      benchmark::DoNotOptimize(y.data());
    }
  }
  state.counters["weights_MiB"] = static_cast<double>(bytes) / (1 << 20);
  state.SetBytesProcessed(state.iterations() * bytes);
}

// A whole greedy decode of 256 tokens with the cache (setup of the cross K/V included), </s>
// ignored so every run has the same length: the peer's "kv-cache greedy, 256 tokens total".
void greedy_256(benchmark::State& state) {
  const DecodeBase& b = base();
  const EncoderContext enc{&b.memory, &b.src};
  for (auto _ : state) {
    Hypothesis h;
    start_hypothesis(b.model, {1}, true, h);
    for (int t = 0; t < 256; ++t) h.ids.push_back(argmax(next_logits(b.model, enc, h, true, nullptr)));
    benchmark::DoNotOptimize(h.ids.data());
  }
}

BENCHMARK(step_cached)->Arg(8)->Arg(32)->Arg(64)->Arg(128)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(step_recomputed)->Arg(8)->Arg(32)->Arg(64)->Arg(128)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(weights_floor)->Unit(benchmark::kMillisecond);
BENCHMARK(step_cached_recorded)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK(greedy_256)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  sf::restart_with_runtime_settings(argv, sf::Arenas::One);  // first: it may start the program again
  sf::tune_allocator();                                      // as the stepformer executable does
  sf::bench_threads(1);                                      // every figure here is one thread, as the peer's
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
