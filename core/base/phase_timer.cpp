#include "base/phase_timer.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace sf {

namespace phase_detail {
std::atomic<bool> on{false};
}  // namespace phase_detail

namespace {

constexpr int kMaxThreads = 64;
constexpr int kOutside = kPhaseCount;  // not in any phase: not counted

// Ticks of an invariant time-stamp counter, or nanoseconds where there is none.
uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
#endif
}

// One thread's counts, in a slot of its own (no locks, no allocation: malloc may count itself).
struct alignas(64) Slot {
  uint64_t ticks[kPhaseCount + 1];
  uint64_t entries[kPhaseCount + 1];
  uint64_t since;
  int current;
};
Slot g_slots[kMaxThreads];
std::atomic<int> g_used{0};
std::atomic<unsigned> g_epoch{0};
thread_local int tl_slot = -1;
thread_local unsigned tl_epoch = 0;

// Calibration of ticks against the steady clock, over the counting interval.
uint64_t g_tick0 = 0, g_tick1 = 0;
std::chrono::steady_clock::time_point g_time0, g_time1;

// The calling thread's slot for this round of counting, or nullptr when all are taken.
Slot* slot() {
  const unsigned epoch = g_epoch.load(std::memory_order_acquire);
  if (tl_epoch != epoch || tl_slot < 0) {
    tl_epoch = epoch;
    tl_slot = g_used.fetch_add(1, std::memory_order_relaxed);
    if (tl_slot >= kMaxThreads) return nullptr;
    Slot& s = g_slots[tl_slot];
    s = Slot{};
    s.current = kOutside;
    s.since = ticks();
  }
  return tl_slot < kMaxThreads ? &g_slots[tl_slot] : nullptr;
}

}  // namespace

namespace phase_detail {

int enter(Phase p) {
  Slot* s = slot();
  if (!s) return kOutside;
  const uint64_t now = ticks();
  s->ticks[s->current] += now - s->since;
  s->since = now;
  const int previous = s->current;
  s->current = static_cast<int>(p);
  ++s->entries[s->current];
  return previous;
}

void leave(int previous) {
  Slot* s = slot();
  if (!s) return;
  const uint64_t now = ticks();
  s->ticks[s->current] += now - s->since;
  s->since = now;
  s->current = previous;
}

}  // namespace phase_detail

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Rest:
      return "the rest";
    case Phase::ProjectionForward:
      return "products: projections, forward";
    case Phase::HeadsForward:
      return "products: attention heads, forward";
    case Phase::InputGradient:
      return "products: input gradients dy W";
    case Phase::WeightGradient:
      return "products: weight gradients dy^T x";
    case Phase::HeadsBackward:
      return "products: attention heads, backward";
    case Phase::Transpose:
      return "K and V transposed";
    case Phase::Softmax:
      return "softmax";
    case Phase::SoftmaxBackward:
      return "softmax backward";
    case Phase::LayerNorm:
      return "LayerNorm";
    case Phase::LayerNormBackward:
      return "LayerNorm backward";
    case Phase::BiasGradient:
      return "bias gradients";
    case Phase::Loss:
      return "loss and its gradient";
    case Phase::Embedding:
      return "embeddings, masks";
    case Phase::RecordingCopy:
      return "recording copies";
    case Phase::Adam:
      return "Adam with the gradient norms";
    case Phase::Batch:
      return "batch sampling";
    case Phase::Allocation:
      return "allocation (malloc, free)";
    case Phase::Count:
      break;
  }
  return "?";
}

void start_phases() {
  g_used.store(0, std::memory_order_relaxed);
  g_epoch.fetch_add(1, std::memory_order_release);
  g_time0 = std::chrono::steady_clock::now();
  g_tick0 = ticks();
  phase_detail::on.store(true, std::memory_order_relaxed);
}

void stop_phases() {
  phase_detail::on.store(false, std::memory_order_relaxed);
  g_time1 = std::chrono::steady_clock::now();
  g_tick1 = ticks();
}

PhaseTotals phase_totals() {
  PhaseTotals t;
  const double ns = std::chrono::duration<double, std::nano>(g_time1 - g_time0).count();
  const double ns_per_tick = g_tick1 > g_tick0 ? ns / static_cast<double>(g_tick1 - g_tick0) : 0.0;
  t.threads = std::min(g_used.load(std::memory_order_relaxed), kMaxThreads);
  for (int i = 0; i < t.threads; ++i)
    for (int p = 0; p < kPhaseCount; ++p) {
      t.seconds[static_cast<size_t>(p)] += static_cast<double>(g_slots[i].ticks[p]) * ns_per_tick * 1e-9;
      t.entries[static_cast<size_t>(p)] += g_slots[i].entries[p];
    }
  return t;
}

}  // namespace sf
