// phase_timer_test.cpp — the phase timer (base/phase_timer.h): nested scopes count exclusively,
// time outside every scope and time while off is not counted (train_test.cpp: a training step
// counted by phase is the same step as one not counted).
#include <gtest/gtest.h>

#include <chrono>

#include "base/phase_timer.h"

namespace sf {
namespace {

// A little work the compiler cannot drop.
float spin(int n) {
  volatile float x = 1.0f;
  for (int i = 0; i < n; ++i) x = x * 1.0000001f;
  return x;
}

TEST(PhaseTimer, NestedScopesCountExclusivelyAndOnlyWhileOn) {
  {
    const ScopedPhase off(Phase::Softmax);  // counting is off: nothing
    spin(1000);
  }
  const auto t0 = std::chrono::steady_clock::now();
  start_phases();
  spin(1000);  // outside every scope: not counted
  {
    const ScopedPhase outer(Phase::Softmax);
    spin(1000);
    for (int i = 0; i < 3; ++i) {
      const ScopedPhase inner(Phase::Adam);
      spin(1000);
    }
  }
  stop_phases();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    const ScopedPhase after(Phase::LayerNorm);  // off again
    spin(1000);
  }
  const PhaseTotals t = phase_totals();
  EXPECT_EQ(t.threads, 1);
  EXPECT_EQ(t.entries[static_cast<size_t>(Phase::Softmax)], 1u);
  EXPECT_EQ(t.entries[static_cast<size_t>(Phase::Adam)], 3u);
  EXPECT_EQ(t.entries[static_cast<size_t>(Phase::LayerNorm)], 0u);
  EXPECT_GT(t.seconds[static_cast<size_t>(Phase::Softmax)], 0.0);
  EXPECT_GT(t.seconds[static_cast<size_t>(Phase::Adam)], 0.0);
  double sum = 0;
  for (double s : t.seconds) sum += s;
  EXPECT_LE(sum, wall * 1.05);  // (the tick rate is calibrated over the interval)

  start_phases();  // a new round starts from zero
  stop_phases();
  const PhaseTotals z = phase_totals();
  for (uint64_t e : z.entries) EXPECT_EQ(e, 0u);
  EXPECT_STREQ(phase_name(Phase::SoftmaxBackward), "softmax backward");
}

}  // namespace
}  // namespace sf
