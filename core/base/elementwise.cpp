#include "base/elementwise.h"

#include <cassert>
#include <cstdint>

#include "base/threads.h"

namespace sf {

namespace {

using Block = Eigen::Map<Eigen::ArrayXf>;
using ConstBlock = Eigen::Map<const Eigen::ArrayXf>;

// Runs op(a, b, y) over shares of whole 64-float lines of the three blocks (y resized to a's shape).
template <typename Op>
void binary_pass(const Mat& a, const Mat& b, Mat& y, const Op& op) {
  assert(a.rows() == b.rows() && a.cols() == b.cols());
  y.resize(a.rows(), a.cols());  // (nothing to do when y is a or b)
  split_pass(a.size(), 1, 64, [&](int64_t i0, int64_t i1) {
    Block out(y.data() + i0, i1 - i0);
    op(ConstBlock(a.data() + i0, i1 - i0), ConstBlock(b.data() + i0, i1 - i0), out);
  });
}

}  // namespace

void add(const Mat& a, const Mat& b, Mat& y) {
  binary_pass(a, b, y, [](const ConstBlock& u, const ConstBlock& v, Block& out) { out = u + v; });
}

void multiply(const Mat& a, const Mat& b, Mat& y) {
  binary_pass(a, b, y, [](const ConstBlock& u, const ConstBlock& v, Block& out) { out = u * v; });
}

}  // namespace sf
