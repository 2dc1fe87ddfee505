// position_view.h — the numbers of the explorer's sinusoidal-position views ("Transformer in
// details" lecture, Positional Encoding): how alike two positions' vectors are, and the shift
// property — each (sin, cos) pair of p_{t+φ} is the pair of p_t turned by the angle ω_k·φ, the
// same rotation M(k, φ) for every t.
#pragma once

#include <Eigen/Core>

#include "base/tensor.h"

namespace sf {

// The wavelength of pair k, in positions: 2π / ω_k (pair 0: 2π; the last pair: nearly 10000·2π).
float pe_wavelength(int k, int d);

// S[t, s] = p_t · p_s of a position table P (L, d): (L, L).
Mat position_similarity(const Mat& P);

// Pair k of p_t turned by M(k, φ) against pair k of p_{t+φ}.
struct PairShift {
  float omega = 0;                      // ω_k = 10000^(−2k/d)
  float angle = 0;                      // ω_k·φ, radians
  Eigen::Matrix2f rotation;             // M(k, φ)
  Eigen::Vector2f p_t, turned, p_tphi;  // (p_t[2k], p_t[2k+1]), M(k, φ) · that pair, (p_{t+φ}[2k], p_{t+φ}[2k+1])
  float max_diff = 0;                   // max |M(k, φ) p_t − p_{t+φ}| over the pair's two values
};

// P (L, d) an interleaved sinusoidal table (positional_encoding.h); needs 0 ≤ k < d/2 and
// 0 ≤ t ≤ t + φ < L.
PairShift pair_shift(const Mat& P, int k, int phi, int t);

}  // namespace sf
