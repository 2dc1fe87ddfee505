// Where the time of the benchmarked forward passes and cached decoding steps goes, phase by phase
// (base/phase_timer.h): the products of the projections, the feed-forward and the LM head, the
// attention heads' products, softmax, LayerNorm, K transposes, embeddings and masks, recording
// copies, allocation, the rest; and the kernel time (page faults of fresh memory, mmap) of the runs.
//   ./build/tests/bench/breakdown_bench [--runs N] [--threads N] [FIGURE ...]
// FIGURE: small, base, base_unrecorded, gpt2_128, gpt2_128_rows, gpt2_1024, smollm2_128, qwen_128,
// base_decode, gpt2_decode, smollm2_decode (default: all but gpt2_128_rows, a second GPT-2 held in
// rows to compare with gpt2_128, and qwen_128, whose weights take 4 GB with their packed copy). Each
// figure is the workload of the benchmark of the same name in forward_bench, gpt2_bench,
// llama_bench and decode_bench, with random weights.
//
// A figure runs once to warm up, then `runs` times alternately untimed and timed: the untimed runs
// give the run's thread CPU time without the timer, the timed ones the phases. As in
// train_breakdown_bench, a phase's time is its wall time summed over the threads, scaled by the
// share of the wall time the threads spent on a core (the process's CPU time over the threads'
// wall time), so that the figures estimate CPU time on a shared machine; allocation is counted by
// wrapping malloc and free (not in a sanitizer build).
#include <malloc.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/allocator.h"
#include "base/phase_timer.h"
#include "allocation_phase.h"
#include "base/startup.h"
#include "base/threads.h"
#include "bench_common.h"
#include "decoder_timing.h"
#include "io/hf_config.h"

namespace sf {
namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double wall_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The calling thread's kernel time and minor page faults so far.
struct KernelUse {
  double seconds = 0;
  long faults = 0;
};
KernelUse kernel_use() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return {static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6, ru.ru_minflt};
}

// One figure: its description, its work and one run of it.
struct Figure {
  std::string name, what;
  FlopCount flops;
  bool step = false;  // a cached decoding step: rates in GB/s of weights read
  std::function<void()> run;
};

// ---- the workloads ----

// forward_bench's encoder-decoder (bench_common.h), n tokens a side.
Figure seq2seq_figure(const std::string& name, int d, int h, int layers, int dff, int n, bool record) {
  auto m = std::make_shared<const Model>(seq2seq_model(d, h, layers, dff));
  const Seq2SeqInput in = seq2seq_input(n);
  Figure f;
  f.name = name;
  char what[160];
  std::snprintf(what, sizeof what, "forward, d %d, %d heads, %d+%d layers, d_ff %d, %d tokens, recording %s", d, h,
                layers, layers, dff, n, record ? "on" : "off");
  f.what = what;
  f.flops = causal_forward_flops(m->config, n, n);
  f.run = [m, in, record] {
    const Mat logits = seq2seq_forward(*m, in, record);
    benchmark::DoNotOptimize(logits.data());
  };
  return f;
}

// A decoder-only forward over n tokens, nothing recorded (gpt2_bench, llama_bench).
Figure decoder_forward(const std::string& name, const std::string& what, std::shared_ptr<const Model> m, int n) {
  Figure f;
  f.name = name;
  f.what = what;
  f.flops = causal_forward_flops(m->config, 0, n);
  const std::vector<int> ids = prompt_ids(n, m->config.tgt_vocab.size());
  f.run = [m, ids] {
    Mat logits = decode(*m, ids, 1, EncoderContext{}, nullptr, nullptr);
    benchmark::DoNotOptimize(logits.data());
  };
  return f;
}

std::shared_ptr<Model> gpt2() {
  static std::shared_ptr<Model> m = std::make_shared<Model>(random_model(gpt2_small_config(), 50257));
  return m;
}

// llama_bench's shapes, from the architecture keys of their config.json.
std::shared_ptr<Model> llama(const std::string& key) {
  const char* json = key == "smollm2_135m"
                         ? R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 576,
               "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
               "intermediate_size": 1536, "vocab_size": 49152, "max_position_embeddings": 8192,
               "hidden_act": "silu", "rms_norm_eps": 1e-5, "rope_theta": 100000.0, "attention_bias": false,
               "mlp_bias": false, "tie_word_embeddings": true})"
                         : R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896,
               "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
               "intermediate_size": 4864, "vocab_size": 151936, "max_position_embeddings": 32768,
               "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "use_sliding_window": false,
               "tie_word_embeddings": true})";
  auto h = parse_hf_config(json, key);
  if (!h) {
    std::fprintf(stderr, "breakdown_bench: %s\n", h.error().c_str());
    std::exit(1);
  }
  return std::make_shared<Model>(random_model(h->config, h->vocab_size));
}

