#include "train/schedule.h"

#include <algorithm>
#include <cmath>

namespace sf {

double Schedule::at(int64_t step) const {
  double lr = rate;
  if (kind == Warmup) {
    const double s = static_cast<double>(std::max<int64_t>(step, 1));
    lr = factor * std::pow(static_cast<double>(d_model), -0.5) *
         std::min(std::pow(s, -0.5), s * std::pow(static_cast<double>(std::max(warmup, 1)), -1.5));
  }
  if (cooldown > 0 && total > 0 && step > total - cooldown)
    lr *= std::max(0.0, static_cast<double>(total - step + 1) / static_cast<double>(cooldown + 1));
  return lr;
}

}  // namespace sf
