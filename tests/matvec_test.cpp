// matvec_test.cpp — the float32 matrix-vector kernel of a cached decoding step (base/matvec.h):
// the build's SIMD form and the portable form, which every machine runs, against the product
// summed in double precision, within the float32 error of a sum of k products in any order; the
// same bits whatever range of rows a call covers; and matmul_transposed's one-row product, split
// between threads or not, giving the kernel's bits plus the bias.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "base/matvec.h"
#include "base/threads.h"
#include "model/linear.h"
#include "row_ranges.h"
#include "test_util.h"

namespace sf {
namespace {

// Σ_i x[i]·W(r, i) in double: each product of two floats is exact in double, and k ≤ 2^10 sums
// round at 2^-53 relative, far below the float32 bound below.
double exact_row(const float* x, const Mat& w, Eigen::Index r) {
  double s = 0;
  for (Eigen::Index i = 0; i < w.cols(); ++i) s += static_cast<double>(x[i]) * w(r, i);
  return s;
}

TEST(MatVec, EqualsTheDoublePrecisionProductWithinTheFloat32Bound) {
  // Columns: shorter than one register, one register, odd tails, several blocks and a tail;
  // rows: one, a few, many.
  const std::pair<int, int> shapes[] = {{1, 1},   {1, 513},  {3, 7},    {5, 16},   {9, 17},
                                        {4, 100}, {13, 257}, {33, 896}, {70, 1031}};
  for (auto [rows, cols] : shapes) {
    const Mat w = Mat::Random(rows, cols);
    const Mat x = Mat::Random(1, cols);
    std::vector<float> fast(static_cast<size_t>(rows)), plain(static_cast<size_t>(rows));
    matvec(x.data(), w, 0, rows, fast.data());
    portable::matvec(x.data(), w, 0, rows, plain.data());
    for (int r = 0; r < rows; ++r) {
      const double want = exact_row(x.data(), w, r), tol = test::float_sum_bound(x.data(), w, r);
      EXPECT_LE(std::fabs(fast[static_cast<size_t>(r)] - want), tol)
          << rows << "x" << cols << " row " << r << " (" << matvec_kernel_name() << ")";
      EXPECT_LE(std::fabs(plain[static_cast<size_t>(r)] - want), tol)
          << "portable " << rows << "x" << cols << " row " << r;
    }
  }
}

TEST(MatVec, AnyRangeOfRowsGivesTheSameBits) {
  const Mat w = Mat::Random(kRangeRows, 211);
  const Mat x = Mat::Random(1, 211);
  expect_same_bits_in_parts([&](int r0, int r1, float* y) { matvec(x.data(), w, r0, r1, y); }, matvec_kernel_name());
  expect_same_bits_in_parts([&](int r0, int r1, float* y) { portable::matvec(x.data(), w, r0, r1, y); }, "portable");
}

TEST(MatVec, LinearOneRowIsTheKernelPlusBiasOnOneThreadOrTwo) {
  // 515 × 517 = 266,255 weights: above the size at which two threads split the rows, 515 rows
  // not a multiple of the 16-row blocks, 517 columns not a multiple of any vector width.
  const int before = threads();
  const Mat w = Mat::Random(515, 517);
  const Mat x = Mat::Random(1, 517);
  const RowVec bias = RowVec::Random(515);
  std::vector<float> kernel(515);
  matvec(x.data(), w, 0, 515, kernel.data());
  Mat want(1, 515);
  for (int r = 0; r < 515; ++r) want(0, r) = kernel[static_cast<size_t>(r)] + bias[r];
  for (int T : {1, 2}) {
    set_threads(T);
    Mat y;
    linear_forward(x, w, bias, y);
    ASSERT_EQ(y.rows(), 1);
    ASSERT_EQ(y.cols(), 515);
    EXPECT_TRUE(y == want) << T << " threads";
  }
  set_threads(before);
}

}  // namespace
}  // namespace sf
