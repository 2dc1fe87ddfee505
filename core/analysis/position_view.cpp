#include "analysis/position_view.h"

#include <algorithm>
#include <cmath>

#include "base/gemm.h"
#include "model/positional_encoding.h"

namespace sf {

float pe_wavelength(int k, int d) { return 6.2831853f / pe_frequency(k, d); }

Mat position_similarity(const Mat& P) {
  const Eigen::Index L = P.rows();
  Mat S(L, L);  // P Pᵀ
  gemm(L, L, P.cols(), mat_ref(P), mat_ref_t(P), S.data(), L, GemmOut::Overwrite);
  return S;
}

PairShift pair_shift(const Mat& P, int k, int phi, int t) {
  const int d = static_cast<int>(P.cols());
  PairShift s;
  s.omega = pe_frequency(k, d);
  s.angle = s.omega * static_cast<float>(phi);
  s.rotation = pe_rotation(k, phi, d);
  s.p_t = Eigen::Vector2f(P(t, 2 * k), P(t, 2 * k + 1));
  const Eigen::Matrix2f& M = s.rotation;
  s.turned = Eigen::Vector2f(M(0, 0) * s.p_t(0) + M(0, 1) * s.p_t(1), M(1, 0) * s.p_t(0) + M(1, 1) * s.p_t(1));
  s.p_tphi = Eigen::Vector2f(P(t + phi, 2 * k), P(t + phi, 2 * k + 1));
  s.max_diff = std::max(std::abs(s.turned(0) - s.p_tphi(0)), std::abs(s.turned(1) - s.p_tphi(1)));
  return s;
}

}  // namespace sf
