// phase_timer_test.cpp — the phase timer (base/phase_timer.h): nested scopes count exclusively,
// time outside every scope and time while off is not counted, and a training step counted by
// phase gives the same step as one not counted, with every kind of product in its own phase.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "base/phase_timer.h"
#include "train/trainer.h"

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

TrainOptions tiny_copy(int threads) {
  TrainOptions o;
  o.task = "copy";
  o.task_options = {1, 6, 6};
  o.norm = NormPlacement::Pre;
  o.encoder_layers = o.decoder_layers = 1;
  o.d_model = 32;
  o.n_heads = 2;
  o.d_ff = 64;
  o.batch = 8;
  o.steps = 10;
  o.seed = 3;
  o.eval_every = 0;
  o.probe_every = 0;
  o.threads = threads;
  return o;
}

TEST(PhaseTimer, CountedTrainingStepsEqualUncountedOnes) {
  for (int threads : {1, 2}) {
    auto plain = Trainer::create(tiny_copy(threads));
    auto counted = Trainer::create(tiny_copy(threads));
    ASSERT_TRUE(plain && counted);
    std::vector<StepStats> off;
    for (int i = 0; i < 3; ++i) off.push_back(plain->step());
    start_phases();
    for (int i = 0; i < 3; ++i) {
      const StepStats b = counted->step();
      EXPECT_EQ(off[static_cast<size_t>(i)].loss, b.loss);
      EXPECT_EQ(off[static_cast<size_t>(i)].grad_norm, b.grad_norm);
    }
    stop_phases();
    const PhaseTotals t = phase_totals();
    for (Phase p : {Phase::Rest, Phase::ProjectionForward, Phase::HeadsForward, Phase::InputGradient,
                    Phase::WeightGradient, Phase::HeadsBackward, Phase::Transpose, Phase::Softmax,
                    Phase::SoftmaxBackward, Phase::LayerNorm, Phase::LayerNormBackward, Phase::BiasGradient,
                    Phase::Loss, Phase::Embedding, Phase::RecordingCopy, Phase::Adam, Phase::Batch})
      EXPECT_GT(t.entries[static_cast<size_t>(p)], 0u) << phase_name(p) << ", " << threads << " thread(s)";
    EXPECT_EQ(t.entries[static_cast<size_t>(Phase::Loss)], static_cast<uint64_t>(3 * threads));  // one per shard
  }
}

}  // namespace
}  // namespace sf
