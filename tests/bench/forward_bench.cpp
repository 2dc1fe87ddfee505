// Full encoder-decoder forward pass with recording on, batch 1, one thread and every core.
//   ./build/tests/bench/forward_bench
// The PyTorch twin is tests/bench/peers/torch_forward.py; scripts/bench.sh runs both and writes
// docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include "base/allocator.h"
#include "base/threads.h"
#include "bench_common.h"
#include "model/decoder.h"
#include "model/encoder.h"

namespace sf {
namespace {

Model make_model(int d, int h, int layers, int dff, int vocab, int max_len) {
  Config c;
  c.arch = Arch::EncoderDecoder;
  c.d_model = d;
  c.n_heads = h;
  c.n_encoder_layers = c.n_decoder_layers = layers;
  c.d_ff = dff;
  c.max_len = max_len;
  c.norm = NormPlacement::Post;
  return random_model(c, vocab);
}

void forward(benchmark::State& state, int d, int h, int layers, int dff, int n, bool record, int n_threads) {
  set_threads(n_threads);
  const Model m = make_model(d, h, layers, dff, 1000, 256);  // vocabulary 1000, as the torch peer
  std::vector<int> src(static_cast<size_t>(n)), tgt(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    src[static_cast<size_t>(i)] = 4 + (i * 7) % 990;
    tgt[static_cast<size_t>(i)] = 4 + (i * 11) % 990;
  }
  for (auto _ : state) {
    Trace t;
    Mat memory = encode(m, src, 1, record ? &t.encoder : nullptr);
    EncoderContext enc{&memory, &src};
    Mat logits = decode(m, tgt, 1, enc, nullptr, record ? &t.decoder : nullptr);
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["tokens"] = n;
  state.counters["flops"] = flops(forward_flops(m.config, n, n));
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
  sf::tune_allocator();  // as the stepformer executable does
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
