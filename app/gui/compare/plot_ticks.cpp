// plot_ticks.cpp — axis ticks ("nice" steps of 1, 2 or 5 × 10^k), tick and value text, and the
// dashed line the plots and legends draw.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "compare/plot_parts.h"
#include "gfx/imgui_math.h"

namespace sf::gui {

namespace {

// 1, 2 or 5 × 10^k closest above `raw`.
double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

}  // namespace

namespace plot_parts {

std::vector<double> linear_ticks(double lo, double hi, int target, bool integer) {
  double step = nice_step((hi - lo) / std::max(1, target));
  if (integer) step = std::max(1.0, std::round(step));
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9 && t.size() < 50; v += step)
    t.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

std::string tick_text(double v) {
  char b[32];
  const double a = std::fabs(v);
  if (v == 0) return "0";
  if (a >= 1e5 || a < 1e-3)
    std::snprintf(b, sizeof b, "%.0e", v);
  else if (a >= 100 || std::fabs(v - std::round(v)) < 1e-9)
    std::snprintf(b, sizeof b, "%.0f", v);
  else if (a >= 1)
    std::snprintf(b, sizeof b, "%.1f", v);
  else
    std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

std::string value_text(double v) {
  if (std::isnan(v)) return "—";
  char b[32];
  std::snprintf(b, sizeof b, "%.5g", v);
  return b;
}

// `phase` carries the pattern from one segment to the next; it stays in [0, 2·dash).
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float th, float& phase, float dash) {
  const ImVec2 d = b - a;
  const float len = std::sqrt(d.x * d.x + d.y * d.y);
  if (!(len > 0) || !(dash > 0)) return;
  float t = 0;
  while (t < len) {
    const bool on = phase < dash;
    const float left = std::max(0.5f, (on ? dash : 2 * dash) - phase);  // at least half a pixel per turn
    const float t1 = std::min(len, t + left);
    if (on) dl->AddLine(a + d * (t / len), a + d * (t1 / len), col, th);
    phase += t1 - t;
    if (phase >= 2 * dash) phase -= 2 * dash;
    t = t1;
  }
}

}  // namespace plot_parts

}  // namespace sf::gui
