// Full encoder-decoder forward pass with recording on, batch 1, one thread (issue: core).
//   ./build/tests/bench/forward_bench
// PyTorch 1.13 + OpenBLAS on this machine: small 1.8 ms, base 77 ms (issue text); our own peer
// measurement is in tests/bench/peers/RESULTS.md.
#include <benchmark/benchmark.h>

#include "base/allocator.h"
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
  std::vector<std::string> v{"<pad>", "<s>", "</s>", "<unk>"};
  while (static_cast<int>(v.size()) < vocab) v.push_back("w" + std::to_string(v.size()));
  c.src_vocab = *Vocab::make(v, Tokenizer::Word, "src");
  c.tgt_vocab = *Vocab::make(v, Tokenizer::Word, "tgt");
  Weights w;
  init_xavier(w, c, 1);
  return Model::make(c, std::move(w));
}

void forward(benchmark::State& state, int d, int h, int layers, int dff, int n, bool record) {
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
}

// small: d_model 128, 4 heads, 2+2 layers, d_ff 512, 32 tokens each side.
BENCHMARK_CAPTURE(forward, small_recorded, 128, 4, 2, 512, 32, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(forward, small_unrecorded, 128, 4, 2, 512, 32, false)->Unit(benchmark::kMillisecond);
// base: d_model 512, 8 heads, 6+6 layers, d_ff 2048, 64 tokens each side.
BENCHMARK_CAPTURE(forward, base_recorded, 512, 8, 6, 2048, 64, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(forward, base_unrecorded, 512, 8, 6, 2048, 64, false)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  sf::tune_allocator();  // as the stepformer executable does
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
