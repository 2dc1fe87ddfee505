// Where a training step's time goes: the training benchmark's step (train_bench.cpp's Throughput:
// the copy task, d_model 128, 2+2 layers, batch 64) with the phase timer on (base/phase_timer.h),
// a table of the phases' times per step.
//
//   ./build/tests/bench/train_breakdown_bench [--threads N] [--steps S] [--post]
//
// Each phase's time is the wall time inside it, summed over the threads, scaled by the share of
// wall time the threads spent on a core (the process's CPU time over the threads' wall time):
// on a shared machine a preempted thread's waiting lands in the phases in proportion to their
// length, so the fractions hold and the scaled times estimate CPU time. The products' rates
// count their FLOPs from the shapes. Allocation is counted by wrapping malloc and free here
// (not in a sanitizer build, whose allocator is its own).
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "allocation_phase.h"
#include "base/phase_timer.h"
#include "base/startup.h"
#include "base/threads.h"
#include "stepper/cost.h"
#include "bench_cpu.h"
#include "copy_task.h"
#include "train/trainer.h"

namespace sf {
namespace {

double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int run(int argc, char** argv) {
  int threads = 1, steps = 200;
  NormPlacement norm = NormPlacement::Pre;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (a == "--post") {
      norm = NormPlacement::Post;
    } else {
      std::fprintf(stderr, "usage: train_breakdown_bench [--threads N] [--steps S] [--post]; found '%s'\n", a.c_str());
      return 2;
    }
  }
  if (threads < 1 || steps < 1) {
    std::fprintf(stderr, "expected --threads >= 1 and --steps >= 1, found %d and %d\n", threads, steps);
    return 2;
  }
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // as `stepformer train` and train_bench do
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  run_on_bench_cores(threads);
  auto t = Trainer::create(copy_options(norm, threads, 1));
  if (!t) {
    std::fprintf(stderr, "%s\n", t.error().c_str());
    return 1;
  }
  for (int i = 0; i < 5; ++i) t->step();  // warm-up: first allocations, OpenMP's threads

  // The timer's own cost, which the phases' times include: an empty scope entered and left.
  start_phases();
  const double c0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  constexpr int kScopes = 200000;
  for (int i = 0; i < kScopes; ++i) {
    const ScopedPhase empty(Phase::Rest);
  }
  const double scope_s = (cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - c0) / kScopes;  // CPU time
  stop_phases();

  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
  start_phases();
  for (int i = 0; i < steps; ++i) t->step();
  stop_phases();
  const double cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const PhaseTotals tot = phase_totals();

  double counted = 0;
  for (double s : tot.seconds) counted += s;
  // The share of the counted wall time the threads ran: with one thread, its CPU time over its
  // wall time; with more, the process's CPU time (which includes OpenMP's waiting at the end of
  // a region) bounds it from above.
  const double on_core = std::min(1.0, cpu / std::max(counted, 1e-12));
  const double per_step = 1e3 / steps;  // seconds in total → ms per step

  // FLOPs per step from the shapes (stepper/cost.h): the forward's over the batch (10 source
  // tokens, decoder input <s> + 10), the input and the weight gradients as much again each, an
  // attention head's backward twice its forward.
  const FlopCount f = forward_flops(t->model().config, 10, 11);
  const double dense = 64.0 * static_cast<double>(f.projections + f.feed_forward + f.generator);
  const double heads = 64.0 * static_cast<double>(f.attention);
  const double flops = 3.0 * 64.0 * static_cast<double>(f.total());
  auto phase_flops = [&](Phase p) {
    switch (p) {
      case Phase::ProjectionForward:
      case Phase::InputGradient:
      case Phase::WeightGradient:
        return dense;
      case Phase::HeadsForward:
        return heads;
      case Phase::HeadsBackward:
        return 2.0 * heads;
      default:
        return 0.0;
    }
  };
  std::printf("training step: copy task, d 128, 2+2 layers, batch 64, %s-LN, %d thread%s, %d steps\n",
              norm == NormPlacement::Pre ? "pre" : "post", threads, threads == 1 ? "" : "s", steps);
  std::printf("wall %.2f ms per step, CPU %.2f ms per step; %.3f GFLOP per step, %.1f GFLOP/s of wall time\n",
              wall * per_step, cpu * per_step, flops * 1e-9, flops * steps / wall * 1e-9);
  std::printf("counted in phases: %.2f ms of thread time per step over %d thread%s, on a core %.0f %% of it\n\n",
              counted * per_step, tot.threads, tot.threads == 1 ? "" : "s", 100.0 * on_core);
  std::printf("| phase | ms per step (CPU) | share | GFLOP/s | entries per step |\n|---|---:|---:|---:|---:|\n");
  std::array<int, kPhaseCount> order{};
  for (int p = 0; p < kPhaseCount; ++p) order[static_cast<size_t>(p)] = p;
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return tot.seconds[static_cast<size_t>(a)] > tot.seconds[static_cast<size_t>(b)]; });
  double products = 0;
  for (int p : order) {
    const size_t i = static_cast<size_t>(p);
    const Phase ph = static_cast<Phase>(p);
    const double cpu_s = tot.seconds[i] * on_core;  // (summed over the threads)
    if (phase_flops(ph) > 0) products += cpu_s;
    if (tot.entries[i] == 0 && ph != Phase::Allocation) continue;
    char rate[32] = "";
    if (phase_flops(ph) > 0 && cpu_s > 0)
      std::snprintf(rate, sizeof rate, "%.1f", phase_flops(ph) * steps / cpu_s * 1e-9);
    std::printf("| %s | %.2f | %.1f %% | %s | %.0f |\n", phase_name(ph), cpu_s * per_step,
                100.0 * tot.seconds[i] / counted, rate, static_cast<double>(tot.entries[i]) / steps);
  }
  if (!SF_WRAP_MALLOC) std::printf("(allocation not counted: a sanitizer build)\n");
  double scopes = 0;
  for (uint64_t e : tot.entries) scopes += static_cast<double>(e);
  std::printf(
      "\nthe timer itself: %.0f ns of CPU a scope (an empty one, over a loop) x %.0f scopes a step = %.2f ms a "
      "step, within the times above (most in the attention heads' phases)\n",
      scope_s * 1e9, scopes / steps, scope_s * scopes / steps * 1e3);
  std::printf("\nproducts: %.2f ms per step (CPU, over the threads), %.1f %% of the counted time, %.1f GFLOP/s\n",
              products * per_step, 100.0 * products / (counted * on_core), flops * steps / products * 1e-9);
  return 0;
}

}  // namespace
}  // namespace sf

int main(int argc, char** argv) {
  // As the stepformer executable does for `train` (first: it may start the program again).
  sf::restart_with_runtime_settings(argv, sf::Arenas::PerThread);
  return sf::run(argc, argv);
}
