#include "train/schedule.h"

#include <algorithm>
#include <cmath>

namespace sf {

double Schedule::at(int64_t step) const {
  if (kind == Constant) return rate;
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  return factor * std::pow(static_cast<double>(d_model), -0.5) *
         std::min(std::pow(s, -0.5), s * std::pow(static_cast<double>(std::max(warmup, 1)), -1.5));
}

}  // namespace sf
