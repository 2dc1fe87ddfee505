// row_ranges.h — the check that a row kernel's bits do not depend on the range of rows a call
// covers (a split between threads hands a kernel such ranges), shared by the float32 and 16-bit
// matrix-vector tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace sf {

// Rows of the product the check runs: 37, so its parts end inside and on the 16-row blocks.
constexpr int kRangeRows = 37;

// kernel(r0, r1, y) writes y[r0, r1) of a kRangeRows-row product. Its outputs over every row at
// once equal its outputs over [0, 3), [3, 16), [16, 17) and [17, 37), bit for bit.
template <typename Kernel>
void expect_same_bits_in_parts(const Kernel& kernel, const std::string& what) {
  std::vector<float> whole(kRangeRows), parts(kRangeRows);
  kernel(0, kRangeRows, whole.data());
  for (auto [r0, r1] : {std::pair<int, int>{0, 3}, {3, 16}, {16, 17}, {17, kRangeRows}}) kernel(r0, r1, parts.data());
  EXPECT_EQ(whole, parts) << what;
}

}  // namespace sf
