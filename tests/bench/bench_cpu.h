// bench_cpu.h — the core a benchmark's one-thread figures run on.
//
// scripts/bench.sh names one core in STEPFORMER_BENCH_CPU and runs every one-thread figure there:
// stepformer's, PyTorch's (tests/bench/peers/bench_cpu.py) and the one-thread limits they are
// fractions of. A shared host's cores differ from moment to moment (one may share its physical
// core, its caches or the device interrupts with other work), so a figure measured on one core and
// its limit on the other would compare two machines. Figures on more threads run on every core
// the process started with. Unset, nothing is pinned.
#pragma once

#include <sched.h>

#include <cstdio>
#include <cstdlib>

#include "base/threads.h"

namespace sf {

// Pins the calling thread to STEPFORMER_BENCH_CPU when `threads` is 1, else gives it back every
// core the process started with. Threads started afterwards inherit the calling thread's cores.
inline void run_on_bench_cores(int threads) {
  static const cpu_set_t started = [] {
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    return s;
  }();
  const char* cpu = std::getenv("STEPFORMER_BENCH_CPU");
  if (!cpu || !*cpu) return;
  cpu_set_t s = started;
  if (threads == 1) {
    char* end = nullptr;
    const long c = std::strtol(cpu, &end, 10);
    if (*end || c < 0 || c >= CPU_SETSIZE || !CPU_ISSET(c, &started)) {
      std::fprintf(stderr, "STEPFORMER_BENCH_CPU: expected one of the process's cores; found '%s'\n", cpu);
      std::exit(2);
    }
    CPU_ZERO(&s);
    CPU_SET(c, &s);
  }
  sched_setaffinity(0, sizeof s, &s);
}

// set_threads(n) (0: every core), on the cores run_on_bench_cores gives that many threads.
inline void bench_threads(int n) {
  set_threads(n);
  run_on_bench_cores(threads());
}

}  // namespace sf
