#include "reference/rotary.h"

#include <cmath>

namespace sf::ref {

RowVec rotary_frequencies(const Config& c) {
  const RopeConfig& r = c.rope;
  const int dim = c.rotary_dim();
  const double pi = std::acos(-1.0);
  RowVec theta(dim / 2);
  for (int i = 0; i < dim / 2; ++i) {
    double f = std::pow(static_cast<double>(r.theta), -2.0 * i / dim);
    if (r.scaling == RopeScaling::Linear) f /= r.factor;
    if (r.scaling == RopeScaling::Llama3) {
      const double wavelength = 2 * pi / f;
      const double long_wave = r.original_max_len / r.low_freq_factor;    // beyond: stretched
      const double short_wave = r.original_max_len / r.high_freq_factor;  // below: kept
      if (wavelength > long_wave) {
        f = f / r.factor;
      } else if (wavelength >= short_wave) {
        const double s =
            (r.original_max_len / wavelength - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
        f = (1 - s) * f / r.factor + s * f;
      }
    }
    theta(i) = static_cast<float>(f);
  }
  return theta;
}

Mat rotate_half(const Mat& x) {
  const Eigen::Index h = x.cols() / 2;
  Mat y(x.rows(), x.cols());  // (n, r)
  y.leftCols(h) = -x.rightCols(h);
  y.rightCols(h) = x.leftCols(h);
  return y;
}

Mat rotary(const Mat& x, const RowVec& theta, int pos0) {
  const Eigen::Index r = 2 * theta.size();
  Mat cos(x.rows(), r), sin(x.rows(), r);  // (n, r)
  for (Eigen::Index t = 0; t < x.rows(); ++t)
    for (Eigen::Index i = 0; i < r; ++i) {
      const double angle = static_cast<double>(pos0 + t) * theta(i % theta.size());
      cos(t, i) = static_cast<float>(std::cos(angle));
      sin(t, i) = static_cast<float>(std::sin(angle));
    }
  Mat y = x;  // (n, d_k)
  y.leftCols(r) = x.leftCols(r).cwiseProduct(cos) + rotate_half(x.leftCols(r)).cwiseProduct(sin);
  return y;
}

}  // namespace sf::ref
