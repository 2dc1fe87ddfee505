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
  // How the rows are read: on Intel cores one stream, prefetched ahead; on AMD cores without
  // software prefetch, which the hardware prefetchers follow best, from parts of the range read
  // side by side: four, or two on Zen 4. The base model's cached step at t = 64, alternated in one
  // binary:
  //   - Zen 3 (AVX2): 0.98–1.09 × its floor with four parts, 1.07–1.15 with two, 1.30–1.35 with
  //     prefetch and two, 1.55–1.63 with prefetch and one stream.
  //   - Zen 4: 3.15–3.22 ms with two parts against 3.43–3.59 with four, one stream 3.20–3.26; its
  //     best run 1.12 × its floor against 1.18. GPT-2's step (matrices of 2.4–154 MB) and
  //     SmolLM2-135M's widened to float32 ran the same either way, within the host's noise.
  //   - Zen 5 (AMD family 26) keeps four: 0.82 × its floor; two were not measured there.
  // A row's sum runs in the same order however the rows are read: the same bits.
  const auto load = [](const float* p) { return simd::V::load(p); };
  if (simd::intel_cpu())
    simd::matvec_rows<true, 1>(x, w.data(), w.cols(), r0, r1, y, load);
  else if (simd::zen4_cpu())
    simd::matvec_rows<false, 2>(x, w.data(), w.cols(), r0, r1, y, load);
  else
    simd::matvec_rows<false, 4>(x, w.data(), w.cols(), r0, r1, y, load);
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
