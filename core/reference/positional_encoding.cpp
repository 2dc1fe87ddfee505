#include "reference/positional_encoding.h"

#include <cmath>

namespace sf::ref {

namespace {

// t·ω_k = t / 10000^(2k/d), in double (large t·ω stays accurate), rounded once by the caller.
double angle(int t, int k, int d) { return t / std::pow(10000.0, 2.0 * k / d); }

}  // namespace

Mat sinusoidal_positions(int n, int d, int pos0) {
  Mat p(n, d);  // (n, d)
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < d; ++i) {
      const double a = angle(pos0 + t, i / 2, d);  // columns 2k and 2k+1 share ω_k
      p(t, i) = static_cast<float>(i % 2 == 0 ? std::sin(a) : std::cos(a));
    }
  return p;
}

Mat sinusoidal_positions_halves(int n, int d, int pos0) {
  const int half = (d + 1) / 2;  // ⌈d/2⌉ sines
  Mat p(n, d);                   // (n, d)
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < d; ++i)
      p(t, i) = static_cast<float>(i < half ? std::sin(angle(pos0 + t, i, d)) : std::cos(angle(pos0 + t, i - half, d)));
  return p;
}

Mat learned_positions(const Mat& table, int n, int pos0) { return table.middleRows(pos0, n); }

Mat positional_encoding(const Model& m, int n, int pos0) {
  const int d = m.config.d_model;
  switch (m.config.positional) {
    case Positional::Sinusoidal:
      return sinusoidal_positions(n, d, pos0);
    case Positional::SinusoidalHalves:
      return sinusoidal_positions_halves(n, d, pos0);
    case Positional::Learned:
      return learned_positions(m.weights.pos_embed, n, pos0);
    case Positional::Rotary:  // nothing added to x: reference/rotary.h turns q and k instead
      return Mat::Zero(n, d);
  }
  return Mat::Zero(n, d);
}

}  // namespace sf::ref
