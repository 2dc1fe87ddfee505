// vmath_test.cpp — exp_value, in a loop as the softmax runs it, against double-precision exp over float's range, and
// the clamp at its ends (an attention row's masked keys, −inf, come out as tiny positive numbers).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/vmath.h"

namespace sf {
namespace {

// x[i] = e^x[i] for i < n: the loop the compiler vectorises.
void exp_all(float* x, Eigen::Index n) {
  for (Eigen::Index i = 0; i < n; ++i) x[i] = exp_value(x[i]);
}

TEST(Vmath, ExpIsWithinOneUlpOverTheNormalRange) {
  std::vector<float> x;
  for (double v = -87.3; v < 88.3; v += 0.00071) x.push_back(static_cast<float>(v));
  std::vector<float> y = x;
  exp_all(y.data(), static_cast<Eigen::Index>(y.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    const float f = static_cast<float>(want);
    const double ulp = std::nextafter(f, std::numeric_limits<float>::infinity()) - f;
    worst = std::max(worst, std::abs(y[i] - want) / ulp);
  }
  EXPECT_LE(worst, 1.5) << "ulp over " << x.size() << " arguments";
}

TEST(Vmath, ExpOfExactValuesAndTheClampedEnds) {
  // every length from 0 to 40: whatever mix of SIMD body and tail the compiler makes of the loop
  for (int n = 0; n <= 40; ++n) {
    std::vector<float> y(static_cast<size_t>(n), 0.0f);
    exp_all(y.data(), n);
    for (float v : y) ASSERT_EQ(v, 1.0f) << n;
  }
  float v[5] = {1.0f, -1.0f, -std::numeric_limits<float>::infinity(), -1000.0f, 0.5f};
  exp_all(v, 5);
  EXPECT_NEAR(v[0], 2.7182818f, 3e-7f);
  EXPECT_NEAR(v[1], 0.36787944f, 5e-8f);
  EXPECT_GT(v[2], 0.0f);  // clamped: e^−87.34 ≈ 1.2e−38, a normal float, never a NaN
  EXPECT_LT(v[2], 2e-38f);
  EXPECT_EQ(v[3], v[2]);
  EXPECT_NEAR(v[4], 1.6487213f, 2e-7f);
}

}  // namespace
}  // namespace sf