// A cached step whose decoder input is `ids`, the cache rolled back after each run; enc's memory
// and source ids (if any) live as long as m (parts of one DecodeBase).
Figure cached_step(const std::string& name, const std::string& what, std::shared_ptr<const Model> m,
                   const EncoderContext& enc, const std::vector<int>& ids) {
  Figure f;
  f.name = name;
  f.what = what;
  f.step = true;
  const int n_src = enc.src_ids ? static_cast<int>(enc.src_ids->size()) : 0;
  f.flops = decode_step_flops(m->config, n_src, static_cast<int>(ids.size()), true);
  auto h = std::make_shared<Hypothesis>();
  prime_cached_step(*m, enc, ids, *h);
  f.run = [m, h, enc] {
    const RowVec logits = next_logits(*m, enc, *h, true, nullptr);
    benchmark::DoNotOptimize(argmax(logits));
    drop_last_row(h->cache);
  };
  return f;
}

// decode_bench's base model (bench_common.h), step t = 64.
Figure base_decode() {
  auto b = std::make_shared<const DecodeBase>(decode_base());
  return cached_step("base_decode", "cached decode step at t = 64, base (d 512, 6+6 layers, 64 source tokens)",
                     std::shared_ptr<const Model>(b, &b->model), EncoderContext{&b->memory, &b->src},
                     decode_prefix(64));
}

Figure gpt2_decode() {
  std::vector<int> ids = prompt_ids(128, 50257);
  ids.push_back(4);
  return cached_step("gpt2_decode", "GPT-2 small cached decode step at t = 129", gpt2(), EncoderContext{}, ids);
}

// llama_bench's SmolLM2 step at t = 129, its weights float32.
Figure smollm2_decode() {
  std::vector<int> ids = prompt_ids(128, 49152);
  ids.push_back(4);
  return cached_step("smollm2_decode", "SmolLM2-135M shape cached decode step at t = 129, float32 weights",
                     llama("smollm2_135m"), EncoderContext{}, ids);
}

// GPT-2 small with its projections in rows only, as the trainer holds them: every product packs
// the panels of W as it reaches them (against gpt2(), whose projections load_model holds packed).
std::shared_ptr<const Model> gpt2_rows() {
  auto m = std::make_shared<Model>(*gpt2());
  drop_packed(m->weights);
  return m;
}

Figure make_figure(const std::string& name) {
  if (name == "small") return seq2seq_figure(name, 128, 4, 2, 512, 32, true);
  if (name == "base") return seq2seq_figure(name, 512, 8, 6, 2048, 64, true);
  if (name == "base_unrecorded") return seq2seq_figure(name, 512, 8, 6, 2048, 64, false);
  if (name == "gpt2_128") return decoder_forward(name, "GPT-2 small forward, 128 tokens", gpt2(), 128);
  if (name == "gpt2_128_rows")
    return decoder_forward(name, "GPT-2 small forward, 128 tokens, weights in rows", gpt2_rows(), 128);
  if (name == "gpt2_1024") return decoder_forward(name, "GPT-2 small forward, 1,024 tokens", gpt2(), 1024);
  if (name == "smollm2_128")
    return decoder_forward(name, "SmolLM2-135M shape forward, 128 tokens", llama("smollm2_135m"), 128);
  if (name == "qwen_128")
    return decoder_forward(name, "Qwen2.5-0.5B shape forward, 128 tokens", llama("qwen25_05b"), 128);
  if (name == "base_decode") return base_decode();
  if (name == "gpt2_decode") return gpt2_decode();
  if (name == "smollm2_decode") return smollm2_decode();
  std::fprintf(stderr,
               "breakdown_bench: expected a figure (small, base, base_unrecorded, gpt2_128, gpt2_128_rows, gpt2_1024, "
               "smollm2_128, qwen_128, base_decode, gpt2_decode, smollm2_decode), found '%s'\n",
               name.c_str());
  std::exit(2);
}

