#include "model/rotary.h"

#include <cmath>
#include <vector>

#include "base/threads.h"

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

namespace {

// cos(p·θ_i), sin(p·θ_i) for i < r/2 at position p.
void angles(const Rotation& rot, int p, float* cs, float* sn) {
  for (int i = 0; i < rot.rot_dim / 2; ++i) {
    const double angle = static_cast<double>(p) * static_cast<double>((*rot.inv_freq)(i));
    cs[i] = static_cast<float>(std::cos(angle));
    sn[i] = static_cast<float>(std::sin(angle));
  }
}

}  // namespace

void tabulate_angles(Rotation& rot) {
  const size_t half = static_cast<size_t>(rot.rot_dim / 2), rows = static_cast<size_t>(rot.rows_per_seq);
  rot.cos.resize(rows * half);
  rot.sin.resize(rows * half);
  for (size_t r = 0; r < rows; ++r)
    angles(rot, rot.pos0 + static_cast<int>(r), rot.cos.data() + r * half, rot.sin.data() + r * half);
}

namespace {

// Rows [r0, r1) of x turned: each head's pairs (v_i, v_{i+r/2}) by the row's position's angles.
void rotate_rows(Mat& x, const Rotation& rot, Eigen::Index r0, Eigen::Index r1) {
  const int half = rot.rot_dim / 2;
  const int heads = static_cast<int>(x.cols()) / rot.d_head;
  const bool tabulated = rot.cos.size() == static_cast<size_t>(rot.rows_per_seq) * static_cast<size_t>(half);
  std::vector<float> own_cs, own_sn;  // one position's cos, sin, when not tabulated
  if (!tabulated) {
    own_cs.resize(static_cast<size_t>(half));
    own_sn.resize(static_cast<size_t>(half));
  }
  for (Eigen::Index r = r0; r < r1; ++r) {
    const int in_seq = static_cast<int>(r % rot.rows_per_seq);
    const float* cs = own_cs.data();
    const float* sn = own_sn.data();
    if (tabulated) {
      cs = rot.cos.data() + static_cast<size_t>(in_seq) * static_cast<size_t>(half);
      sn = rot.sin.data() + static_cast<size_t>(in_seq) * static_cast<size_t>(half);
    } else {
      angles(rot, rot.pos0 + in_seq, own_cs.data(), own_sn.data());
    }
    float* row = x.row(r).data();
    for (int h = 0; h < heads; ++h) {
      float* v = row + h * rot.d_head;
      for (int i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half], c = cs[i], s = sn[i];
        v[i] = a * c - b * s;
        v[i + half] = b * c + a * s;
      }
    }
  }
}

}  // namespace

void apply_rotary(Mat& x, const Rotation& rot) {
  // Each row turns alone: a long input's rows split between the cores give the same bits.
  split_pass(x.rows(), x.cols(), 1, [&](int64_t r0, int64_t r1) { rotate_rows(x, rot, r0, r1); });
}

}  // namespace sf
