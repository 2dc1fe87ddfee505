// packed_gemm_test.cpp — the product on a pre-packed weight (model/packed_gemm.h) equals Eigen's
// x Wᵀ to float rounding for every shape, edges of the panels and blocks included, and is the
// same bit for bit on any number of threads (base/gemm.h; gemm_test.cpp covers the kernel).
#include <gtest/gtest.h>

#include "base/threads.h"
#include "model/packed_gemm.h"

namespace sf {
namespace {

TEST(PackedGemm, EqualsEigensProductOnEveryShape) {
  // out: below one 48-row panel, odd, over one 240-row block, over several; in: odd, over one
  // depth block (Eigen's kc is a few hundred here); n: 1, odd, over one 4-column panel.
  for (const auto& [out, in] :
       std::vector<std::pair<int, int>>{{5, 3}, {47, 130}, {241, 77}, {1000, 700}, {512, 2048}}) {
    const Mat w = Mat::Random(out, in);
    const PackedWeight p = pack_weight(w);
    ASSERT_EQ(p.wt.n, out);
    ASSERT_EQ(p.wt.k, in);
    for (int n : {1, 2, 7, 33, 64}) {
      const Mat x = Mat::Random(n, in);
      const Mat want = x * w.transpose();
      Mat got;
      packed_product(x, p, got);
      ASSERT_EQ(got.rows(), n);
      ASSERT_EQ(got.cols(), out);
      EXPECT_LE((got - want).cwiseAbs().maxCoeff(), 1e-5f * static_cast<float>(in)) << out << "x" << in << " n " << n;
    }
  }
}

TEST(PackedGemm, SameBitsOnAnyThreadCount) {
  const Mat w = Mat::Random(2048, 512);
  const Mat x = Mat::Random(64, 512);
  const PackedWeight p = pack_weight(w);
  Mat one;
  {
    const ScopedThreads t(1);
    packed_product(x, p, one);
  }
  for (int n : {2, 3, 8}) {
    const ScopedThreads t(n);
    Mat got;
    packed_product(x, p, got);
    EXPECT_TRUE(got == one) << n << " threads";
  }
  EXPECT_GT(one.cwiseAbs().maxCoeff(), 1.0f);
}

}  // namespace
}  // namespace sf