// ---- measuring and printing ----

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The FLOPs of a product phase (0 for the others): the projections', feed-forward's and LM
// head's products (ProjectionForward), the attention heads' (HeadsForward).
double phase_flops(const Figure& f, Phase p) {
  if (p == Phase::ProjectionForward)
    return static_cast<double>(f.flops.projections + f.flops.feed_forward + f.flops.generator);
  if (p == Phase::HeadsForward) return static_cast<double>(f.flops.attention);
  return 0;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void measure(Figure& f, int runs) {
  f.run();  // warm-up: caches, the allocator's heap, OpenMP's threads
  std::vector<double> plain_cpu, plain_wall;
  std::array<double, kPhaseCount> sum{};
  std::array<double, kPhaseCount> entries{};
  double timed_cpu = 0, timed_wall = 0;
  KernelUse kernel{};
  for (int r = 0; r < runs; ++r) {
    const KernelUse k0 = kernel_use();
    const double c0 = thread_cpu_seconds(), w0 = wall_seconds();
    f.run();
    plain_cpu.push_back(thread_cpu_seconds() - c0);
    plain_wall.push_back(wall_seconds() - w0);
    const KernelUse k1 = kernel_use();
    kernel.seconds += k1.seconds - k0.seconds;
    kernel.faults += k1.faults - k0.faults;
    const double c1 = process_cpu_seconds();
    start_phases();
    {
      const ScopedPhase rest(Phase::Rest);  // what no other phase covers
      f.run();
    }
    stop_phases();
    timed_cpu += process_cpu_seconds() - c1;
    const PhaseTotals t = phase_totals();
    for (int p = 0; p < kPhaseCount; ++p) {
      sum[static_cast<size_t>(p)] += t.seconds[static_cast<size_t>(p)];
      entries[static_cast<size_t>(p)] += static_cast<double>(t.entries[static_cast<size_t>(p)]);
      timed_wall += t.seconds[static_cast<size_t>(p)];
    }
  }
  // The threads' wall time inside the phases, scaled to the CPU time they had.
  const double scale = timed_wall > 0 ? std::min(1.0, timed_cpu / timed_wall) : 1.0;
  double total = 0;
  for (double& s : sum) total += s *= scale / runs;
  const double untimed = median(plain_cpu);
  std::printf("\n#### %s (`%s`), %d thread%s\n\n", f.what.c_str(), f.name.c_str(), threads(),
              threads() == 1 ? "" : "s");
  std::printf(
      "%d runs; untimed: the calling thread's CPU time %.2f ms (median; wall %.2f ms); timed: the phases "
      "add up to %.2f ms of CPU time (%.0f %% of their wall time).\n\n",
      runs, untimed * 1e3, median(plain_wall) * 1e3, total * 1e3, 100 * scale);
  std::printf("| phase | ms per run | share | scopes per run | %s |\n|---|---:|---:|---:|---:|\n",
              f.step ? "weights read" : "rate");
  std::vector<int> order;
  for (int p = 0; p < kPhaseCount; ++p) order.push_back(p);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return sum[static_cast<size_t>(a)] > sum[static_cast<size_t>(b)]; });
  for (int p : order) {
    const double s = sum[static_cast<size_t>(p)];
    if (entries[static_cast<size_t>(p)] == 0) continue;
    const double work = phase_flops(f, static_cast<Phase>(p));
    char rate[64] = "";
    if (work > 0 && s > 0) {
      if (!f.step)
        std::snprintf(rate, sizeof rate, "%.1f GFLOP/s", work / s * 1e-9);
      else if (static_cast<Phase>(p) == Phase::ProjectionForward)  // 4 bytes of weight per multiply-add
        std::snprintf(rate, sizeof rate, "%.1f GB/s", 2 * work / s * 1e-9);
    }
    std::printf("| %s | %.3f | %.1f %% | %.0f | %s |\n", phase_name(static_cast<Phase>(p)), s * 1e3, 100 * s / total,
                entries[static_cast<size_t>(p)] / runs, rate);
  }
  std::printf("| **the whole run** | %.3f | 100 %% | | %.1f GFLOP/s |\n", total * 1e3,
              static_cast<double>(f.flops.total()) / total * 1e-9);
  std::printf(
      "\nIn the kernel during the untimed runs (page faults of fresh memory, mmap; inside the phases "
      "above): %.3f ms and %.0f minor faults per run.\n",
      kernel.seconds / runs * 1e3, static_cast<double>(kernel.faults) / runs);
}

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  sf::restart_with_runtime_settings(argv, sf::Arenas::One);  // first: it may start the program again
  sf::tune_allocator();                                      // as the stepformer executable does
  int runs = 5, n_threads = 1;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      if (!sf::parse_threads(argv[++i], n_threads)) {
        std::fprintf(stderr, "breakdown_bench: --threads: expected 0 .. 1024, found '%s'\n", argv[i]);
        return 2;
      }
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "breakdown_bench: expected --runs N, --threads N or a figure, found '%s'\n", a.c_str());
      return 2;
    } else {
      names.push_back(a);
    }
  }
  if (names.empty())
    names = {"small",       "base",        "base_unrecorded", "gpt2_128",      "gpt2_1024",
             "smollm2_128", "base_decode", "gpt2_decode",     "smollm2_decode"};
  sf::bench_threads(n_threads);
  for (const std::string& n : names) {
    sf::Figure f = sf::make_figure(n);
    sf::measure(f, n == "gpt2_1024" || n == "qwen_128" ? std::min(runs, 3) : runs);
    std::fflush(stdout);
  }
  return 0;
}
