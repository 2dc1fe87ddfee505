// vmath.h — element-wise maths written so that the compiler vectorises it.
//
// libm's expf is a call per element, which no loop vectorises, and Eigen's vectorised exp runs a
// packet at a time and sends the tail of a short array (an attention row over 11 keys) through
// libm again. exp_value is plain float arithmetic: a loop over it (the softmax's, which also zeroes
// the masked keys) is one plain loop the compiler turns into SIMD of any width, tail included.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "base/tensor.h"  // Eigen, after the AVX-512 intrinsics header (see there)

namespace sf {

// e^v within 1 ulp of the exact value (measured over [−87.3, 88.3] in steps of 7e−4). The argument
// is clamped to [−87.3, 88.4] first (Cephes' expf, as Eigen's vectorised exp does): e^−inf comes out
// as 1.2e−38, not 0, so a caller that needs exact zeros (masked attention keys) writes them itself.
// Plain float arithmetic, inlined into a loop, which the compiler vectorises.
inline float exp_value(float v) {
  // e^v = 2^m · e^r with m = round(v / ln 2) and |r| ≤ ln 2 / 2; ln 2 is split in two parts so
  // that v − m·ln 2 loses no bits.
  v = v < -87.33654f ? -87.33654f : v;  // (std::min/max take references, which stop GCC from vectorising)
  v = v > 88.37626f ? 88.37626f : v;
  // round to nearest by the 1.5·2²³ trick (std::floor would keep the loop scalar)
  const float m = (v * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = v - m * 0.693359375f;
  r = r - m * -2.12194440e-4f;
  float p = 1.9875691500e-4f;  // Cephes' degree-5 minimax polynomial for (e^r − 1 − r) / r²
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * (r * r) + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(m) + 127) << 23;  // 2^m: m ∈ [−126, 127], a normal float
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return er * scale;
}

}  // namespace sf
