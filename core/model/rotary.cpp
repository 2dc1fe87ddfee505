#include "model/rotary.h"

#include <cmath>
#include <vector>

namespace sf {

RowVec rope_inv_freq(const Config& c) {
  const RopeConfig& r = c.rope;
  const int dim = c.rotary_dim();
  RowVec out(dim / 2);
  constexpr double kPi = 3.14159265358979323846;
  for (int i = 0; i < dim / 2; ++i) {
    double f = 1.0 / std::pow(static_cast<double>(r.theta), 2.0 * i / dim);
    switch (r.scaling) {
      case RopeScaling::None:
        break;
      case RopeScaling::Linear:
        f /= r.factor;
        break;
      case RopeScaling::Llama3: {
        // Wavelengths longer than original_max_len / low_freq_factor are stretched by the factor,
        // shorter than original_max_len / high_freq_factor kept, and those between interpolated.
        const double wavelen = 2.0 * kPi / f;
        const double low_wavelen = r.original_max_len / static_cast<double>(r.low_freq_factor);
        const double high_wavelen = r.original_max_len / static_cast<double>(r.high_freq_factor);
        if (wavelen > low_wavelen) {
          f /= r.factor;
        } else if (wavelen >= high_wavelen) {
          const double smooth =
              (r.original_max_len / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
          f = (1.0 - smooth) * f / r.factor + smooth * f;
        }
        break;
      }
    }
    out(i) = static_cast<float>(f);
  }
  return out;
}

void apply_rotary(Mat& x, const Rotation& rot) {
  const int half = rot.rot_dim / 2;
  const int heads = static_cast<int>(x.cols()) / rot.d_head;
  std::vector<float> cs(static_cast<size_t>(half)), sn(static_cast<size_t>(half));  // one position's cos, sin
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double pos = rot.pos0 + static_cast<int>(r % rot.rows_per_seq);
    for (int i = 0; i < half; ++i) {
      const double angle = pos * static_cast<double>((*rot.inv_freq)(i));
      cs[static_cast<size_t>(i)] = static_cast<float>(std::cos(angle));
      sn[static_cast<size_t>(i)] = static_cast<float>(std::sin(angle));
    }
    float* row = x.row(r).data();
    for (int h = 0; h < heads; ++h) {
      float* v = row + h * rot.d_head;
      for (int i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half], c = cs[static_cast<size_t>(i)], s = sn[static_cast<size_t>(i)];
        v[i] = a * c - b * s;
        v[i + half] = b * c + a * s;
      }
    }
  }
}

}  // namespace sf
