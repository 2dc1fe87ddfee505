// How much memory a stepper Session holds after decoding a long sequence (the goal: a 1024-token
// GPT-2 run stays under 2 GB in total). One case per process, since RSS only grows:
//   ./build/tests/bench/session_memory_bench --benchmark_filter=Prompt4/1024/
//   ./build/tests/bench/session_memory_bench --benchmark_filter=PromptMost/1024/
// Model: GPT-2 small's shape with random weights (d 768, 12 heads, 12 layers, d_ff 3072, 1024
// positions, vocabulary 50,257, pre-LN, tanh-GELU, learned positions, tied head: 124 M
// parameters, 498 MB of float32). The Session decodes with the KV cache and teacher forcing until
// `total` positions are filled: Prompt4 = a 4-token prompt then one step per token (the worst
// case: ~1020 recorded steps), PromptMost = a prompt of total − 25 tokens (one big prefill, then 24
// steps). Counters: rss_MB = the whole process's resident set after the run (model included),
// model_MB = the weights alone, steps = recorded decoder steps.
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "bench_common.h"
#include "stepper/session.h"

namespace sf {
namespace {

double rss_mb() {
  std::ifstream f("/proc/self/status");
  std::string key;
  while (f >> key) {
    if (key == "VmRSS:") {
      double kb = 0;
      f >> kb;
      return kb / 1024.0;
    }
    std::getline(f, key);
  }
  return 0;
}

std::shared_ptr<const Model> gpt2_small_shape() {
  return std::make_shared<const Model>(random_model(gpt2_small_config(), 50257));
}

std::string words(int from, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? " w" : "w") + std::to_string(4 + (from + i * 7919) % 50000);
  return s;
}

void run(benchmark::State& state, int prompt_len) {
  const int total = static_cast<int>(state.range(0));
  auto model = gpt2_small_shape();
  const double model_mb = double(count_params(model->weights, model->config)) * 4 / (1 << 20);
  // Positions: <s> + prompt + target; the last forced token (</s>) is chosen, never fed.
  const int target = total - 1 - prompt_len;
  DecodeSettings s;
  s.strategy = Strategy::Forced;
  int steps = 0;
  for (auto _ : state) {
    auto session = Session::create(model, words(0, prompt_len), words(prompt_len, target), s, true);
    if (!session) {
      state.SkipWithError(session.error().c_str());
      return;
    }
    session->run_to_end();
    steps = static_cast<int>(session->steps().size());
    state.counters["rss_MB"] = rss_mb();
    benchmark::DoNotOptimize(session->steps().back()->chosen);
  }
  state.counters["model_MB"] = model_mb;
  state.counters["steps"] = steps;
}

void Prompt4(benchmark::State& state) { run(state, 4); }
void PromptMost(benchmark::State& state) { run(state, static_cast<int>(state.range(0)) - 25); }

BENCHMARK(Prompt4)->Arg(128)->Arg(256)->Arg(1024)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(PromptMost)->Arg(128)->Arg(1024)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace sf

BENCHMARK_MAIN();
