// schedule.h — the learning rate at each optimiser step.
//
//   warm-up (Vaswani §5.3):  lr = factor · d_model^−0.5 · min(step^−0.5, step · warmup^−1.5)
//   constant:                lr = rate from the first step (no warm-up: shows why post-LN needs one)
// Optional cool-down (not in the lectures): over the last `cooldown` of `total` steps the rate falls
// linearly to 0, so that a short run ends on small, quiet updates. Steps count from 1.
#pragma once

#include <cstdint>

namespace sf {

struct Schedule {
  enum Kind { Warmup, Constant } kind = Warmup;
  double factor = 1.0;  // warm-up schedule
  int warmup = 400;
  int d_model = 64;
  double rate = 1e-3;  // constant schedule
  int64_t total = 0;   // planned steps (for the cool-down)
  int cooldown = 0;    // 0 = none

  double at(int64_t step) const;
};

}  // namespace sf
