#include "model/positional_encoding.h"

#include <cmath>

namespace sf {

float pe_frequency(int k, int d) {
  // Computed in double, then rounded once, so large t·ω stays accurate before sin/cos.
  return static_cast<float>(std::pow(10000.0, -2.0 * k / d));
}

float pe_value(int t, int i, int d) {
  const double w = std::pow(10000.0, -2.0 * (i / 2) / d);
  const double a = t * w;
  return static_cast<float>(i % 2 == 0 ? std::sin(a) : std::cos(a));
}

Mat sinusoidal_pe(int n, int d) {
  Mat p(n, d);
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < d; ++i) p(t, i) = pe_value(t, i, d);
  return p;
}

Mat sinusoidal_halves_pe(int n, int d) {
  const int half = (d + 1) / 2;
  Mat p(n, d);
  for (int t = 0; t < n; ++t)
    for (int k = 0; k < half; ++k) {
      // Same angle as pe_value's pair k, in double then rounded once.
      const double a = t / std::pow(10000.0, 2.0 * k / d);
      p(t, k) = static_cast<float>(std::sin(a));
      if (half + k < d) p(t, half + k) = static_cast<float>(std::cos(a));
    }
  return p;
}

Mat positional_table(Positional p, int n, int d) {
  switch (p) {
    case Positional::Sinusoidal:
      return sinusoidal_pe(n, d);
    case Positional::SinusoidalHalves:
      return sinusoidal_halves_pe(n, d);
    case Positional::Learned:
    case Positional::Rotary:  // nothing added to the input: model/rotary.h rotates q and k instead
      return Mat();
  }
  return Mat();
}

Eigen::Matrix2f pe_rotation(int k, int phi, int d) {
  const double a = std::pow(10000.0, -2.0 * k / d) * phi;
  Eigen::Matrix2f m;
  m << static_cast<float>(std::cos(a)), static_cast<float>(std::sin(a)), static_cast<float>(-std::sin(a)),
      static_cast<float>(std::cos(a));
  return m;
}

}  // namespace sf
