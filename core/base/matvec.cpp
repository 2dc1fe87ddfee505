#include "base/matvec.h"

#include "base/simd.h"

namespace sf {

using Index = Eigen::Index;

namespace portable {

void matvec(const float* x, const Mat& w, Index r0, Index r1, float* y) {
  constexpr int L = 8;  // lanes: partial sums of every 8th product
  const Index k = w.cols();
  for (Index r = r0; r < r1; ++r) {
    const float* row = w.data() + r * k;
    float acc[L] = {};
    Index i = 0;
    for (; i + L <= k; i += L)
      for (int l = 0; l < L; ++l) acc[l] += x[i + l] * row[i + l];
    float sum = 0.0f;
    for (float a : acc) sum += a;
    for (; i < k; ++i) sum += x[i] * row[i];
    y[r] = sum;
  }
}

}  // namespace portable

void matvec(const float* x, const Mat& w, Index r0, Index r1, float* y) {
#ifdef SF_SIMD
  simd::matvec_rows<true, 1>(x, w.data(), w.cols(), r0, r1, y, [](const float* p) { return simd::V::load(p); });
#else
  portable::matvec(x, w, r0, r1, y);
#endif
}

const char* matvec_kernel_name() {
#ifdef SF_SIMD
  return simd::V::name(WeightStorage::F32);
#else
  return "portable";
#endif
}

}  // namespace sf
